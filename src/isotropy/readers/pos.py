"""Part-of-speech data (section 3), data set ``pos``: CoDWoE's English words with their parts of
speech (``pos_source: codwoe``), or the stand-in, the most frequent words of a word-vector source
labelled from WordNet (``pos_source: wordnet``)."""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.configuration import Config
from isotropy.configuration.data import WordVectors
from isotropy.embeddings.texts import load_word_vectors
from isotropy.io import decode_text
from isotropy.readers.registry import (
    DatasetSpec,
    multi_label_frame,
    raw_file,
    source_files,
    word_vectors_file,
)

log = logging.getLogger(__name__)

# CoDWoE spells POS out; WordNet uses n/v/a/s/r (s: satellite adjective, merged with a).
WORDNET_POS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}


def read_pos_codwoe(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """CoDWoE English words, each labelled with its parts of speech over all its glosses."""
    files = [p for p in source_files(raw_dir) if p.suffix in {".json", ".csv"}]
    labels: dict[str, set[str]] = defaultdict(set)
    from isotropy import trust  # here: the device has no jsonschema

    codwoe_item = trust.validator("codwoe_item")
    for path in files:
        if path.suffix == ".csv":  # the full release; the trial files are JSON lists
            items = pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")
        else:
            try:  # anything but a list of objects: an item is named below
                items = json.loads(decode_text(path.read_bytes(), "utf-8", str(path)))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        for index, item in enumerate(items):
            if problem := trust.record_problem(item, codwoe_item):
                named = isinstance(item, dict) and item.get("id")
                raise ValueError(
                    f"{path}, item {index}" + (f" (id {named!r})" if named else "") + f": {problem}"
                    "; the CoDWoE training files lack word and pos, use the release with words "
                    "and parts of speech (trial, reference or full data)"
                )
            labels[item["word"].strip()].add(item["pos"].strip())
    log.info("pos (codwoe): %d words from %d file(s)", len(labels), len(files))
    return multi_label_frame(labels)


def pos_standin(vocabulary: Iterable[str], wordnet, size: int) -> pd.DataFrame:
    """The stand-in for CoDWoE POS: the first (most frequent) ``size`` words of ``vocabulary``
    that WordNet knows as headwords, each labelled with its WordNet parts of speech."""
    labels: dict[str, set[str]] = {}
    for word in vocabulary:
        if len(labels) == size:
            break
        if word in labels:
            continue
        # as a headword only (nltk's lemmas: the synsets' lemmas named as the word, any case): no
        # morphological base-form lookup
        tags = {WORDNET_POS[lemma.synset().pos()] for lemma in wordnet.lemmas(word)}
        if tags:
            labels[word] = tags
    if len(labels) < size:
        message = "pos stand-in: only %d words of the vocabulary are WordNet headwords (of %d)"
        log.warning(message, len(labels), size)
    return multi_label_frame(labels)


def pos_sources(config: Config) -> dict[str, str]:
    if config.pos_source != "wordnet":
        return {"raw_dir": "codwoe"}
    # The stand-in's vocabulary: the pos setup's encoder, else the first word-vector encoder.
    setup = config.main.setups.get("pos")
    for name in [setup.encoder if setup else None, *config.encoders]:
        if isinstance(encoder := config.encoders.get(name or ""), WordVectors):
            return {"vectors_dir": encoder.source, "wordnet_dir": "wordnet"}
    raise ValueError(
        "pos_source 'wordnet' needs a word-vector encoder in config 'encoders' (kind: word-vectors)"
    )


def pos_options(config: Config) -> dict[str, Any]:
    # Only the stand-in depends on its size: with codwoe a changed size triggers no re-run.
    if config.pos_source == "wordnet":
        return {"pos_source": "wordnet", "pos_standin_size": config.pos_standin_size}
    return {"pos_source": config.pos_source}


def _pos_reader(
    raw_dir=None, vectors_dir=None, wordnet_dir=None, *, pos_source: str, pos_standin_size: int = 0
):
    """CoDWoE's data, or :func:`pos_standin` of a fetched word-vector source and WordNet."""
    if pos_source != "wordnet":  # the schema allows "codwoe" or "wordnet" only
        return read_pos_codwoe(raw_dir)
    path, wordnet = word_vectors_file(vectors_dir), open_wordnet(wordnet_dir)
    # Most frequent words are mostly WordNet headwords: read a prefix of the file first, and the
    # whole vocabulary only when the prefix falls short.
    vectors = load_word_vectors(path, limit=4 * pos_standin_size)
    table = pos_standin(vectors.index_to_key, wordnet, pos_standin_size)
    if len(table) < pos_standin_size and len(vectors) == 4 * pos_standin_size:
        table = pos_standin(load_word_vectors(path).index_to_key, wordnet, pos_standin_size)
    message = "pos: the WordNet stand-in (config pos_source: wordnet), NOT CoDWoE: %d most "
    log.warning(message + "frequent WordNet headwords of %s", len(table), vectors_dir)
    return table


DATASETS = {
    "pos": DatasetSpec(
        _pos_reader,
        sources=pos_sources,
        unit="word",
        layouts={"raw_dir": "codwoe", "vectors_dir": "word_vectors", "wordnet_dir": "wordnet"},
        option_keys=("pos_source", "pos_standin_size"),
        options=pos_options,
    )
}


def open_wordnet(raw_dir: str | os.PathLike):
    """nltk's WordNet reader on ``<raw_dir>/corpora/wordnet.zip`` (added to nltk's data path,
    which is all nltk opens), whatever ``NLTK_DATA`` says."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    raw_file(raw_dir, "corpora/wordnet.zip")
    root = str(Path(raw_dir).resolve())
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    pointer = nltk.data.find("corpora/wordnet.zip/wordnet/", paths=[root])
    with warnings.catch_warnings():
        # No Open Multilingual Wordnet on purpose: English lemmas only.
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return WordNetCorpusReader(pointer, None)
