"""Supersense data (section 3), data set ``supersense``: Tikhonov et al.'s words with their
supersense flags (``supersense_source: tikhonov``), or the stand-in, their word list labelled from
WordNet (``supersense_source: wordnet``)."""

from __future__ import annotations

import io
import logging
import os
import re
import zipfile

import numpy as np
import pandas as pd

from isotropy.configuration import Config
from isotropy.io import decode_text
from isotropy.readers.pos import open_wordnet
from isotropy.readers.registry import DatasetSpec, multi_label_frame, raw_file, read_utf8_lines
from isotropy.sources.layouts import is_debris

log = logging.getLogger(__name__)

FLAG_COLUMN = re.compile(r"^(word[12])\.attrs\.supersenses\.is_(.+)$")
WORDS = ("word1", "word2")
SAMPLE_ROWS = 1000
SUPERSENSE_FILE = "words_features.zip"
_NOT_WORDS = re.compile(r"^(true|false|[-+]?\d+(\.\d*)?([eE][-+]?\d+)?|nan)$", re.IGNORECASE)


def read_supersense_tikhonov(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """The paper's supersense data: every word of Tikhonov et al.'s pairs (the authors' pinned
    zip holding one UTF-8 CSV), labelled ``noun.<class>`` for each of its flags
    ``word<k>.attrs.supersenses.is_<class>`` set (:func:`supersense_items`)."""
    path = raw_file(raw_dir, SUPERSENSE_FILE)
    with zipfile.ZipFile(path) as archive:
        members = [
            info
            for info in archive.infolist()
            if info.filename.endswith(".csv") and not is_debris(info.filename)
        ]
        if len(members) != 1:
            raise ValueError(
                f"{path}: expected one CSV file inside, found "
                f"{[m.filename for m in members] or archive.namelist()}; re-download source "
                "supersense_features"
            )
        label = f"{path}:{members[0].filename}"  # what errors name
        text = decode_text(archive.read(members[0]), "utf-8-sig", label)
    table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    chosen = find_word_columns(list(table.columns), table.head(SAMPLE_ROWS), label)
    flags = [column for column in table.columns if FLAG_COLUMN.match(column)]
    table = table[[*chosen.values(), *flags]]
    table = table.rename(columns={column: word for word, column in chosen.items()})
    return supersense_items(table, label)


def find_word_columns(columns: list[str], sample: pd.DataFrame, label: str) -> dict[str, str]:
    """word1/word2 → the file's column holding that word of each pair (the authors' notebook
    never names them): among the text columns that are not flags, the one named after the word,
    else the one whose name starts with it, else the only two in the file's order."""
    others = [c for c in columns if not FLAG_COLUMN.match(str(c))]
    candidates = []
    for column in others:  # a column of words: not only booleans, numbers or blanks
        present = sample[column].astype(str).str.strip()
        present = present[present != ""]
        if len(present) and not present.str.fullmatch(_NOT_WORDS).all():
            candidates.append(column)
    chosen: dict[str, str] = {}
    how = "by name"
    for word in WORDS:
        named = [c for c in candidates if str(c) == word]
        named = named or [c for c in candidates if str(c).startswith(word)]
        if len(named) == 1:
            chosen[word] = named[0]
    if len(set(chosen.values())) < len(WORDS):  # a word unnamed, or both in one column
        if len(candidates) != len(WORDS):
            raise ValueError(
                f"{label}: cannot tell which columns hold the words of each pair: the text columns "
                f"that are not supersense flags are {candidates} (all non-flag columns: {others}); "
                "expected one per word, named word1/word2 or the only two such columns"
            )
        chosen, how = dict(zip(WORDS, candidates)), "as the only two text columns, in order"
    found = (label, chosen["word1"], chosen["word2"], how)
    log.info("supersense (Tikhonov et al.): %s: word columns %r (word1) and %r (word2), %s", *found)
    return chosen


_TRUE = {"true", "1", "1.0"}
_FALSE = {"false", "0", "0.0", ""}


def supersense_items(table: pd.DataFrame, label: str) -> pd.DataFrame:
    """The multi-label items of a table of word pairs with their supersense flags, as the paper
    leaves open: a word of several pairs is one item with the union of its flags (disagreements
    counted); words kept as written, stripped; a flag set when true/1, unset when false/0 or
    empty, else an error; words without a flag dropped; items in order of first occurrence."""
    flags: dict[str, dict[str, str]] = {"word1": {}, "word2": {}}
    for column in table.columns:  # the word columns themselves: read_supersense_tikhonov names them
        if match := FLAG_COLUMN.match(column):
            flags[match.group(1)][match.group(2)] = column
    sides = []
    for word_column in WORDS:
        columns = list(flags[word_column].values())
        values = table[columns].apply(lambda col: col.str.strip().str.lower())
        bad = ~values.isin(_TRUE | _FALSE)
        if bad.to_numpy().any():
            row, col = np.argwhere(bad.to_numpy())[0]
            raise ValueError(
                f"{label}, line {row + 2}: {columns[col]} is {table[columns[col]].iloc[row]!r}; "
                "expected true/false, 1/0 or empty"
            )
        own = [
            frozenset(f"noun.{cls}" for cls, on in zip(flags[word_column], flags_row) if on)
            for flags_row in values.isin(_TRUE).to_numpy()
        ]
        sides.append(pd.DataFrame({"word": table[word_column].str.strip(), "own": own}))
    # Row by row, word1 before word2 (a stable sort of the rows): the order of first occurrence.
    items = pd.concat(sides).sort_index(kind="stable")
    occurrences = items[items["word"] != ""].groupby("word", sort=False)["own"]
    labels = occurrences.agg(lambda own: set().union(*own))
    kept = labels[labels.map(bool)].to_dict()
    counts = (len(labels), len(kept), len(labels) - len(kept), (occurrences.nunique() > 1).sum())
    log.info(
        "supersense (Tikhonov et al.): %d words, %d with at least one supersense flag kept, "
        "%d without any dropped, %d whose occurrences disagree (labelled with the union)",
        *counts,
    )
    return multi_label_frame(kept)  # none kept: check_prepared refuses the empty data set


def supersense_sources(config: Config) -> dict[str, str]:
    if config.supersense_source == "wordnet":
        return {"words_dir": "supersense_words", "wordnet_dir": "wordnet"}
    return {"raw_dir": "supersense_features"}


def _supersense_reader(raw_dir=None, words_dir=None, wordnet_dir=None, *, supersense_source: str):
    """Tikhonov et al.'s flags, or their word list labelled with the lexicographer files
    (``noun.animal`` …) of each word's WordNet noun synsets, words without one dropped."""
    if supersense_source != "wordnet":  # the schema allows "tikhonov" or "wordnet" only
        return read_supersense_tikhonov(raw_dir)
    wordnet = open_wordnet(wordnet_dir)
    labels: dict[str, set[str]] = {}
    dropped = []
    for line in read_utf8_lines(raw_file(words_dir, "words.txt")):
        word = line.strip()
        if word and word not in labels:
            if synsets := wordnet.synsets(word, pos="n"):
                labels[word] = {synset.lexname() for synset in synsets}
            else:
                dropped.append(word)
    counts = (len(labels), len(dropped), ", ".join(dropped[:5]))
    log.info("supersense: %d words labelled, %d dropped without a noun synset (e.g. %s)", *counts)
    return multi_label_frame(labels)


DATASETS = {
    "supersense": DatasetSpec(
        _supersense_reader,
        sources=supersense_sources,
        unit="word",
        layouts={
            "raw_dir": "supersense_features",
            "words_dir": "supersense_words",
            "wordnet_dir": "wordnet",
        },
        option_keys=("supersense_source",),
        options=lambda config: {"supersense_source": config.supersense_source},
    )
}
