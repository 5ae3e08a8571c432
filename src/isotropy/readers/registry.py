"""The data-set registry: data set → the sources it reads, its options and its reader.

A reader module registers its data set next to its reader with :func:`register_dataset`; this
module never names one. :func:`discover_readers` imports every module of a package (the
``isotropy.readers`` package does so when it is imported), so adding a data set is one entry in
config ``sources`` (and ``main.setups``) plus one new module in this package: no list to edit.

:func:`prepare_dataset` is the one path that builds a registered data set from its raw folders.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.readers.tables import check_prepared, validate_table

log = logging.getLogger(__name__)

SourcesOf = Callable[[Mapping[str, Any]], dict[str, str]]
OptionsOf = Callable[[Mapping[str, Any]], dict[str, Any]]


def _no_options(config: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class DatasetSpec:
    """How to build one data set: the source roles it needs and the reader over their raw folders.

    ``sources`` maps config → {role (the reader's argument): source name}; ``options`` maps
    config → the keyword options the reader takes (the config values the data set depends on).
    """

    sources: SourcesOf
    reader: Callable[..., pd.DataFrame]
    options: OptionsOf = field(default=_no_options)
    description: str = ""


DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(
    name: str,
    *,
    sources: Mapping[str, str] | SourcesOf,
    options: OptionsOf | None = None,
    description: str = "",
) -> Callable[[Callable[..., pd.DataFrame]], Callable[..., pd.DataFrame]]:
    """Register data set ``name``, built by the decorated reader.

    ``sources``: {reader argument: source name} (keys of config ``sources``), or a function of
    the config giving it. ``options``: a function of the config giving the reader's keyword
    options. A name registered twice is an error naming both readers.
    """
    if callable(sources):
        sources_of = sources
    else:
        fixed = dict(sources)

        def sources_of(config: Mapping[str, Any]) -> dict[str, str]:
            return dict(fixed)

    def register(reader: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
        if name in DATASETS:
            raise ValueError(
                f"data set {name!r} is registered twice: by {_reader_name(DATASETS[name].reader)} "
                f"and by {_reader_name(reader)}; rename one"
            )
        DATASETS[name] = DatasetSpec(sources_of, reader, options or _no_options, description)
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
    """The registered spec of ``dataset``; an unknown name is an error listing the registered ones."""
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
