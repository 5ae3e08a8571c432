"""Sensitivity of the main result to vectors, dimension and label set (config ``sensitivity``).

The main study's direct optimisation (isotropy.optimize) of the word-level setups (supersense,
POS), run over a grid: vector sets (an encoder's vectors, or a random orthogonal embedding of
them into more dimensions) x label sets (:data:`LABEL_SETS`) x seeds. Every vector set sees the
same items: the words that the ``items_from`` encoder has a vector for.

The grid, its files and its settings are read from the configuration by
:mod:`isotropy.workflow.targets` (``sensitivity_*``), the section's cross-checks are in
:mod:`isotropy.workflow.config`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from isotropy.workflow import paths

STUDY = "sensitivity"


# ---------------------------------------------------------------------------------------------
# Label sets: name -> (table of the setup's items, settings, rng) -> the items kept.


def _all(table: pd.DataFrame, section: Mapping, rng: np.random.Generator) -> pd.DataFrame:
    """Every item with its full label vector (the main study's task)."""
    return table


def _single(table: pd.DataFrame, section: Mapping, rng: np.random.Generator) -> pd.DataFrame:
    """Only items with exactly one label: one cluster per label (26 for supersense)."""
    return table[table["labels"].map(len) == 1]


def _paper_size(table: pd.DataFrame, section: Mapping, rng: np.random.Generator) -> pd.DataFrame:
    """A seeded random subset of ``paper_size`` items (2,275: Tikhonov et al.'s labelled words)."""
    size = section["paper_size"]
    if size > len(table):
        raise ValueError(
            f"sensitivity.paper_size is {size} but the setup has only {len(table)} items; lower it"
        )
    keep = np.sort(rng.choice(len(table), size=size, replace=False))
    return table.iloc[keep]


LABEL_SETS: dict[str, Callable[[pd.DataFrame, Mapping, np.random.Generator], pd.DataFrame]] = {
    "all": _all,
    "single": _single,
    "paper_size": _paper_size,
}
# Label sets whose data needs a download this workflow does not yet have (names the schema
# accepts, so configurations can already say them): refused with the reason.
PENDING_LABEL_SETS = {
    "tikhonov": "Tikhonov et al.'s own supersense labels need their file, which no source in "
    "this workflow downloads yet (it needs the network); leave it out of sensitivity.label_sets",
}


def label_set_table(
    table: pd.DataFrame, vocabulary: pd.Series, label_set: str, section: Mapping
) -> pd.DataFrame:
    """The items of one label set: the setup's words that have a vector in ``vocabulary``."""
    if label_set not in LABEL_SETS:
        raise ValueError(PENDING_LABEL_SETS.get(label_set, f"unknown label set {label_set!r}"))
    if "labels" not in table.columns:
        raise ValueError("label sets are defined on multi-label word tables (column 'labels')")
    known = table[table["text"].astype(str).isin(set(vocabulary.astype(str)))]
    rng = np.random.default_rng(section["label_seed"])
    kept = LABEL_SETS[label_set](known.reset_index(drop=True), section, rng)
    if len(kept) < 2:
        raise ValueError(f"label set {label_set!r} keeps only {len(kept)} items; need at least 2")
    return kept.reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# Vector sets


def orthogonal_embedding(vectors: np.ndarray, dim: int, seed: int) -> np.ndarray:
    """``vectors`` (n x d) mapped into ``dim`` >= d dimensions by a random isometry.

    Q (dim x d) has orthonormal columns (QR of a seeded Gaussian matrix, signs fixed), so every
    distance, angle and the covariance spectrum's non-zero part are those of the input: the same
    geometry in a larger ambient space.
    """
    vectors = np.asarray(vectors, dtype=np.float64)
    d = vectors.shape[1]
    if dim < d:
        raise ValueError(f"cannot embed {d}-d vectors isometrically into {dim} dimensions")
    gaussian = np.random.default_rng(seed).standard_normal((dim, d))
    q, r = np.linalg.qr(gaussian)
    q *= np.sign(np.diag(r))  # a unique Q for the seed
    return (vectors @ q.T).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Results


def endpoints(traces: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """IsoScore and silhouette at step 0 and at the last step, averaged over seeds."""
    first = traces[traces["step"] == 0]
    last = traces[traces["step"] == traces.groupby(by)["step"].transform("max")]
    columns = ["isoscore", "silhouette"]
    start = first.groupby(by, sort=False)[columns].mean().add_suffix("_start")
    end = last.groupby(by, sort=False)[columns].mean().add_suffix("_end")
    return start.join(end).reset_index()


TABLE_COLUMNS = [
    "setup",
    "vectors",
    "dimension",
    "label_set",
    "clusters",
    "items",
    "seeds",
    "points",
    "pearson_r",
    "pearson_r_ci_low",
    "pearson_r_ci_high",
    "spearman_rho",
    "spearman_rho_ci_low",
    "spearman_rho_ci_high",
    "isoscore_start",
    "isoscore_end",
    "silhouette_start",
    "silhouette_end",
    "ci",
]


def sensitivity_table(
    correlations: pd.DataFrame, summaries: pd.DataFrame, traces: pd.DataFrame
) -> pd.DataFrame:
    """One row per (setup, vectors, label set): counts, r and rho with intervals, endpoints.

    ``correlations``: :func:`isotropy.summaries.correlation_table` by encoder, dataset,
    label_set (scope ``all`` used); ``summaries``: one row per run (encoder, dataset, label_set,
    seed, dim, clusters, items); ``traces``: the runs' traces with the same keys.
    """
    by = ["encoder", "dataset", "label_set"]
    counts = summaries.groupby(by, sort=False).agg(
        dimension=("dim", "first"),
        clusters=("clusters", "first"),
        items=("items", "first"),
        seeds=("seed", "nunique"),
    )
    pooled = correlations[correlations["scope"] == "all"].set_index(by)
    pooled = pooled.drop(columns=["scope", "seeds"], errors="ignore")  # seeds: from the summaries
    table = counts.join(pooled).join(endpoints(traces, by).set_index(by)).reset_index()
    table = table.rename(columns={"encoder": "vectors", "dataset": "setup"})
    return table[[c for c in TABLE_COLUMNS if c in table.columns]]


def markdown_table(table: pd.DataFrame) -> str:
    """The table as Markdown, r and rho with their intervals as ``value [low, high]``."""

    def with_interval(row: pd.Series, name: str) -> str:
        return f"{row[name]:+.2f} [{row[name + '_ci_low']:+.2f}, {row[name + '_ci_high']:+.2f}]"

    header = (
        "| setup | vectors | dim | label set | clusters | items | r [CI] | ρ [CI] "
        "| IsoScore start → end | silhouette start → end |"
    )
    lines = [header, "|" + "---|" * 10]
    for _, row in table.iterrows():
        lines.append(
            f"| {row['setup']} | {row['vectors']} | {row['dimension']} | {row['label_set']} "
            f"| {row['clusters']} | {row['items']} | {with_interval(row, 'pearson_r')} "
            f"| {with_interval(row, 'spearman_rho')} "
            f"| {row['isoscore_start']:.3f} → {row['isoscore_end']:.3f} "
            f"| {row['silhouette_start']:.3f} → {row['silhouette_end']:.3f} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Cost, said before the run (python -m isotropy.estimate --target sensitivity_study)

# Items of each setup on the offline mirror (main study's Table 1), the base of the CPU costs.
BASE_ITEMS = {"supersense": 10560, "pos": 11462}
BASE_DIM = 50  # the measured CPU costs (isotropy.estimate.CPU_SECONDS) are for 50-d vectors
MODEL_DIMS = {
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "sentence-transformers/all-mpnet-base-v2": 768,
    "sentence-transformers/all-distilroberta-v1": 768,
}


def vector_dim(config: Mapping, name: str) -> int | None:
    """The dimension of a vector set, from an existing vectors.npy or what its source is known to give."""
    derived = dict(config[STUDY].get("orthogonal") or {})
    if name in derived:
        return derived[name]["dim"]
    for setup in config[STUDY]["setups"]:
        path = paths.embedding_file("vectors.npy", name, setup)
        if os.path.isfile(path):
            return int(np.load(path, mmap_mode="r").shape[1])
    spec = config["encoders"][name]
    if spec["kind"] == "sentence-transformer":
        return MODEL_DIMS.get(((config.get("models") or {}).get(spec["model"]) or {}).get("model"))
    source = config["sources"][spec["source"]]
    if os.environ.get("ISOTROPY_MIRROR") or config.get("mirror"):
        match = re.search(r"(\d+)d", " ".join(source.get("mirror") or []))
        return int(match.group(1)) if match else None
    return 300  # NLPL model 222


def run_seconds(
    config: Mapping, run: Mapping, device: str, cpu_seconds: Mapping, gpu_per_update: float
) -> float | None:
    """Estimated wall time of one run: measured 50-d costs scaled by dimension and items.

    Per update ∝ items x dim; per evaluation ∝ items² x dim (silhouette's distances). Label set
    ``single`` is costed as ``all`` (an upper bound: it keeps a subset).
    """
    section = config[STUDY]
    dim = vector_dim(config, run["vectors"])
    if dim is None or run["setup"] not in cpu_seconds:
        return None
    items = section["paper_size"] if run["label_set"] == "paper_size" else BASE_ITEMS[run["setup"]]
    scale_items = items / BASE_ITEMS[run["setup"]]
    updates, stride = section["updates"], section["metric_stride"]
    if device == "cuda":  # measured at 384-d, every update; larger tables scale with dimension
        return updates * gpu_per_update * max(1.0, dim / 384)
    per_update, per_evaluation = cpu_seconds[run["setup"]]
    evaluations = 1 + -(-updates // stride)
    if section["metric_sample_size"]:
        scale_items = min(scale_items, section["metric_sample_size"] / BASE_ITEMS[run["setup"]])
    return updates * per_update * scale_items * dim / BASE_DIM + evaluations * (
        per_evaluation * scale_items**2 * dim / BASE_DIM
    )
