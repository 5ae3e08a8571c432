"""What Snakemake asks of the readers at parse time: the sources (and options) a data set, an
I-STAR task split, the cluster corpus or an STS split reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy.configuration import Config
from isotropy.paths import raw_manifest
from isotropy.readers.registry import DATASETS
from isotropy.readers.sts import OPTIONAL_STS, sts_source
from isotropy.readers.tasks import ISTAR_SPLITS, task_source
from isotropy.sources import missing_mirror_files, resolve_mirror


def dataset_sources(config: Config, dataset: str) -> dict[str, str]:
    """Reader argument → source name, for ``dataset`` under ``config``."""
    sources = DATASETS[dataset].sources
    return dict(sources(config) if callable(sources) else sources)


def required_sources(dataset: str, config: Config) -> list[str]:
    """Names of the sources ``dataset`` is built from (keys of config ``sources``)."""
    names = list(dict.fromkeys(dataset_sources(config, dataset).values()))
    unknown = [n for n in names if n not in config.sources]
    if unknown:
        raise ValueError(
            f"data set {dataset!r} needs source(s) {unknown}, which config 'sources' lacks"
        )
    return names


def dataset_inputs(config: Config, dataset: str) -> dict[str, str]:
    """Snakemake inputs of ``dataset``: source name → that source's manifest."""
    return {name: raw_manifest(name) for name in required_sources(dataset, config)}


def dataset_options(config: Config, dataset: str) -> dict[str, Any]:
    """Config values the building of ``dataset`` depends on besides its sources."""
    spec = DATASETS[dataset]
    if spec.options is not None:
        return spec.options(config)
    return dict(config.dataset_options.get(dataset, {}))


def task_inputs(config: Mapping[str, Any], task: str) -> dict[str, str]:
    """Rule ``finetune``'s inputs: split → the manifest of its download."""
    return {split: raw_manifest(task_source(task, split)) for split in ISTAR_SPLITS}


def corpus_inputs(config: Config) -> dict[str, str]:
    """Rule geometry_token_embeddings' input: the download of the corpus's source."""
    clusters = config.geometry.clusters if config.geometry else None
    return {"corpus": raw_manifest(clusters.corpus.source)} if clusters else {}


def sts_inputs(config: Config, name: str, split: str) -> dict[str, str]:
    """Rule geometry_sentence_embeddings' input: the download of the STS split, or nothing for
    an optional set the mirror lacks (the job marks it unavailable)."""
    source, mirror = sts_source(name, split), resolve_mirror(config.mirror)
    if (
        name in OPTIONAL_STS
        and mirror
        and missing_mirror_files(source, config.sources[source].mirror, mirror)
    ):
        return {}
    return {"data": raw_manifest(source)}
