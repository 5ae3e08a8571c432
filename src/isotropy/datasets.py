"""Readers for every raw source, all returning one table shape.

A prepared data set is a pandas DataFrame (stored as ``resources/data/<dataset>.parquet``) with
``text`` (str), ``text_pair`` (str, pair tasks only) and either ``label`` (str, single-label
tasks) or ``labels`` (sorted list of str, multi-label tasks). Surrounding whitespace of texts is
stripped; labels are strings.

:data:`DATASETS` is the table the workflow is driven by: data set → the sources it needs (see
:mod:`isotropy.download`) and the function that builds it from their raw folders.

Malformed input (a bad row, a wrong encoding, a missing file) raises ``ValueError`` or
``FileNotFoundError`` naming the file and line.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isotropy.download import (
    HUB_FILE,
    MIRROR_ENV,
    RAW_ROOT,
    check_sources_available,
    decode_text,
    load_word_vectors,
    missing_mirror_files,
    resolve_mirror,
    source_files,
    source_outputs,
    word_vectors_file,
)
from isotropy.io import atomic_path
from isotropy.istar.tasks import TASKS, TaskSpec, task_spec
from isotropy.workflow.paths import MANIFEST_NAME

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Small shared helpers


def _read_utf8_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; re-run the download of its source")
    # Lines end at "\n" only: str.splitlines() would also break inside a field at U+2028, U+0085,
    # form feeds and other separators that real corpora contain.
    lines = decode_text(path.read_bytes(), "utf-8", str(path)).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for lineno, line in enumerate(lines, 1):
        if "\0" in line:  # never text: a damaged or binary file, and it would be embedded as is
            raise ValueError(
                f"{path}, line {lineno}: NUL byte at column {line.index(chr(0)) + 1}; the file is damaged "
                "or not text: re-fetch its source, or fix the line"
            )
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _raw_file(raw_dir: str | os.PathLike, name: str) -> Path:
    path = Path(raw_dir) / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; re-run the download of its source")
    return path


def _multi_label_frame(labels_by_word: Mapping[str, Iterable[str]]) -> pd.DataFrame:
    words = list(labels_by_word)
    return pd.DataFrame({"text": words, "labels": [sorted(set(labels_by_word[w])) for w in words]})


def write_dataset(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Check ``table`` has the prepared-data shape and write it as parquet, atomically."""
    validate_table(table)
    with atomic_path(path) as tmp:
        table.to_parquet(tmp, index=False)


def validate_table(table: pd.DataFrame) -> None:
    """Raise ValueError unless ``table`` has the shape every prepared data set shares."""
    columns = set(table.columns)
    label_columns = columns & {"label", "labels"}
    if (
        "text" not in columns
        or len(label_columns) != 1
        or columns - {"text", "text_pair", "label", "labels"}
    ):
        raise ValueError(
            f"prepared table has columns {sorted(columns)}; needed: text, optional text_pair, and exactly one of label/labels"
        )
    if len(table) == 0:
        raise ValueError("prepared table is empty")
    for column in columns - {"labels"}:
        bad = table[column].map(lambda v: not isinstance(v, str))
        if bad.any():
            raise ValueError(
                f"column {column!r} must hold strings; row {int(bad.idxmax())} holds {table[column][bad.idxmax()]!r}"
            )
    if "labels" in columns:
        bad = table["labels"].map(lambda v: len(v) == 0 or not all(isinstance(x, str) for x in v))
        if bad.any():
            raise ValueError(
                f"column 'labels' must hold non-empty lists of strings; row {int(bad.idxmax())} does not"
            )


# ---------------------------------------------------------------------------------------------
# Section 3 data sets

POLARITY_LABELS = {"rt-polarity.pos": "positive", "rt-polarity.neg": "negative"}


