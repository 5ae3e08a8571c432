"""The geometry study's record, wildcards and final files (science: isotropy.geometry)."""

from __future__ import annotations

from itertools import product
from typing import Any

from isotropy import paths
from isotropy.configuration import Config
from isotropy.geometry import cost
from isotropy.readers.sts import STS_DATASETS
from isotropy.studies.record import StudySpec
from isotropy.verdicts.claims import Claim
from isotropy.verdicts.measurements.cai import cosine_measurements, lid_measurements
from isotropy.verdicts.measurements.sts import classification_measurements, sts_measurements
from isotropy.workflow.targets import geometry_models, names_pattern

# The collected tables the claims and the paper comparison read, when the run makes them.
VERDICT_TABLES = {
    "geometry_lid": paths.GEOMETRY_LID,
    "geometry_cosine": paths.GEOMETRY_COSINE,
    "geometry_sts": paths.GEOMETRY_STS,
    "geometry_classification": paths.GEOMETRY_CLASSIFICATION,
}

FIGURE_TABLES = {
    "cosine_by_layer": paths.GEOMETRY_COSINE,
    "lid_by_layer": paths.GEOMETRY_LID,
    "sts": paths.GEOMETRY_STS,
    "isotropy_by_layer": paths.GEOMETRY_ISOTROPY,
}  # figure → the table it draws


def pca_layer(config: Config, model: str) -> int:
    """The layer of ``model``'s PCA view: its ``pca_layers`` entry, else ``pca_layer``."""
    clusters = config.geometry.clusters
    return clusters.pca_layers.get(model, clusters.pca_layer)


def wildcards(config: Config) -> dict[str, str]:
    """The study's wildcards' patterns: only configured models and corpus match."""
    corpus = config.geometry.clusters.corpus.name if config.geometry else None
    return {
        "model": names_pattern(geometry_models(config)),
        "corpus": names_pattern([corpus] if corpus else []),
        "sts": "|".join(STS_DATASETS),
        "task": "sst2",
    }


def clustering_params(config: Config) -> dict[str, Any]:
    """The k-means-by-silhouette settings shared by the cosine, PCA and static steps (none
    without the study, whose rules then make no job)."""
    keys = {"k_range", "silhouette_threshold", "silhouette_sample_size"}
    return config.geometry.clusters.model_dump(include=keys) if config.geometry else {}


def verdict_tables(config: Config) -> dict[str, str]:
    """The collected tables of :data:`VERDICT_TABLES` the run makes (as :func:`outputs` says)."""
    if (geometry := config.geometry) is None:
        return {}
    clusters = geometry.clusters.models or geometry.clusters.static.source
    made = (clusters, clusters, geometry.sts.models, geometry.classification.models)
    return {name: path for (name, path), made in zip(VERDICT_TABLES.items(), made) if made}


def outputs(config: Config) -> list[str]:
    if (geometry := config.geometry) is None:
        return []
    clusters, corpus = geometry.clusters, geometry.clusters.corpus.name
    files = []
    if clusters.models or clusters.static.source:
        files += [paths.GEOMETRY_COSINE, paths.GEOMETRY_LID]
        figures = ("cosine_by_layer", "lid_by_layer")
        files += [paths.geometry_figure(f, ext) for f in figures for ext in ("pdf", "png")]
    if clusters.models:  # I(W) per layer of every encoder (contextual only)
        files += [paths.GEOMETRY_ISOTROPY]
        files += [paths.geometry_figure("isotropy_by_layer", e) for e in ("pdf", "png")]
    if geometry.sts.models:
        files += [paths.GEOMETRY_STS] + [paths.geometry_figure("sts", e) for e in ("pdf", "png")]
    if geometry.classification.models:
        files.append(paths.GEOMETRY_CLASSIFICATION)
    views = (paths.pca_view_figure, paths.token_views_figure)
    grid = product(clusters.models, geometry.seeds, ("pdf", "png"), views)
    return files + [view(ext, model, corpus, seed) for model, seed, ext, view in grid]


# The cluster-based method's before/after table (Rajaei & Sheikhi's slides), on seed means.
CLAIMS = (
    Claim(
        "cluster_based_raises_isotropy",
        "geometry",
        "sts_isotropy_ratio",
        "the cluster-based method raises isotropy I(W) over the raw embeddings (ratio)",
        "above:1",
        "Rajaei & Sheikhi 2020 slides, before/after table (I(W))",
        neutral=1.0,
        sesoi=1.0,
        sesoi_source="a convention: I(W) doubled",
    ),
    Claim(
        "cluster_based_raises_sts",
        "geometry",
        "sts_spearman_gain",
        "the cluster-based method raises STS Spearman correlation (×100) over the raw embeddings",
        "above:0",
        "Rajaei & Sheikhi 2020 slides, before/after table",
        sesoi=1.0,
        sesoi_source="a convention",
    ),
)

STUDIES = (
    StudySpec(
        name="geometry",
        outputs=outputs,
        job_costs=cost.JOB_COSTS,
        verdict_inputs=verdict_tables,
        measures={
            "geometry_classification": lambda table, config, stand: classification_measurements(
                table, config
            ),
            "geometry_lid": lid_measurements,
            "geometry_cosine": cosine_measurements,
            "geometry_sts": sts_measurements,
        },
        claims=CLAIMS,
        claims_not_run=(
            "results/geometry/sts.csv is not part of this run (make the geometry study first)"
        ),
    ),
)
