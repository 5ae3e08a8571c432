"""Static word vectors (word2vec, GloVe) looked up for the texts of a prepared table; words
missing from the vocabulary are reported and left out."""

from __future__ import annotations

import logging
import os
import re

import numpy as np
import pandas as pd

from isotropy.embeddings.sentences import unique_texts, write_index
from isotropy.io import atomic_path

log = logging.getLogger(__name__)


def lookup_word_vectors(
    table: pd.DataFrame,
    keyed_vectors,
    vectors_path: str | os.PathLike,
    index_path: str | os.PathLike,
    source: str | os.PathLike = "the word-vector file",
) -> tuple[int, list[str]]:
    """Look up every unique text of ``table`` as a word; write found vectors and their index.

    Tries the word as given, then lower-cased, then, in a part-of-speech-tagged vocabulary such as
    the NLPL models' (``dog_NOUN``), the word's most frequent tagged entry. Returns (rows written,
    words not found).
    """
    texts = unique_texts(table)
    tagged = _tagged_entries(keyed_vectors)
    found: list[str] = []
    rows: list[np.ndarray] = []
    missing: list[str] = []
    by_tag = 0
    for word in texts:
        key = word if word in keyed_vectors.key_to_index else word.lower()
        if key not in keyed_vectors.key_to_index and key in tagged:
            key, by_tag = tagged[key], by_tag + 1
        if key in keyed_vectors.key_to_index:
            found.append(word)
            rows.append(np.asarray(keyed_vectors[key], dtype=np.float32))
        else:
            missing.append(word)
    if not found:
        raise ValueError(
            f"none of the {len(texts)} words is in the word-vector vocabulary; wrong vector file?"
        )
    if by_tag:
        log.info(
            "%d words found through their most frequent part-of-speech-tagged entry (word_TAG)",
            by_tag,
        )
    if missing:
        log.warning(
            "%d of %d words are out of vocabulary and dropped (e.g. %s)",
            len(missing),
            len(texts),
            missing[:5],
        )
    matrix = np.stack(rows)
    broken = [word for word, row in zip(found, matrix) if not np.isfinite(row).all()]
    if broken:  # named here: the metrics downstream can only count NaN, not name the words
        raise ValueError(
            f"{source}: the vectors of {len(broken)} word(s) hold NaN or infinite values "
            f"({', '.join(map(repr, broken[:5]))}{', ...' if len(broken) > 5 else ''}); "
            "the file is damaged: re-fetch it (snakemake --forcerun download_source)"
        )
    with atomic_path(vectors_path) as tmp:
        np.save(tmp, matrix)
    write_index(found, index_path)
    return len(found), missing


_TAGGED = re.compile(r"^(.+)_([A-Z]+)$")


def _tagged_entries(keyed_vectors) -> dict[str, str]:
    """Lower-cased word → its most frequent ``word_TAG`` key, when the vocabulary is tagged ({} otherwise).

    word2vec files list keys by frequency, so the first key seen for a word is its most frequent.
    """
    keys = keyed_vectors.index_to_key
    if not any(_TAGGED.match(key) for key in keys[:100]):
        return {}
    entries: dict[str, str] = {}
    for key in keys:
        match = _TAGGED.match(key)
        if match:
            entries.setdefault(match.group(1).lower(), key)
    return entries