def read_polarity(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """Pang & Lee sentence polarity v1.0: one sentence per line, label from the file (10,662 rows)."""
    rows = []
    for filename, label in POLARITY_LABELS.items():
        path = _raw_file(raw_dir, filename)
        for lineno, line in enumerate(_read_utf8_lines(path), 1):
            text = line.strip()
            if not text:
                raise ValueError(
                    f"{path}, line {lineno}: empty sentence; expected one sentence per line"
                )
            rows.append((text, label))
    return pd.DataFrame(rows, columns=["text", "label"])


SNLI_LABELS = ("entailment", "neutral", "contradiction")


def read_snli(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """SNLI 1.0 validation pairs with a gold label (9,842 rows); the ``-`` (no consensus) ones dropped."""
    path = _raw_file(raw_dir, "snli_1.0_dev.jsonl")
    rows, unlabelled = [], 0
    for lineno, line in enumerate(_read_utf8_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            label, premise, hypothesis = (
                record["gold_label"],
                record["sentence1"],
                record["sentence2"],
            )
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from exc
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"{path}, line {lineno}: expected an object with gold_label, sentence1, sentence2"
            ) from exc
        if label == "-":
            unlabelled += 1
            continue
        if label not in SNLI_LABELS:
            raise ValueError(
                f"{path}, line {lineno}: gold_label {label!r} is not one of {SNLI_LABELS} or '-'"
            )
        if not isinstance(premise, str) or not isinstance(hypothesis, str):
            raise ValueError(f"{path}, line {lineno}: sentence1/sentence2 must be strings")
        rows.append((premise.strip(), hypothesis.strip(), label))
    if unlabelled:
        log.info("snli: dropped %d pairs without a gold label", unlabelled)
    return pd.DataFrame(rows, columns=["text", "text_pair", "label"])


def open_wordnet(raw_dir: str | os.PathLike):
    """nltk's WordNet reader on ``<raw_dir>/corpora/wordnet.zip``, whatever ``NLTK_DATA`` says.

    nltk only opens files under its data path (``nltk.data.path``), so ``raw_dir`` is added to it
    (the same as ``NLTK_DATA=<raw_dir>``).
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    _raw_file(raw_dir, "corpora/wordnet.zip")
    root = str(Path(raw_dir).resolve())
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    pointer = nltk.data.find("corpora/wordnet.zip/wordnet/", paths=[root])
    with warnings.catch_warnings():
        # No Open Multilingual Wordnet on purpose: English lemmas only.
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return WordNetCorpusReader(pointer, None)


def read_supersense(words_dir: str | os.PathLike, wordnet_dir: str | os.PathLike) -> pd.DataFrame:
    """Tikhonov et al.'s word list, each word labelled with the supersenses of its noun synsets.

    A supersense is a WordNet lexicographer file (``noun.animal``, ``noun.artifact``, …, 26 in
    all); a word's label set is the lexicographer files of all its noun synsets (nltk's lookup,
    which also tries the word's base form). Words without a noun synset are dropped and counted.
    """
    path = _raw_file(words_dir, "words.txt")
    wordnet = open_wordnet(wordnet_dir)
    labels: dict[str, set[str]] = {}
    dropped = []
    for lineno, line in enumerate(_read_utf8_lines(path), 1):
        word = line.strip()
        if not word:
            continue
        if any(ch.isspace() for ch in word):
            raise ValueError(f"{path}, line {lineno}: {word!r} is not a single word")
        if word in labels:
            continue
        synsets = wordnet.synsets(word, pos="n")
        if not synsets:
            dropped.append(word)
            continue
        labels[word] = {synset.lexname() for synset in synsets}
    log.info(
        "supersense: %d words labelled, %d dropped without a noun synset (e.g. %s)",
        len(labels),
        len(dropped),
        ", ".join(dropped[:5]),
    )
    return _multi_label_frame(labels)


# The 26 WordNet noun lexicographer files (supersenses) of Tikhonov et al.'s feature file: its
# columns word1.attrs.supersenses.is_<class> / word2.attrs.supersenses.is_<class>.
SUPERSENSE_CLASSES = (
    "Tops", "act", "animal", "artifact", "attribute", "body", "cognition", "communication",
    "event", "feeling", "food", "group", "location", "motive", "object", "person", "phenomenon",
    "plant", "possession", "process", "quantity", "relation", "shape", "state", "substance", "time",
)  # fmt: skip
SUPERSENSE_FILE = "words_features.zip"
_SUPERSENSE_COLUMN = re.compile(r"^(word[12])\.attrs\.supersenses\.is_(.+)$")
_TRUE = {"true", "1", "1.0"}
_FALSE = {"false", "0", "0.0", ""}


def read_supersense_tikhonov(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """The paper's supersense data: Tikhonov et al.'s words, each with its supersense flags.

    ``words_features.zip`` (altsoph/modality_shifts) holds one CSV of word pairs: ``word1``,
    ``word2`` and, per word, 26 flags ``word<k>.attrs.supersenses.is_<class>``. Every word of
    either column becomes one item labelled ``noun.<class>`` for each flag set (the names WordNet
    gives its lexicographer files, as the WordNet stand-in labels them). The paper leaves open,
    and this reader chooses:

    - a word that occurs in several pairs is one item, labelled with the union of its flags
      over all its occurrences (occurrences that disagree are counted in the log);
    - words are kept as written (surrounding whitespace stripped, case kept);
    - a flag is set when it reads true/1, unset when false/0 or empty; anything else is an error;
    - words with no flag set are dropped (counted in the log);
    - items are in order of first occurrence (row by row, word1 before word2).
    """
    path = _raw_file(raw_dir, SUPERSENSE_FILE)
    import zipfile

    with zipfile.ZipFile(path) as archive:
        members = [
            m
            for m in archive.namelist()
            if m.endswith(".csv") and "__MACOSX" not in m and not Path(m).name.startswith("._")
        ]
        if len(members) != 1:
            raise ValueError(
                f"{path}: expected one CSV file inside, found {members or archive.namelist()}; "
                "re-download source supersense_features"
            )
        label = f"{path}:{members[0]}"
        with archive.open(members[0]) as handle:
            table = pd.read_csv(
                handle,
                usecols=lambda c: c in ("word1", "word2") or bool(_SUPERSENSE_COLUMN.match(c)),
                dtype=str,
                keep_default_na=False,
                encoding="utf-8",
            )
    return supersense_items(table, label)


def supersense_items(table: pd.DataFrame, label: str) -> pd.DataFrame:
    """The multi-label items of a table of word pairs with their supersense flags (see above)."""
    table = table.fillna("").astype(str)
    flags: dict[str, dict[str, str]] = {"word1": {}, "word2": {}}
    for column in table.columns:
        if match := _SUPERSENSE_COLUMN.match(column):
            flags[match.group(1)][match.group(2)] = column
    for word in ("word1", "word2"):
        if word not in table.columns:
            raise ValueError(
                f"{label}: column {word!r} is missing; expected Tikhonov et al.'s word pairs"
            )
        missing = sorted(set(SUPERSENSE_CLASSES) - set(flags[word]))
        unknown = sorted(set(flags[word]) - set(SUPERSENSE_CLASSES))
        if missing or unknown:
            raise ValueError(
                f"{label}: the {word} supersense columns lack {missing} and add {unknown}; "
                f"expected {word}.attrs.supersenses.is_<class> for the 26 WordNet noun supersenses"
            )
    labels: dict[str, set[str]] = {}
    first: dict[str, frozenset[str]] = {}
    disagreeing: set[str] = set()
    for word_column in ("word1", "word2"):
        columns = [flags[word_column][cls] for cls in SUPERSENSE_CLASSES]
        values = table[columns].apply(lambda col: col.str.strip().str.lower())
        bad = ~values.isin(_TRUE | _FALSE)
        if bad.to_numpy().any():
            row, col = np.argwhere(bad.to_numpy())[0]
            raise ValueError(
                f"{label}, line {row + 2}: {columns[col]} is {table[columns[col]].iloc[row]!r}; "
                "expected true/false, 1/0 or empty"
            )
        table[f"_{word_column}_set"] = [
            frozenset(f"noun.{cls}" for cls, on in zip(SUPERSENSE_CLASSES, flags_row) if on)
            for flags_row in values.isin(_TRUE).to_numpy()
        ]
    # Row by row, word1 before word2: the order of first occurrence.
    for w1, s1, w2, s2 in zip(
        table["word1"], table["_word1_set"], table["word2"], table["_word2_set"]
    ):
        for word, own in ((w1.strip(), s1), (w2.strip(), s2)):
            if not word:
                continue
            if first.setdefault(word, own) != own:
                disagreeing.add(word)
            labels.setdefault(word, set()).update(own)
    kept = {word: cls for word, cls in labels.items() if cls}
    log.info(
        "supersense (Tikhonov et al.): %d words, %d with at least one supersense flag kept, "
        "%d without any dropped, %d whose occurrences disagree (labelled with the union)",
        len(labels),
        len(kept),
        len(labels) - len(kept),
        len(disagreeing),
    )
    if not kept:
        raise ValueError(f"{label}: no word has a supersense flag set")
    return _multi_label_frame(kept)


# CoDWoE spells POS out; WordNet uses n/v/a/s/r (s: satellite adjective, merged with a).
WORDNET_POS = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}


def read_codwoe_items(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Items of one CoDWoE English file: a JSON list of objects, or the CSV of the full release."""
    path = Path(path)
    if path.suffix == ".csv":
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a readable CSV file ({exc})") from exc
        return frame.to_dict("records")
    text = decode_text(path.read_bytes(), "utf-8", str(path))
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(items, list):
        raise ValueError(f"{path}: expected a JSON list of items, found {type(items).__name__}")
    return items


def read_pos_codwoe(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """CoDWoE English words, each labelled with the set of its parts of speech over all its glosses."""
    files = [p for p in source_files(raw_dir) if p.suffix in {".json", ".csv"}]
    if not files:
        raise FileNotFoundError(f"no CoDWoE .json/.csv file in {raw_dir}")
    labels: dict[str, set[str]] = defaultdict(set)
    for path in files:
        for index, item in enumerate(read_codwoe_items(path)):
            where = f"{path}, item {index}" + (
                f" (id {item.get('id')!r})" if isinstance(item, dict) and item.get("id") else ""
            )
            if not isinstance(item, dict) or "word" not in item or "pos" not in item:
                keys = sorted(item) if isinstance(item, dict) else type(item).__name__
                raise ValueError(
                    f"{where}: expected 'word' and 'pos' keys, found {keys}; the CoDWoE training files lack them, "
                    "use the release with words and parts of speech (trial, reference or full data)"
                )
            word, pos = item["word"], item["pos"]
            if (
                not isinstance(word, str)
                or not word.strip()
                or not isinstance(pos, str)
                or not pos.strip()
            ):
                raise ValueError(
                    f"{where}: word and pos must be non-empty strings, found {word!r}, {pos!r}"
                )
            labels[word.strip()].add(pos.strip())
    log.info("pos (codwoe): %d words from %d file(s)", len(labels), len(files))
    return _multi_label_frame(labels)


def wordnet_pos(wordnet, word: str) -> set[str]:
    """Parts of speech of ``word`` as a WordNet headword (no morphological base-form lookup)."""
    target = word.lower()
    return {
        WORDNET_POS[synset.pos()]
        for synset in wordnet.synsets(word)
        if any(name.lower() == target for name in synset.lemma_names())
    }


def pos_standin(vocabulary: Iterable[str], wordnet, size: int) -> pd.DataFrame:
    """The documented stand-in for CoDWoE POS: the first ``size`` words of ``vocabulary`` that
    WordNet knows as headwords, each labelled with the set of its WordNet parts of speech.

    ``vocabulary`` is in frequency order (word-vector files are), so these are the most frequent.
    """
    labels: dict[str, set[str]] = {}
    for word in vocabulary:
        if len(labels) == size:
            break
        if word in labels:
            continue
        tags = wordnet_pos(wordnet, word)
        if tags:
            labels[word] = tags
    if len(labels) < size:
        log.warning(
            "pos stand-in: only %d words of the vocabulary are WordNet headwords (asked for %d)",
            len(labels),
            size,
        )
    return _multi_label_frame(labels)


def read_pos_wordnet(
    vectors_dir: str | os.PathLike, wordnet_dir: str | os.PathLike, size: int
) -> pd.DataFrame:
    """POS stand-in built from a fetched word-vector source and WordNet (see :func:`pos_standin`)."""
    path, wordnet = word_vectors_file(vectors_dir), open_wordnet(wordnet_dir)
    # Most frequent words are mostly WordNet headwords: read a prefix of the file first, and the
    # whole vocabulary only when the prefix falls short.
    vectors = load_word_vectors(path, limit=4 * size)
    table = pos_standin(vectors.index_to_key, wordnet, size)
    if len(table) < size and len(vectors) == 4 * size:
        table = pos_standin(load_word_vectors(path).index_to_key, wordnet, size)
    log.warning(
        "pos: using the WordNet stand-in (config pos_source: wordnet), NOT CoDWoE: %d most frequent "
        "WordNet headwords of %s",
        len(table),
        vectors_dir,
    )
    return table


# ---------------------------------------------------------------------------------------------
# GLUE training splits (appendix A)


@dataclass(frozen=True)
class GlueFormat:
    """Columns of a GLUE task's tsv files: by header name, or by position when there is no header."""

    text: str | int
    label: str | int
    text_pair: str | int | None = None
    header: bool = True
    width: int | None = None  # number of fields in a header-less row
    labels: tuple[str, ...] = ("0", "1")  # the task's label domain, as written in the file


GLUE_FORMATS: dict[str, GlueFormat] = {
    # CoLA: source, label, original annotation, sentence; no header.
    "cola": GlueFormat(text=3, label=1, header=False, width=4),
    "sst2": GlueFormat(text="sentence", label="label"),
    "mrpc": GlueFormat(text="#1 String", text_pair="#2 String", label="Quality"),
    "qqp": GlueFormat(text="question1", text_pair="question2", label="is_duplicate"),
    "mnli": GlueFormat(
        text="sentence1",
        text_pair="sentence2",
        label="gold_label",
        labels=("contradiction", "entailment", "neutral"),
    ),
    "qnli": GlueFormat(
        text="question",
        text_pair="sentence",
        label="label",
        labels=("entailment", "not_entailment"),
    ),
    "rte": GlueFormat(
        text="sentence1",
        text_pair="sentence2",
        label="label",
        labels=("entailment", "not_entailment"),
    ),
    "wnli": GlueFormat(text="sentence1", text_pair="sentence2", label="label"),
}
GLUE_TASKS = tuple(GLUE_FORMATS)


def read_glue(task: str, raw_dir: str | os.PathLike, file_name: str = "train.tsv") -> pd.DataFrame:
    """A GLUE task's split from its tsv file (tab-separated, no quoting; train.tsv by default).

    Items without a label are dropped. Labels are kept as the strings in the file; one outside the
    task's label domain is an error naming its line (it would otherwise become a class of its own).
    """
    if task not in GLUE_FORMATS:
        raise ValueError(f"unknown GLUE task {task!r}; expected one of {GLUE_TASKS}")
    spec = GLUE_FORMATS[task]
    path = _raw_file(raw_dir, file_name)
    lines = _read_utf8_lines(path)
    if lines and lines[0].startswith("\ufeff"):  # GLUE's MRPC dev.tsv starts with a byte-order mark
        lines[0] = lines[0][1:]
    if spec.header:
        if not lines:
            raise ValueError(f"{path} is empty; expected a header line")
        header = lines[0].split("\t")
        width = len(header)
        try:
            index = {
                key: header.index(key)
                for key in (spec.text, spec.text_pair, spec.label)
                if key is not None
            }
        except ValueError as exc:
            raise ValueError(
                f"{path}, line 1: header {header} lacks a column ({exc}); is this the {task} {file_name}?"
            ) from exc
        body, first = lines[1:], 2
    else:
        width = spec.width
        index = {key: key for key in (spec.text, spec.text_pair, spec.label) if key is not None}
        body, first = lines, 1
    rows, unlabelled = [], 0
    for lineno, line in enumerate(body, first):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != width:
            raise ValueError(
                f"{path}, line {lineno}: expected {width} tab-separated fields, found {len(fields)}"
            )
        label = fields[index[spec.label]].strip()
        if label in {"", "-"}:
            unlabelled += 1
            continue
        if label not in spec.labels:
            raise ValueError(
                f"{path}, line {lineno}: label {label!r} is not a {task} label (one of {', '.join(spec.labels)}); "
                "fix or remove the row, or re-download the task"
            )
        row = [fields[index[spec.text]].strip()]
        if spec.text_pair is not None:
            row.append(fields[index[spec.text_pair]].strip())
        rows.append((*row, label))
    if unlabelled:
        log.info("%s: dropped %d items without a label", task, unlabelled)
    columns = ["text", "text_pair", "label"] if spec.text_pair is not None else ["text", "label"]
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------------------------
# The table driving the workflow


@dataclass(frozen=True)
class DatasetSpec:
    """How to build one data set: the source roles it needs and the reader over their raw folders.

    ``sources`` maps a role (the reader's argument) to a source name, or to a function of the
    config giving it (the word-vector source follows the encoder config).
    """

    sources: Callable[[Mapping[str, Any]], dict[str, str]]
    reader: Callable[..., pd.DataFrame]
    options: Callable[[Mapping[str, Any]], dict[str, Any]] = field(default=lambda config: {})
    description: str = ""


def word_vector_source(config: Mapping[str, Any]) -> str:
    """The source of the word vectors used with the POS data (its setup's encoder, else the first word-vector encoder)."""
    encoders = config.get("encoders", {})
    setup = config.get("main", {}).get("setups", {}).get("pos", {})
    candidates = [setup.get("encoder")] + list(encoders)
    for name in candidates:
        if name in encoders and encoders[name].get("kind") == "word-vectors":
            return encoders[name]["source"]
    raise ValueError(
        "pos_source 'wordnet' needs a word-vector encoder in config 'encoders' (kind: word-vectors)"
    )


def _pos_sources(config: Mapping[str, Any]) -> dict[str, str]:
    if config.get("pos_source", "codwoe") == "wordnet":
        return {"vectors_dir": word_vector_source(config), "wordnet_dir": "wordnet"}
    return {"raw_dir": "codwoe"}


def _pos_reader(
    raw_dir=None, vectors_dir=None, wordnet_dir=None, *, pos_source: str, pos_standin_size: int = 0
):
    if pos_source == "wordnet":
        return read_pos_wordnet(vectors_dir, wordnet_dir, pos_standin_size)
    if pos_source == "codwoe":
        return read_pos_codwoe(raw_dir)
    raise ValueError(f"pos_source must be 'codwoe' or 'wordnet', found {pos_source!r}")


def _supersense_sources(config: Mapping[str, Any]) -> dict[str, str]:
    if config.get("supersense_source", "tikhonov") == "wordnet":
        return {"words_dir": "supersense_words", "wordnet_dir": "wordnet"}
    return {"raw_dir": "supersense_features"}


def _supersense_reader(raw_dir=None, words_dir=None, wordnet_dir=None, *, supersense_source: str):
    if supersense_source == "wordnet":
        return read_supersense(words_dir, wordnet_dir)
    if supersense_source == "tikhonov":
        return read_supersense_tikhonov(raw_dir)
    raise ValueError(
        f"supersense_source must be 'tikhonov' or 'wordnet', found {supersense_source!r}"
    )


def _pos_options(config: Mapping[str, Any]) -> dict[str, Any]:
    source = config.get("pos_source", "codwoe")
    options: dict[str, Any] = {"pos_source": source}
    if source == "wordnet":
        # Only the stand-in depends on its size: with codwoe a changed size triggers no re-run.
        options["pos_standin_size"] = int(config.get("pos_standin_size", 11462))
    return options


DATASETS: dict[str, DatasetSpec] = {
    "polarity": DatasetSpec(
        lambda c: {"raw_dir": "polarity"},
        read_polarity,
        description="Pang & Lee sentence polarity v1.0",
    ),
    "snli": DatasetSpec(
        lambda c: {"raw_dir": "snli"},
        read_snli,
        description="SNLI 1.0 validation, gold-labelled pairs",
    ),
    "supersense": DatasetSpec(
        _supersense_sources,
        _supersense_reader,
        lambda c: {"supersense_source": c.get("supersense_source", "tikhonov")},
        description="Tikhonov et al. (2023) words with their noun supersenses (multi-label)",
    ),
    "pos": DatasetSpec(
        _pos_sources,
        _pos_reader,
        _pos_options,
        description="CoDWoE English words with their POS (multi-label)",
    ),
    **{
        task: DatasetSpec(
            (lambda t: lambda c: {"raw_dir": f"glue_{t}"})(task),
            (lambda t: lambda raw_dir: read_glue(t, raw_dir))(task),
            description=f"GLUE {task} training split",
        )
        for task in GLUE_TASKS
    },
}


def _spec(dataset: str) -> DatasetSpec:
    if dataset not in DATASETS:
        raise ValueError(f"unknown data set {dataset!r}; expected one of {sorted(DATASETS)}")
    return DATASETS[dataset]


def dataset_sources(dataset: str, config: Mapping[str, Any]) -> dict[str, str]:
    """Reader argument → source name, for ``dataset`` under ``config``."""
    return _spec(dataset).sources(config)


def required_sources(dataset: str, config: Mapping[str, Any]) -> list[str]:
    """Names of the sources ``dataset`` is built from (keys of config ``sources``)."""
    names = list(dict.fromkeys(dataset_sources(dataset, config).values()))
    unknown = [n for n in names if n not in config.get("sources", {})]
    if unknown:
        raise ValueError(
            f"data set {dataset!r} needs source(s) {unknown}, which config 'sources' lacks"
        )
    return names


def dataset_inputs(
    dataset: str, config: Mapping[str, Any], root: str | os.PathLike = RAW_ROOT
) -> dict[str, str]:
    """Snakemake inputs of ``dataset``: source name → that source's manifest.

    With a mirror set, a needed source the mirror lacks fails here, while the DAG is built, with
    a message naming the missing file (and, for GLUE, the tasks that are available).
    """
    names = required_sources(dataset, config)
    check_sources_available(names, config)
    return {name: source_outputs(name, root)[0] for name in names}


def dataset_options(dataset: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Config values the building of ``dataset`` depends on (besides its sources)."""
    return _spec(dataset).options(config)


def prepare_dataset(
    dataset: str,
    raw_dirs: Mapping[str, str | os.PathLike],
    sources: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Build ``dataset`` from fetched sources.

    ``raw_dirs`` maps source name → its raw folder; ``sources`` maps reader argument → source
    name (from :func:`dataset_sources`); ``options`` from :func:`dataset_options`.
    """
    spec = _spec(dataset)
    missing = [name for name in sources.values() if name not in raw_dirs]
    if missing:
        raise ValueError(f"data set {dataset!r} needs the raw folders of {missing}")
    kwargs = {role: Path(raw_dirs[name]) for role, name in sources.items()}
    table = spec.reader(**kwargs, **dict(options or {}))
    check_prepared(
        dataset, table, [Path(raw_dirs[name]) for name in dict.fromkeys(sources.values())]
    )
    validate_table(table)
    log.info("%s: %d items, columns %s", dataset, len(table), list(table.columns))
    return table


def check_prepared(dataset: str, table: pd.DataFrame, raw_dirs: Sequence[Path]) -> None:
    """Refuse a table no study can use, naming the raw files it came from: no rows, one class,
    or a NUL byte in a text (never text; it would be embedded as is)."""
    files = ", ".join(str(path) for raw_dir in raw_dirs for path in _listed_files(raw_dir))
    remedy = (
        f"check or re-fetch these raw files ({files}), e.g. snakemake --forcerun download_source"
    )
    if len(table) == 0:
        raise ValueError(f"data set {dataset!r} has no rows: its raw files yield none; {remedy}")
    for column in ("text", "text_pair"):
        if column in table.columns:
            bad = table[column].map(lambda v: isinstance(v, str) and "\0" in v)
            if bad.any():
                raise ValueError(
                    f"data set {dataset!r}: item {int(bad.to_numpy().argmax())} holds a NUL byte in "
                    f"{column!r}; {remedy}"
                )
    if "label" in table.columns:
        classes = sorted(set(table["label"]))
    elif "labels" in table.columns:
        classes = sorted({label for labels in table["labels"] for label in labels})
    else:
        return  # validate_table names the missing column
    if len(classes) < 2:
        raise ValueError(
            f"data set {dataset!r} has {len(classes)} class ({', '.join(map(repr, classes))}) in "
            f"{len(table)} rows: silhouettes need two at least; {remedy}"
        )


def _listed_files(raw_dir: Path) -> list[Path]:
    try:
        return source_files(raw_dir)
    except (OSError, ValueError, KeyError):
        return sorted(p for p in Path(raw_dir).glob("*") if p.is_file() and p.name != MANIFEST_NAME)


def read_dataset(path: str | os.PathLike) -> pd.DataFrame:
    """Load a prepared data set (labels lists come back as Python lists of str)."""
    table = pd.read_parquet(path)
    if "labels" in table.columns:
        table["labels"] = table["labels"].map(lambda v: [str(x) for x in v])
    return table


# ---------------------------------------------------------------------------------------------
# I-STAR task splits (train and validation): each split is a source (hf_<task>_<split>) of
# kind hub, fetched by rule download_source from the hub, or from a mirror's GLUE tsv file.

ISTAR_SPLITS = ("train", "validation")
# I-STAR tasks read from a mirror's GLUE tsv files (the others come from the hub); each label's
# class id is its place in the task's label domain, which is the hub's numbering for these tasks.
_GLUE_TSV_TASKS = ("cola", "sst2", "mrpc", "rte", "qnli")
_GLUE_SPLIT_FILES = {"train": "train.tsv", "validation": "dev.tsv"}


def task_source(task: str, split: str) -> str:
    """The source (config ``sources``) that holds one split of an I-STAR task."""
    task_spec(task)
    if split not in ISTAR_SPLITS:
        raise ValueError(f"split must be one of {ISTAR_SPLITS}, got {split!r}")
    return f"hf_{task}_{split}"


def _task_problem(task: str, config: Mapping[str, Any], mirror: Path) -> str | None:
    """Why the mirror cannot serve ``task`` (a split missing), or None when it holds both splits."""
    spec = task_spec(task)
    for split in ISTAR_SPLITS:
        name = task_source(task, split)
        if name not in config["sources"]:
            return f"I-STAR task {task!r} needs source {name!r}, which config 'sources' lacks"
        files = config["sources"][name].get("mirror") or []
        if not files:
            return (
                f"I-STAR task {task!r} is not part of the offline mirror {mirror} (only GLUE tsv files are); "
                f"unset mirror/{MIRROR_ENV} to load {spec.hub_path!r} from the Hugging Face hub"
            )
        missing = [rel for rel in files if not (mirror / rel).is_file()]
        if missing:
            return (
                f"I-STAR task {task!r} needs its {split} split, {mirror / missing[0]}, which the mirror {mirror} "
                f"does not have; unset mirror/{MIRROR_ENV} to load it from the Hugging Face hub, or choose another task"
            )
    return None


def check_tasks_available(tasks: Sequence[str], config: Mapping[str, Any]) -> None:
    """With a mirror set, every task needs both its splits there: one error naming all that do not.

    Called by rule ``finetune``'s input function while the workflow builds its DAG, so a missing
    file stops the run before any job starts, with the tasks the mirror does hold; a DAG that
    needs no I-STAR run is not concerned. Without a mirror (the hub) nothing is checked.
    """
    mirror = resolve_mirror(config.get("mirror"))
    if mirror is None:
        return
    problems = [
        problem for problem in (_task_problem(task, config, mirror) for task in tasks) if problem
    ]
    if problems:
        held = [task for task in TASKS if _task_problem(task, config, mirror) is None]
        raise FileNotFoundError(
            "; ".join(problems)
            + f". Tasks the mirror holds: {', '.join(held) or 'none'} (set istar.tasks to those)"
        )


def task_inputs(
    task: str, config: Mapping[str, Any], root: str | os.PathLike = RAW_ROOT
) -> dict[str, str]:
    """Rule ``finetune``'s inputs: split → the manifest of its download (after :func:`check_tasks_available`)."""
    check_tasks_available([task], config)
    sources = [task_source(task, split) for split in ISTAR_SPLITS]
    check_sources_available(sources, config)  # files the mirror holds but nothing can verify
    return dict(zip(ISTAR_SPLITS, (source_outputs(name, root)[0] for name in sources), strict=True))


def _glue_task_table(task: str, path: Path) -> pd.DataFrame:
    """A GLUE task split from its original tsv file, in the table the hub reader gives."""
    if task in _GLUE_TSV_TASKS:
        table = read_glue(task, path.parent, path.name)
        table["label"] = table["label"].map(GLUE_FORMATS[task].labels.index).astype(int)
        return table
    if task == "stsb":
        pairs = read_sts_tsv(_raw_file(path.parent, path.name))
        return pd.DataFrame(
            {"text": pairs["sentence1"], "text_pair": pairs["sentence2"], "label": pairs["score"]}
        )
    raise ValueError(f"I-STAR task {task!r} has no GLUE tsv reader; it comes from the hub only")


def _hub_task_table(spec: TaskSpec, table: pd.DataFrame) -> pd.DataFrame:
    """A task split as the hub stores it → text[, text_pair], label (or SQuAD's question columns)."""
    if spec.kind == "qa":
        return pd.DataFrame(
            {
                "id": table["id"].astype(str),
                "question": table["question"].str.lstrip(),
                "context": table["context"],
                "answers": [list(a["text"]) for a in table["answers"]],
                "answer_starts": [[int(s) for s in a["answer_start"]] for a in table["answers"]],
            }
        )
    out = pd.DataFrame({"text": table[spec.hub_columns[0]].astype(str)})
    if len(spec.hub_columns) > 1:
        out["text_pair"] = table[spec.hub_columns[1]].astype(str)
    out["label"] = table["label"].astype(float if spec.kind == "regression" else int)
    return out


def read_task_split(task: str, split: str, raw_dir: str | os.PathLike) -> pd.DataFrame:
    """One split of an I-STAR task from its downloaded source folder: the hub's ``data.parquet``,
    or the mirror's GLUE tsv file.

    Returns columns ``text``, optional ``text_pair``, and ``label`` (int class id, float for
    STS-B); SQuAD: ``id``, ``question``, ``context``, ``answers``, ``answer_starts``.
    """
    raw_dir = Path(raw_dir)
    if (raw_dir / HUB_FILE).is_file():
        return _hub_task_table(task_spec(task), pd.read_parquet(raw_dir / HUB_FILE))
    return _glue_task_table(task, raw_dir / _GLUE_SPLIT_FILES[split])


def load_task_split(
    task: str,
    split: str,
    raw_dir: str | os.PathLike,
    subset: int | None = None,
    subset_seed: int = 0,
) -> pd.DataFrame:
    """A task's ``train`` or ``validation`` split from its downloaded source folder.

    ``subset`` keeps a seeded random sample of that many rows (the same for every run), for
    scaled-down runs. Rows without a gold label (label −1) are dropped.
    """
    if split not in ISTAR_SPLITS:
        raise ValueError(f"split must be 'train' or 'validation', got {split!r}")
    spec = task_spec(task)
    table = read_task_split(task, split, raw_dir)
    if spec.kind != "qa":
        table = table[table["label"] >= 0].reset_index(drop=True)
    if len(table) == 0:
        raise ValueError(f"the {split} split of {task!r} is empty")
    if subset is not None and subset < len(table):
        rows = np.random.default_rng(subset_seed).choice(len(table), size=subset, replace=False)
        table = table.iloc[np.sort(rows)].reset_index(drop=True)
    return table


# ---------------------------------------------------------------------------------------------
# Geometry study: the corpus of the cluster analysis and the STS sets, each read from the
# download folder of its source (config geometry.clusters.corpus.source; hf_<sts>_<split>).

_SENTENCE_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[])")
_STS_SPLIT_FILES = {"train": "train.tsv", "validation": "dev.tsv"}  # GLUE STS-B from a mirror
_SICK_FILE = "SICK.txt"  # SICK from a mirror: every split in one file


def split_sentences(paragraph: str) -> list[str]:
    """Split a paragraph at sentence-final punctuation followed by an upper-case start.

    A regular expression rather than a trained splitter: nltk's punkt model cannot be fetched
    offline, and the analysis only needs sentence-sized contexts, not perfect boundaries.
    """
    return [part.strip() for part in _SENTENCE_BOUNDARY.split(paragraph.strip()) if part.strip()]


def read_text_file(path: str | os.PathLike, max_sentences: int | None = None) -> list[str]:
    """One sentence per non-empty line of a UTF-8 text file (the first ``max_sentences``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"corpus file {path} does not exist; fix geometry.clusters.corpus.file"
        )
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(f"corpus file {path} is not UTF-8 ({error}); convert it first") from error
    sentences = [line.strip() for line in lines if line.strip()]
    if not sentences:
        raise ValueError(f"corpus file {path} holds no non-empty line")
    return sentences[:max_sentences] if max_sentences else sentences


def wikitext_sentences(lines: Iterable[str], max_sentences: int | None = None) -> list[str]:
    """Sentences of WikiText raw lines: headings (`` = Title = ``) and empty lines dropped."""
    sentences: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or (stripped.startswith("=") and stripped.endswith("=")):
            continue
        sentences.extend(split_sentences(stripped))
        if max_sentences and len(sentences) >= max_sentences:
            return sentences[:max_sentences]
    return sentences


def corpus_inputs(config: Mapping[str, Any], root: str | os.PathLike = RAW_ROOT) -> dict[str, str]:
    """Rule geometry_token_embeddings' input: the download of the corpus's source (checked
    against the mirror while the DAG is built)."""
    source = config["geometry"]["clusters"]["corpus"]["source"]
    check_sources_available([source], config)
    return {"corpus": source_outputs(source, root)[0]}


def read_corpus(corpus: Mapping[str, Any], raw_dir: str | os.PathLike) -> list[str]:
    """The sentences of the configured corpus (``geometry.clusters.corpus``) from its download.

    ``format: lines``: one sentence per line of ``file`` in the folder; ``format: wikitext``: the
    WikiText split downloaded from the hub (``data.parquet``), split into sentences.
    """
    raw_dir = Path(raw_dir)
    max_sentences = corpus.get("max_sentences")
    if corpus["format"] == "lines":
        if not corpus.get("file"):
            raise ValueError(
                "geometry.clusters.corpus.format is 'lines' but no file is set; give corpus.file"
            )
        return read_text_file(raw_dir / corpus["file"], max_sentences)
    if corpus["format"] == "wikitext":
        sentences = wikitext_sentences(
            pd.read_parquet(_raw_file(raw_dir, HUB_FILE))["text"], max_sentences
        )
        if not sentences:
            raise ValueError(f"the WikiText split in {raw_dir} yielded no sentence")
        return sentences
    raise ValueError(f"unknown corpus format {corpus['format']!r}; expected 'lines' or 'wikitext'")


def sts_source(name: str, split: str) -> str:
    """The source (config ``sources``) of one split of an STS set (stsb, sickr)."""
    if name not in ("stsb", "sickr"):
        raise ValueError(f"unknown STS data set {name!r}; expected 'stsb' or 'sickr'")
    return f"hf_{name}_{split}"


def sts_inputs(
    name: str, split: str, config: Mapping[str, Any], root: str | os.PathLike = RAW_ROOT
) -> dict[str, str]:
    """Rule geometry_sentence_embeddings' input: the download of the STS split, or nothing for
    SICK-R when the mirror lacks it (SICK-R is optional: the job marks it unavailable)."""
    source = sts_source(name, split)
    if source not in config["sources"]:
        raise ValueError(
            f"geometry.sts.splits.{name}: {split!r} needs source {source!r}, which config 'sources' lacks"
        )
    mirror = resolve_mirror(config.get("mirror"))
    if name == "sickr" and mirror is not None and missing_mirror_files(source, config, mirror):
        return {}
    check_sources_available([source], config)
    return {"data": source_outputs(source, root)[0]}


def read_sts_tsv(path: str | os.PathLike) -> pd.DataFrame:
    """An STS-B file in the GLUE tsv format as (sentence1, sentence2, score).

    GLUE files contain unbalanced quotes, so quoting is switched off.
    """
    table = pd.read_csv(
        path,
        sep="\t",
        quoting=csv.QUOTE_NONE,
        keep_default_na=False,
        dtype={"sentence1": str, "sentence2": str},
    )
    missing = {"sentence1", "sentence2", "score"} - set(table.columns)
    if missing:
        raise ValueError(
            f"STS file {path} lacks columns {sorted(missing)}; found {list(table.columns)}"
        )
    return _check_sts(
        table[["sentence1", "sentence2", "score"]].astype({"score": float}), str(path)
    )


def _check_sts(table: pd.DataFrame, origin: str) -> pd.DataFrame:
    if table.empty:
        raise ValueError(f"STS data from {origin} has no pair")
    if not np.isfinite(table["score"].to_numpy(dtype=float)).all():
        raise ValueError(f"STS data from {origin} has missing or non-numeric gold scores")
    return table.reset_index(drop=True)


def read_sts(name: str, split: str, raw_dir: str | os.PathLike) -> pd.DataFrame:
    """Pairs and gold scores (sentence1, sentence2, score) of an STS split from its download:
    the hub's ``data.parquet``, or the mirror's original file (STS-B tsv, SICK.txt)."""
    raw_dir = Path(raw_dir)
    sts_source(name, split)
    hub = raw_dir / HUB_FILE
    if hub.is_file():
        data = pd.read_parquet(hub)
        if name == "stsb":
            data = data.rename(columns={"label": "score"})
        return _check_sts(data[["sentence1", "sentence2", "score"]], f"{hub} ({name} {split})")
    if name == "stsb":
        if split not in _STS_SPLIT_FILES:
            raise ValueError(
                f"unknown STS-B split {split!r}; expected one of {sorted(_STS_SPLIT_FILES)}"
            )
        return read_sts_tsv(_raw_file(raw_dir, _STS_SPLIT_FILES[split]))
    path = _raw_file(raw_dir, _SICK_FILE)
    table = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, keep_default_na=False)
    if split != "all":
        table = table[table["SemEval_set"].str.upper() == split.upper()]
    table = table.rename(
        columns={"sentence_A": "sentence1", "sentence_B": "sentence2", "relatedness_score": "score"}
    )
    return _check_sts(
        table[["sentence1", "sentence2", "score"]].astype({"score": float}), str(path)
    )
