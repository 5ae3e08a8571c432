"""Reading Tikhonov et al.'s supersense feature file: within a size limit, its encoding told,
and its word columns found from the file itself.

The authors' notebook names the 26 flag columns of each word of a pair
(``word{1,2}.attrs.supersenses.is_<class>``) but never the columns holding the words; those are
found here as the non-flag columns holding text (:func:`find_word_columns`), and the reader says
which it used, or stops naming the columns it found when it cannot tell.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
import zipfile
from pathlib import Path

import pandas as pd

from isotropy.sources import decode_text

log = logging.getLogger(__name__)

FLAG_COLUMN = re.compile(r"^(word[12])\.attrs\.supersenses\.is_(.+)$")
WORDS = ("word1", "word2")
# The real file unzips to a few tens of MB; a table this large would take tens of GB as Python
# strings, so the reader stops first (a file this size is damaged or crafted).
MAX_TABLE_BYTES = 256 * 1024**2
SAMPLE_ROWS = 1000
_NOT_WORDS = re.compile(r"^(true|false|[-+]?\d+(\.\d*)?([eE][-+]?\d+)?|nan)$", re.IGNORECASE)


def read_feature_table(path: Path, max_bytes: int = MAX_TABLE_BYTES) -> tuple[pd.DataFrame, str]:
    """The feature table of ``path`` (a zip holding one CSV) with its word columns named
    ``word1``/``word2``, and the label (``zip:member``) errors name."""
    with zipfile.ZipFile(path) as archive:
        members = [
            info
            for info in archive.infolist()
            if info.filename.endswith(".csv")
            and "__MACOSX" not in info.filename
            and not Path(info.filename).name.startswith("._")
        ]
        if len(members) != 1:
            raise ValueError(
                f"{path}: expected one CSV file inside, found "
                f"{[m.filename for m in members] or archive.namelist()}; re-download source supersense_features"
            )
        info = members[0]
        label = f"{path}:{info.filename}"
        too_big = (
            f"{label} unpacks to more than {max_bytes} bytes (the reader's limit, "
            "isotropy.readers.feature_table.MAX_TABLE_BYTES); the real file is a few tens of MB, so "
            "this one is damaged or not Tikhonov et al.'s: re-download source supersense_features"
        )
        if info.file_size > max_bytes:
            raise ValueError(too_big)
        with archive.open(info) as handle:
            data = handle.read(max_bytes + 1)  # the declared size can lie: what is read counts
        if len(data) > max_bytes:
            raise ValueError(too_big)
    text = decode_table(data, label)
    columns = list(pd.read_csv(io.StringIO(text), nrows=0).columns)
    sample = pd.read_csv(io.StringIO(text), nrows=SAMPLE_ROWS, dtype=str, keep_default_na=False)
    chosen = find_word_columns(columns, sample, label)
    table = pd.read_csv(
        io.StringIO(text),
        usecols=lambda c: c in chosen.values() or bool(FLAG_COLUMN.match(c)),
        dtype=str,
        keep_default_na=False,
    )
    return table.rename(columns={column: word for word, column in chosen.items()}), label


def decode_table(data: bytes, label: str) -> str:
    """UTF-8 (with or without a BOM), or UTF-16 with its BOM; anything else is an error naming
    the file, the line and the byte."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return decode_text(data, "utf-16", label)
    return decode_text(data, "utf-8-sig", label)


def find_word_columns(columns: list[str], sample: pd.DataFrame, label: str) -> dict[str, str]:
    """word1/word2 → the file's column holding that word of each pair.

    Candidates are the columns that are not flags and hold text (not numbers or true/false). Each
    word takes the candidate named after it, else the one candidate whose name starts with it,
    else, when exactly two candidates remain, the first and the second in the file's order.
    """
    others = [c for c in columns if not FLAG_COLUMN.match(str(c))]
    candidates = [c for c in others if _holds_text(sample[c])]
    chosen: dict[str, str] = {}
    how = "by name"
    for word in WORDS:
        named = [c for c in candidates if str(c) == word] or [
            c for c in candidates if str(c).startswith(word)
        ]
        if len(named) == 1:
            chosen[word] = named[0]
    if len(chosen) < len(WORDS) or len(set(chosen.values())) < len(WORDS):
        if len(candidates) != len(WORDS):
            raise ValueError(
                f"{label}: cannot tell which columns hold the words of each pair: the text columns "
                f"that are not supersense flags are {candidates} (all non-flag columns: {others}); "
                "expected one per word, named word1/word2 or the only two such columns"
            )
        chosen, how = dict(zip(WORDS, candidates)), "as the only two text columns, in order"
    log.info(
        "supersense (Tikhonov et al.): %s: word columns %r (word1) and %r (word2), found %s",
        label,
        chosen["word1"],
        chosen["word2"],
        how,
    )
    return chosen


def _holds_text(values: pd.Series) -> bool:
    present = values.astype(str).str.strip()
    present = present[present != ""]
    return bool(len(present)) and not present.str.fullmatch(_NOT_WORDS).all()
