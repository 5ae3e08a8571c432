"""The one table shape every prepared data set shares, and the helpers readers build it with.

A prepared data set is a pandas DataFrame (stored as ``resources/data/<dataset>.parquet``) with
``text`` (str), ``text_pair`` (str, pair tasks only) and either ``label`` (str, single-label
tasks) or ``labels`` (sorted list of str, multi-label tasks). Surrounding whitespace of texts is
stripped; labels are strings.

Malformed input (a bad row, a wrong encoding, a missing file) raises ``ValueError`` or
``FileNotFoundError`` naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from isotropy.io import atomic_path
from isotropy.paths import MANIFEST_NAME
from isotropy.sources import decode_text, source_files


def read_utf8_lines(path: Path) -> list[str]:
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


def raw_file(raw_dir: str | os.PathLike, name: str) -> Path:
    path = Path(raw_dir) / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; re-run the download of its source")
    return path


def multi_label_frame(labels_by_word: Mapping[str, Iterable[str]]) -> pd.DataFrame:
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
