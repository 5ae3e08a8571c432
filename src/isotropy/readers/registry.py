"""The data-set registry: data set → its record (:class:`DatasetSpec`): the sources it reads by
role and the raw layout each must have, its unit (word, sentence or pair), its option keys and
its reader.

A reader module registers its data set next to its reader with :func:`register_dataset`; this
module never names one. Every consumer reads the record: the rules (sources, options), the
configuration's checks (a word-vector encoder only for words; a source of the right layout;
``dataset_options`` keys the reader takes), and the estimate (its measured costs, by the data
set's name in ``config/costs.csv``). :func:`discover_readers` imports every module of a package (the
``isotropy.readers`` package does so when it is imported), so adding a data set is one entry in
config ``sources`` (and ``main.setups``) plus one new module in this package: no list to edit.

:func:`prepare_dataset` is the one path that builds a registered data set from its raw folders.

Every reader returns one table shape, checked here, and builds it with the helpers here
(:func:`raw_file`, :func:`read_utf8_lines`, :func:`multi_label_frame`). A prepared data set
is a pandas DataFrame (stored as ``resources/data/<dataset>.parquet``) with ``text`` (str),
``text_pair`` (str, pair tasks only) and either ``label`` (str, single-label
tasks) or ``labels`` (sorted list of str, multi-label tasks). Surrounding whitespace of texts is
stripped; labels are strings.

Malformed input (a bad row, a wrong encoding, a missing file) raises ``ValueError`` or
``FileNotFoundError`` naming the file and line.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.io import atomic_path
from isotropy.paths import MANIFEST_NAME
from isotropy.sources import source_files
from isotropy.sources.layouts import decode_text


def read_utf8_lines(path: Path) -> list[str]:
    """The lines of ``path`` (a :func:`raw_file`), each decoded as UTF-8 and free of NUL bytes."""
    # Lines end at "\n" only: str.splitlines() would also break inside a field at U+2028, U+0085,
    # form feeds and other separators that real corpora contain.
    lines = decode_text(path.read_bytes(), "utf-8", str(path)).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for lineno, line in enumerate(lines, 1):
        if "\0" in line:  # never text: a damaged or binary file, and it would be embedded as is
            raise ValueError(
                f"{path}, line {lineno}: NUL byte at column {line.index(chr(0)) + 1}; the file is "
                "damaged or not text: re-fetch its source, or fix the line"
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
            f"prepared table has columns {sorted(columns)}; needed: text, optional text_pair, "
            "and exactly one of label/labels"
        )
    if len(table) == 0:
        raise ValueError("prepared table is empty")
    for column in columns - {"labels"}:
        bad = table[column].map(lambda v: not isinstance(v, str))
        if bad.any():
            row = bad.idxmax()
            raise ValueError(
                f"column {column!r} must hold strings; row {int(row)} holds {table[column][row]!r}"
            )
    if "labels" in columns:
        bad = table["labels"].map(lambda v: len(v) == 0 or not all(isinstance(x, str) for x in v))
        if bad.any():
            raise ValueError(
                "column 'labels' must hold non-empty lists of strings; "
                f"row {int(bad.idxmax())} does not"
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
                item = int(bad.to_numpy().argmax())
                raise ValueError(
                    f"data set {dataset!r}: item {item} holds a NUL byte in {column!r}; {remedy}"
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


log = logging.getLogger(__name__)

SourcesOf = Callable[[Mapping[str, Any]], dict[str, str]]
OptionsOf = Callable[[Mapping[str, Any]], dict[str, Any]]
# What one item of a data set is: a word (word vectors can embed it), a sentence, or a sentence
# pair (text, text_pair).
UNITS = ("word", "sentence", "pair")


@dataclass(frozen=True)
class DatasetSpec:
    """One data set's record: what building it needs and what it holds.

    ``sources`` maps config → {role (the reader's argument): source name}; ``layouts`` maps a
    role → the raw layout (config ``sources.<name>.kind``,
    :data:`isotropy.sources.layouts.LAYOUTS`) its source must have; ``unit`` is one of
    :data:`UNITS`; ``options`` maps config → the keyword options the reader takes (the config
    values the data set depends on), whose names are ``option_keys``.
    """

    sources: SourcesOf
    reader: Callable[..., pd.DataFrame]
    unit: str
    options: OptionsOf
    option_keys: tuple[str, ...] = ()
    layouts: Mapping[str, str] = field(default_factory=dict)


DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(
    name: str,
    *,
    sources: Mapping[str, str] | SourcesOf,
    unit: str,
    layouts: Mapping[str, str] | None = None,
    option_keys: tuple[str, ...] = (),
    options: OptionsOf | None = None,
) -> Callable[[Callable[..., pd.DataFrame]], Callable[..., pd.DataFrame]]:
    """Register data set ``name``, built by the decorated reader.

    ``sources``: {reader argument: source name} (keys of config ``sources``), or a function of
    the config giving it; ``layouts``: {reader argument: the raw layout its source must have};
    ``unit``: one of :data:`UNITS`; ``option_keys``: the keyword options the reader takes,
    which ``options`` (a function of the config) gives, by default from config
    ``dataset_options.<name>``. A name registered twice is an error naming both readers.
    """
    if unit not in UNITS:
        raise ValueError(f"data set {name!r}: unit {unit!r} is not one of {UNITS}")
    if callable(sources):
        sources_of = sources
    else:
        fixed = dict(sources)

        def sources_of(config: Mapping[str, Any]) -> dict[str, str]:
            return dict(fixed)

    def configured(config: Mapping[str, Any]) -> dict[str, Any]:  # dataset_options.<name>
        return dict((config.get("dataset_options") or {}).get(name) or {})

    def register(reader: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
        if name in DATASETS:
            raise ValueError(
                f"data set {name!r} is registered twice: by {_reader_name(DATASETS[name].reader)} "
                f"and by {_reader_name(reader)}; rename one"
            )
        DATASETS[name] = DatasetSpec(
            sources=sources_of,
            reader=reader,
            unit=unit,
            options=options or configured,
            option_keys=tuple(option_keys),
            layouts=dict(layouts or {}),
        )
        return reader

    return register


def _reader_name(reader: Callable[..., Any]) -> str:
    target = getattr(reader, "func", reader)  # a functools.partial names its function
    return f"{target.__module__}.{getattr(target, '__qualname__', repr(target))}"


def discover_readers(package: str = "isotropy.readers") -> list[str]:
    """Import every module of ``package`` (each registers its data sets); their names."""
    root = importlib.import_module(package)
    names = [
        f"{package}.{module.name}"
        for module in pkgutil.iter_modules(root.__path__)
        if not module.name.startswith("_")
    ]
    for name in names:
        importlib.import_module(name)
    return names


def dataset_spec(dataset: str) -> DatasetSpec:
    """The registered record of ``dataset``; an unknown name is an error listing the registered
    ones."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown data set {dataset!r}; expected one of {sorted(DATASETS)}")
    return DATASETS[dataset]


def prepare_dataset(
    dataset: str,
    raw_dirs: Mapping[str, str | os.PathLike],
    sources: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Build ``dataset`` from fetched sources.

    ``raw_dirs`` maps source name → its raw folder; ``sources`` maps reader argument → source
    name (from :func:`isotropy.readers.inputs.dataset_sources`); ``options`` from
    :func:`isotropy.readers.inputs.dataset_options`.
    """
    spec = dataset_spec(dataset)
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
