"""The rules' input functions that are more than one call of the data layer."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from itertools import product
from typing import Any

from snakemake.exceptions import WorkflowError

from isotropy import paths, provenance, sources
from isotropy.configuration import Config, Section
from isotropy.configuration.geometry import Clusters, Static
from isotropy.configuration.optimisation import PROTOCOL_KEYS
from isotropy.models import ENTRY_KEYS
from isotropy.readers.sts import OPTIONAL_STS, sts_source
from isotropy.workflow.targets import geometry_models, study_runs


def verified_embedding(encoder_of: Callable[[Any], str] | None = None) -> Callable[[Any], str]:
    """A run's vectors.npy, checked while the DAG is built (before Snakemake removes what was
    made from it); the encoder: wildcard ``encoder``, or ``encoder_of(wildcards)``."""

    def path(wildcards: Any) -> str:
        name = wildcards.encoder if encoder_of is None else encoder_of(wildcards)
        file = paths.embedding_file("vectors.npy", name, wildcards.dataset)
        if os.path.isfile(file) and (problem := provenance.damaged_npy(file)) is not None:
            raise WorkflowError(
                f"{problem}; re-make it: rm -f {file}, then run again; nothing was run or removed"
            )
        return file

    return path


# Geometry study: the per-model tables each collected table reads.


def geometry_cluster_files(config: Config, artefact: str) -> list[str]:
    if (geometry := config.geometry) is None:
        return []
    corpus, grid = geometry.clusters.corpus.name, product(geometry.clusters.models, geometry.seeds)
    return [paths.geometry_run_file(artefact, model, corpus, seed) for model, seed in grid]


def geometry_static_files(config: Config, artefact: str) -> list[str]:
    """The static word-vector comparison rows (none when ``clusters.static.source`` is null)."""
    if (geometry := config.geometry) is None or (source := geometry.clusters.static.source) is None:
        return []
    return [paths.static_geometry_file(artefact, source, seed) for seed in geometry.seeds]


def classification_files(config: Config) -> list[str]:
    if (geometry := config.geometry) is None:
        return []
    classes = geometry.classification
    return [paths.classification_run_file(model=m, task=classes.task) for m in classes.models]


def unavailable_sts_datasets(config: Config) -> list[str]:
    """Configured optional STS data sets whose files the data mirror lacks (none without one)."""
    sts = config.geometry.sts if config.geometry else None
    if not (sts and sts.models) or (mirror := sources.resolve_mirror(config.mirror)) is None:
        return []
    named = {name: sts_source(name, getattr(sts.splits, name)) for name in sts.datasets}
    return [
        name
        for name, source in named.items()
        if name in OPTIONAL_STS
        and source in config.sources
        and sources.missing_mirror_files(source, config.sources[source].mirror, mirror)
    ]


def collected_sts_files(config: Config) -> Callable[[Any], list[str]]:
    """Rule geometry_sts_table's inputs, one line once for each data set the mirror lacks."""
    said: set[str] = set()

    def files(wildcards: Any) -> list[str]:
        missing = unavailable_sts_datasets(config)
        for name in (name for name in missing if name not in said):
            said.add(name)
            print(
                f"geometry: STS data set {name!r} is not in the data mirror; no job is planned for "
                "it (config geometry.sts.datasets lists it; add its files to the mirror to run it)",
                file=sys.stderr,
            )
        geometry = config.geometry
        return [
            paths.geometry_run_file("sts.csv", model, dataset, seed)
            for model in (geometry.sts.models if geometry else [])
            for dataset in geometry.sts.datasets
            if dataset not in missing
            for seed in geometry.seeds
        ]

    return files


def configured_studies(config: Config) -> list[str]:
    return [study for study in config.studies if getattr(config, study)]


def workflow_run_keys(config: Config) -> dict[str, list[dict[str, Any]]]:
    configured = configured_studies(config)
    runs = {s: study_runs(config, s) for s in paths.CORRELATION_TABLES if s in configured}
    return {study: keys for study, keys in runs.items() if keys}


def _protocol(section: Section | None) -> dict[str, Any]:
    """A study's settings its printed numbers depend on (none without it)."""
    return {key: getattr(section, key) for key in PROTOCOL_KEYS} if section else {}


def config_subset(config: Config) -> dict[str, Any]:
    """The configuration the verdicts read (a rule parameter: a change there re-runs them)."""
    geometry, encoders = config.geometry, config.encoders
    clusters = geometry.clusters if geometry else None
    istar_models = list(config.istar.models if config.istar else [])
    used = [
        *(spec.model for spec in encoders.values() if spec.kind == "sentence-transformer"),
        *geometry_models(config),
        *istar_models,
    ]
    return {
        "encoders": {name: spec.model_dump(exclude_unset=True) for name, spec in encoders.items()},
        "models": {
            n: {k: getattr(config.models[n], k) for k in ENTRY_KEYS} for n in dict.fromkeys(used)
        },
        "main": {
            "setups": {name: setup.model_dump() for name, setup in config.main.setups.items()},
            **_protocol(config.main),
        },
        "glue": _protocol(config.glue),  # the settings a printed correlation depends on
        "geometry": {
            "clusters": {
                "models": list(clusters.models if clusters else []),
                **{
                    k: getattr(clusters, k) if clusters else Clusters.default(k)
                    for k in ("max_per_type", "lid_sample_size")
                },
                "static": {
                    "sample_size": clusters.static.sample_size
                    if clusters
                    else Static.default("sample_size")
                },
            },
            "sts": {"models": list(geometry.sts.models if geometry else [])},
        },
        "istar": {"models": istar_models},
    }
