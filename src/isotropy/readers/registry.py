"""The data-set registry: data set → its record (:class:`DatasetSpec`), from each reader
module's ``DATASETS``. A prepared data set (:func:`prepare_dataset`) has ``text``, ``text_pair``
(pairs only) and ``label`` (str) or ``labels`` (sorted list of str), texts stripped; malformed
input raises ``ValueError`` or ``FileNotFoundError`` naming the file and line.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from isotropy.configuration import Config
from isotropy.io import atomic_path, decode_text
from isotropy.paths import MANIFEST_NAME


def read_utf8_lines(path: Path) -> list[str]:
    """The lines of ``path`` as UTF-8, a byte-order mark dropped (GLUE's MRPC dev.tsv has one)."""
    # Lines end at "\n" only: str.splitlines() would also break at U+2028, U+0085 and form feeds,
    # which real corpora hold inside a field.
    lines = decode_text(path.read_bytes(), "utf-8-sig", str(path)).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def raw_file(raw_dir: str | os.PathLike, name: str) -> Path:
    path = Path(raw_dir) / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; re-run the download of its source")
    return path


def read_source_manifest(raw_dir: str | os.PathLike) -> dict[str, Any]:
    """The manifest of a fetched source."""
    return json.loads((Path(raw_dir) / MANIFEST_NAME).read_text())


def input_trust(manifest: Mapping[str, Any]) -> dict[str, str]:
    """What each input of a fetched source rests on (URL, mirror path or hub data set → its
    ``trust``), for the provenance records of what is made from it."""
    return {
        str(entry.get("url") or entry.get("mirror_path") or entry.get("hub")): str(
            entry.get("trust") or "unverified"
        )
        for entry in manifest.get("inputs") or []
    }


def source_files(raw_dir: str | os.PathLike) -> list[Path]:
    """The raw files of a fetched source, as listed in its manifest."""
    raw_dir = Path(raw_dir)
    return [raw_dir / record["path"] for record in read_source_manifest(raw_dir)["files"]]


def word_vectors_file(raw_dir: str | os.PathLike) -> Path:
    """The one word2vec file of a fetched word-vector source."""
    files = source_files(raw_dir)
    if len(files) != 1:
        raise ValueError(
            f"word-vector source {raw_dir} should hold one file, its manifest lists {files}"
        )
    return files[0]


def multi_label_frame(labels_by_word: Mapping[str, Iterable[str]]) -> pd.DataFrame:
    words = list(labels_by_word)
    return pd.DataFrame({"text": words, "labels": [sorted(set(labels_by_word[w])) for w in words]})


def write_dataset(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a prepared table as parquet, atomically."""
    with atomic_path(path) as tmp:
        table.to_parquet(tmp, index=False)


def check_prepared(dataset: str, table: pd.DataFrame, raw_dirs: Sequence[Path]) -> None:
    """Refuse a table no study can use, naming the raw files it came from: no rows, one class,
    or a NUL byte in a text (never text; it would be embedded as is)."""
    files = ", ".join(
        str(path)
        for raw_dir in raw_dirs
        for path in sorted(Path(raw_dir).rglob("*"))
        if path.is_file() and path.name != MANIFEST_NAME
    )
    remedy = (
        f"check or re-fetch these raw files ({files}), e.g. snakemake --forcerun download_source"
    )
    if len(table) == 0:
        raise ValueError(f"data set {dataset!r} has no rows: its raw files yield none; {remedy}")
    for column in ("text", "text_pair"):
        if column in table.columns and (bad := table[column].str.contains("\0", na=False)).any():
            item = int(bad.to_numpy().argmax())
            raise ValueError(
                f"data set {dataset!r}: item {item} holds a NUL byte in {column!r}; {remedy}"
            )
    labels = table["label"] if "label" in table.columns else table["labels"].explode().dropna()
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise ValueError(
            f"data set {dataset!r} has {len(classes)} class ({', '.join(map(repr, classes))}) in "
            f"{len(table)} rows: silhouettes need two at least; {remedy}"
        )


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DatasetSpec:
    """One data set's record: ``reader`` builds it from a raw folder per reader argument;
    ``sources`` maps those arguments to source names (or is a function of the config giving
    them); ``unit`` is what one item is (a word, which word vectors can embed, a sentence, or a
    pair: text, text_pair); ``layouts``: the raw layout each argument's source must have;
    ``option_keys``: the reader's keyword options, which ``options`` (a function of the config;
    by default config ``dataset_options.<name>``) gives."""

    reader: Callable[..., pd.DataFrame]
    sources: Mapping[str, str] | Callable[[Config], dict[str, str]]
    unit: Literal["word", "sentence", "pair"]  # mypy checks each module's records
    layouts: Mapping[str, str] = field(default_factory=dict)
    option_keys: tuple[str, ...] = ()
    options: Callable[[Config], dict[str, Any]] | None = None


DATASETS: dict[str, DatasetSpec] = {}


def discover_readers(package: str = "isotropy.readers") -> list[str]:
    """Import every module of ``package`` and gather their ``DATASETS`` (a name two modules
    give is refused); the modules' names."""
    root = importlib.import_module(package)
    names = [
        f"{package}.{module.name}"
        for module in pkgutil.iter_modules(root.__path__)
        if not module.name.startswith("_")
    ]
    for name in names:
        records = getattr(importlib.import_module(name), "DATASETS", {})
        if records is DATASETS:
            continue  # this module's own
        for dataset, spec in records.items():
            if DATASETS.setdefault(dataset, spec) is not spec:
                raise ValueError(
                    f"data set {dataset!r} is registered twice: by {name} and by "
                    f"{DATASETS[dataset].reader.__module__}; rename one"
                )
    return names


def prepare_dataset(
    dataset: str,
    raw_dirs: Mapping[str, str | os.PathLike],
    sources: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Build ``dataset`` from its sources' raw folders (``raw_dirs``: source name → folder)."""
    kwargs = {role: Path(raw_dirs[name]) for role, name in sources.items()}
    table = DATASETS[dataset].reader(**kwargs, **dict(options or {}))
    check_prepared(
        dataset, table, [Path(raw_dirs[name]) for name in dict.fromkeys(sources.values())]
    )
    log.info("%s: %d items, columns %s", dataset, len(table), list(table.columns))
    return table
