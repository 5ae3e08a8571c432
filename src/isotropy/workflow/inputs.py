"""The input functions the rules call while Snakemake builds the DAG that are more than one call
of the data layer: which file a job reads, checked where a damaged or missing file can be named
before any job runs, and the geometry study's per-model tables.

Each takes the configuration first, as every function the rules call does (the data layer's
too: ``readers.dataset_inputs(config, dataset)``, ``sources.source_params(config, source)``).
Plain Python: the workflow imports it while it parses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from snakemake.exceptions import WorkflowError

from isotropy import paths, provenance, sources
from isotropy.workflow.config import encoder, encoder_word_vector_source, setting

__all__ = [
    "collected_sts_files",
    "unavailable_sts_datasets",
    "geometry_sts_files",
    "geometry_sts_datasets",
    "geometry_static_files",
    "geometry_cluster_files",
    "verified_embedding",
    "word_vector_file",
]


def verified_embedding(config: Mapping[str, Any], artefact: str) -> Callable[[Any], str]:
    """An embeddings file (vectors.npy) of a run, checked when it exists (size against header
    and record): a damaged one is named while the DAG is built, before Snakemake removes any
    valid result made from it."""

    def path(wildcards: Any) -> str:
        file = paths.embedding_file(artefact, wildcards.encoder, wildcards.dataset)
        if os.path.isfile(file):
            problem = provenance.damaged_npy(file)
            if problem is not None:
                kind = encoder(dict(config), wildcards.encoder)["kind"]
                maker = (
                    "embed_sentences" if kind == "sentence-transformer" else "lookup_word_vectors"
                )
                raise WorkflowError(
                    f"{problem}; re-make it: rm -f {file}, then run again (rule {maker} makes it "
                    "anew); nothing was run or removed"
                )
        return file

    return path


def word_vector_file(config: Mapping[str, Any]) -> Callable[[Any], str]:
    """The manifest of the downloaded word-vector source the job's encoder looks words up in."""

    def path(wildcards: Any) -> str:
        return sources.source_outputs(encoder_word_vector_source(dict(config), wildcards.encoder))[
            0
        ]

    return path


# Geometry study: the per-model tables each collected table reads; an optional STS data set
# (SICK-R) the data mirror lacks is planned out here, so no job is made for it.


def geometry_cluster_files(config: Mapping[str, Any], artefact: str) -> list[str]:
    """One per-model artefact of the cluster analysis for every model and seed."""
    if "geometry" not in config:
        return []
    clusters = config["geometry"]["clusters"]
    return [
        paths.geometry_run_file(artefact, model, clusters["corpus"]["name"], seed)
        for model in clusters["models"]
        for seed in config["geometry"]["seeds"]
    ]


def geometry_static_files(config: Mapping[str, Any], artefact: str) -> list[str]:
    """The static word-vector comparison rows (none when ``clusters.static.source`` is null)."""
    source = setting(config, "geometry", "clusters", "static", "source")
    if source is None:
        return []
    return [
        paths.static_geometry_file(artefact, source, seed) for seed in config["geometry"]["seeds"]
    ]


def geometry_sts_datasets(config: Mapping[str, Any]) -> list[str]:
    """The configured STS data sets this run can read: SICK-R (optional) is planned out when the
    data mirror lacks its files, so no job is made for it (:func:`unavailable_sts_datasets`)."""
    if "geometry" not in config:
        return []
    missing = set(unavailable_sts_datasets(config))
    return [name for name in config["geometry"]["sts"]["datasets"] if name not in missing]


def unavailable_sts_datasets(config: Mapping[str, Any]) -> list[str]:
    """Configured optional STS data sets (SICK-R) whose split's files the data mirror lacks
    (none without a mirror: a download is then attempted)."""
    sts = setting(config, "geometry", "sts", default={})
    if not sts.get("models") or "sickr" not in sts.get("datasets", []):
        return []
    mirror = sources.resolve_mirror(config.get("mirror"))
    split = sts.get("splits", {}).get("sickr", "test")
    source = f"hf_sickr_{split}"
    if mirror is None or source not in config.get("sources", {}):
        return []
    return ["sickr"] if sources.missing_mirror_files(source, config, mirror) else []


def geometry_sts_files(config: Mapping[str, Any]) -> list[str]:
    """Every per-model STS table of the data sets this run can read."""
    if "geometry" not in config:
        return []
    sts = config["geometry"]["sts"]
    return [
        paths.geometry_run_file("sts.csv", model, dataset, seed)
        for model in sts["models"]
        for dataset in geometry_sts_datasets(config)
        for seed in config["geometry"]["seeds"]
    ]


def collected_sts_files(config: Mapping[str, Any]) -> Callable[[Any], list[str]]:
    """Rule geometry_sts_table's input function: :func:`geometry_sts_files`, and one line for each
    configured STS data set the data mirror lacks (SICK-R is optional), said once and only when
    the geometry study's STS table is planned: a main or preview run never mentions it."""
    said: set[str] = set()

    def files(wildcards: Any) -> list[str]:
        for name in unavailable_sts_datasets(config):
            if name not in said:
                said.add(name)
                print(
                    f"geometry: STS data set {name!r} is not in the data mirror; no job is planned "
                    "for it (config geometry.sts.datasets lists it; add its files to the mirror to "
                    "run it)",
                    file=sys.stderr,
                )
        return geometry_sts_files(config)

    return files
