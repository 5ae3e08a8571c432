"""Cai et al. (ICLR 2021): per-layer cosine statistics, LID by layer, static word vectors and
the PCA view of a contextual embedding space.

The metrics are imported inside the functions that use them: importing a metric loads torch, and
the geometry tables (:mod:`isotropy.geometry`'s, the verdicts) are read in environments without it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from isotropy.embeddings.hidden_states import TokenEmbeddings

log = logging.getLogger(__name__)


def _sample_rows(n: int, sample_size: int | None, seed: int) -> np.ndarray:
    if sample_size is None or sample_size >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=sample_size, replace=False))


def cluster_cosine_statistics(
    points: np.ndarray,
    types: np.ndarray | None,
    *,
    max_per_type: int | None = None,
    seed: int = 0,
    **search: Any,
) -> tuple[dict[str, float], np.ndarray]:
    """S_inter, S_intra and the average random cosine, raw and after centring each cluster of
    :func:`silhouette_clusters` (``search``: its settings); returns them and the cluster labels.

    The "adjusted" values follow Cai et al.'s code (``--cluster_cos --center``: pairs inside a
    cluster, unweighted mean over clusters); ``_adjusted_pooled`` and ``average_cosine_adjusted``
    pool the whole centred space (our earlier convention); ``isoscore_within*`` is
    :func:`within_cluster_isotropy`, the judged measure. With ``types=None`` (static vectors)
    every word is its own type, and S_intra, undefined, is left out.
    """
    from isotropy.metrics import cluster_centred, per_cluster_cosine_statistics

    clusters = silhouette_clusters(points, seed, **search)
    centred = cluster_centred(points, clusters)
    stats: dict[str, float] = {"n_clusters": int(len(np.unique(clusters)))}
    stats["condition_number"], stats["numerical_rank"] = centred_condition_number(points)
    for suffix, space in (("", points), ("_adjusted_pooled", centred)):
        stats.update(_pooled_cosine_statistics(space, types, suffix, max_per_type, seed))
    stats["average_cosine_adjusted"] = stats.pop("average_cosine_adjusted_pooled")
    # static vectors: every word its own type, so S_inter is the mean over all pairs in a cluster
    per_cluster = per_cluster_cosine_statistics(
        points,
        np.arange(len(points)) if types is None else types,
        clusters,
        max_per_type=max_per_type,
        seed=seed,
        statistics=("s_inter",) if types is None else ("s_inter", "s_intra"),
    )
    stats["s_inter_adjusted"] = per_cluster["s_inter"]
    if types is not None:
        stats["s_intra_adjusted"] = per_cluster["s_intra"]
    stats.update(within_cluster_isotropy(points, clusters, seed))
    return stats, clusters


def layer_row(model: str, corpus: str, seed: int, layer: int, points: np.ndarray) -> dict:
    """What opens a contextual layer's row in the per-layer tables."""
    n, dim = points.shape
    return dict(model=model, kind="contextual", corpus=corpus, seed=seed, layer=layer, n=n, dim=dim)


def silhouette_clusters(
    points: np.ndarray,
    seed: int = 0,
    k_range: tuple[int, int] = (2, 15),
    silhouette_threshold: float = 0.1,
    silhouette_sample_size: int | None = 5000,
) -> np.ndarray:
    """k-means labels for the k in ``k_range`` of best silhouette (one cluster when none
    reaches ``silhouette_threshold``, as in Cai et al.), the silhouette on a seeded sample."""
    from isotropy.metrics import kmeans_by_silhouette

    labels = kmeans_by_silhouette(
        points,
        k_range=tuple(k_range),
        threshold=silhouette_threshold,
        seed=seed,
        sample_size=silhouette_sample_size,
    )
    return np.asarray(labels)


# A cluster needs this many points for its IsoScore to mean something (3: a covariance of rank
# 2, the least that can be more isotropic in one direction than in another).
MIN_CLUSTER_POINTS = 3


def within_cluster_isotropy(
    points: np.ndarray, clusters: np.ndarray, seed: int = 0
) -> dict[str, float]:
    """Isotropy within clusters by a measure that can fail: each cluster's IsoScore
    (``isoscore_within``) beside that of a seeded isotropic Gaussian sample of its size and
    dimension (``isoscore_within_isotropic``: IsoScore is low when n is not much larger than d),
    and their ratio (about 1 isotropic, about 0 needle-shaped); unweighted means over clusters of
    :data:`MIN_CLUSTER_POINTS` or more points. All NaN with one cluster or none of that size.
    """
    from isotropy.metrics import isoscore

    x = np.asarray(points, dtype=np.float64)
    ids = np.asarray(clusters)
    sizes = {c: int((ids == c).sum()) for c in np.unique(ids)}
    kept = [c for c, size in sizes.items() if size >= MIN_CLUSTER_POINTS]
    nan = {"isoscore_within": math.nan, "isoscore_within_isotropic": math.nan}
    if len(sizes) < 2 or not kept:
        return {**nan, "isoscore_within_ratio": math.nan}
    rng = np.random.default_rng(seed)
    ours = [isoscore(x[ids == c]) for c in kept]
    isotropic = [isoscore(rng.standard_normal((sizes[c], x.shape[1]))) for c in kept]
    found = {"isoscore_within": float(np.mean(ours))}
    found["isoscore_within_isotropic"] = float(np.mean(isotropic))
    found["isoscore_within_ratio"] = found["isoscore_within"] / found["isoscore_within_isotropic"]
    return found


def centred_condition_number(points: np.ndarray) -> tuple[float, int]:
    """Condition number ``s_max / s_r`` and numerical rank r of the mean-centred points (Cai et
    al.'s motivation), r by numpy's ``matrix_rank`` rule with the given data's ``eps``. Below r is
    rounding noise: a post-LayerNorm layer has rank d - 1 once centred, and its full-matrix ratio
    (about 1e7 for float32 states) would measure float32 rounding only.
    """
    from scipy.linalg import svdvals

    given = np.asarray(points)
    if given.ndim != 2 or len(given) < 2:
        raise ValueError(f"a condition number needs an n x d matrix, n >= 2; got {given.shape}")
    floating = np.issubdtype(given.dtype, np.floating)
    eps = np.finfo(given.dtype if floating else np.float64).eps
    x = given.astype(np.float64)
    singular = svdvals(x - x.mean(axis=0))
    rank = int(np.sum(singular > singular[0] * max(x.shape) * eps))
    if rank == 0:
        raise ValueError("the points are all equal: no condition number")
    return float(singular[0] / singular[rank - 1]), rank


def _pooled_cosine_statistics(
    space: np.ndarray, types: np.ndarray | None, suffix: str, max_per_type: int | None, seed: int
) -> dict[str, float]:
    """average_cosine, S_inter and (with types) S_intra of one space, all pairs pooled."""
    from isotropy.metrics import average_cosine_similarity, s_inter, s_intra

    stats = {f"average_cosine{suffix}": float(average_cosine_similarity(space, seed=seed))}
    if types is None:
        # every word its own type: the exact mean over all pairs of different words, as the
        # per-cluster value (so one cluster gives s_inter_adjusted == s_inter_adjusted_pooled)
        stats[f"s_inter{suffix}"] = float(s_inter(space, np.arange(len(space)), seed=seed))
        return stats
    for name, statistic in (("s_inter", s_inter), ("s_intra", s_intra)):
        value = statistic(space, types, max_per_type=max_per_type, seed=seed)
        stats[f"{name}{suffix}"] = float(value)
    return stats


def cosine_by_layer(
    embeddings: TokenEmbeddings,
    *,
    model: str,
    corpus: str,
    seed: int = 0,
    max_per_type: int | None = None,
    progress: bool = True,
    return_clusters: bool = False,
    **search: Any,
) -> pd.DataFrame | tuple[pd.DataFrame, list[np.ndarray]]:
    """One row per layer of :func:`cluster_cosine_statistics` (``search``: its clustering); with
    ``return_clusters`` also every layer's k-means labels (for :func:`pca_view`)."""
    from tqdm.auto import tqdm

    rows, labels = [], []
    n_types = int(len(np.unique(embeddings.token_ids)))
    for layer in tqdm(range(embeddings.n_layers), desc=f"{model} layers", disable=not progress):
        points = embeddings.layers[layer]
        stats, clusters = cluster_cosine_statistics(
            points, embeddings.token_ids, max_per_type=max_per_type, seed=seed, **search
        )
        rows.append({**layer_row(model, corpus, seed, layer, points), "n_types": n_types, **stats})
        labels.append(clusters)
        log.info("%s layer %d: %s", model, layer, {k: round(v, 4) for k, v in stats.items()})
    table = pd.DataFrame(rows, columns=COSINE_COLUMNS)
    return (table, labels) if return_clusters else table


# condition_number, numerical_rank: centred_condition_number of the layer's (or the static
# sample's) vectors.
COSINE_COLUMNS = [
    *("model", "kind", "corpus", "seed", "layer", "n", "n_types", "dim", "n_clusters"),
    *("s_inter", "s_intra", "average_cosine"),
    *("s_inter_adjusted", "s_intra_adjusted", "average_cosine_adjusted"),
    *("s_inter_adjusted_pooled", "s_intra_adjusted_pooled"),
    *("condition_number", "numerical_rank"),
    *("isoscore_within", "isoscore_within_isotropic", "isoscore_within_ratio"),
]
# lid_cai_scale: Cai et al.'s code (Euclidean: squared distances, half the MLE, their Figure 9;
# cosine: their Table 3);
# lid_true_distances: the Levina–Bickel MLE on distances. Equal for the cosine metric.
LID_COLUMNS = [
    *("model", "kind", "corpus", "seed", "layer", "metric", "k", "n", "dim"),
    *("lid_cai_scale", "lid_true_distances"),
]


def lid_table(
    points: np.ndarray,
    *,
    k: int = 100,
    metrics: Sequence[str] = ("euclidean", "cosine"),
    sample_size: int | None = 10000,
    seed: int = 0,
    **labels: Any,
) -> list[dict[str, Any]]:
    """Mean MLE local intrinsic dimension per distance (:data:`LID_COLUMNS`), on a seeded sample
    in which neighbours are searched (``n`` is the sample size)."""
    from isotropy.metrics import cai_local_intrinsic_dimension, local_intrinsic_dimension

    sample = points[_sample_rows(len(points), sample_size, seed)]
    if len(sample) <= k:
        raise ValueError(
            f"LID with k={k} needs more than {k} points; got {len(sample)} "
            "(lower geometry.clusters.lid_k or embed more tokens)"
        )
    fixed = {**labels, "seed": seed, "k": k, "n": len(sample), "dim": sample.shape[1]}
    return [
        {
            **fixed,
            "metric": metric,
            "lid_cai_scale": cai_local_intrinsic_dimension(sample, k=k, metric=metric),
            "lid_true_distances": local_intrinsic_dimension(sample, k=k, metric=metric),
        }
        for metric in metrics
    ]


def lid_by_layer(
    embeddings: TokenEmbeddings,
    *,
    model: str,
    corpus: str,
    seed: int = 0,
    k: int = 100,
    metrics: Sequence[str] = ("euclidean", "cosine"),
    sample_size: int | None = 10000,
    progress: bool = True,
) -> pd.DataFrame:
    """LID of every layer's token embeddings (the same token sample at every layer)."""
    from tqdm.auto import tqdm

    rows: list[dict[str, Any]] = []
    options: dict[str, Any] = dict(k=k, metrics=metrics, sample_size=sample_size, seed=seed)
    for layer in tqdm(range(embeddings.n_layers), desc=f"{model} LID", disable=not progress):
        points = embeddings.layers[layer]
        rows += lid_table(
            points, model=model, kind="contextual", corpus=corpus, layer=layer, **options
        )
    return pd.DataFrame(rows, columns=LID_COLUMNS)


def static_geometry(
    vectors: np.ndarray,
    *,
    name: str,
    seed: int = 0,
    sample_size: int | None = 10000,
    lid_k: int = 100,
    lid_metrics: Sequence[str] = ("euclidean", "cosine"),
    **search: Any,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cosine statistics and LID of a seeded sample of static word vectors (the comparison rows;
    one vector per word, so S_intra is left empty)."""
    sample = vectors[_sample_rows(len(vectors), sample_size, seed)].astype(np.float32)
    stats, _ = cluster_cosine_statistics(sample, None, seed=seed, **search)
    labels = {"model": name, "kind": "static", "corpus": "", "layer": pd.NA}
    sizes = {"n": len(sample), "n_types": len(sample), "dim": sample.shape[1]}
    cosine = pd.DataFrame([{**labels, "seed": seed, **sizes, **stats}], columns=COSINE_COLUMNS)
    lid = pd.DataFrame(
        lid_table(sample, k=lid_k, metrics=lid_metrics, sample_size=None, seed=seed, **labels),
        columns=LID_COLUMNS,
    )
    return cosine, lid


def layer_index(embeddings: TokenEmbeddings, layer: int, *, set_by: str = "") -> int:
    """The index of ``layer`` (negative counts from the last), refused if the model has no such
    layer; the error names ``set_by``, the settings that chose it, if given."""
    try:
        return range(embeddings.n_layers)[layer]
    except IndexError:
        chosen = f" ({set_by})" if set_by else ""
        raise ValueError(
            f"layer {layer}{chosen} does not exist: the model has {embeddings.n_layers} "
            "hidden-state layers"
        ) from None


def pca_view(
    embeddings: TokenEmbeddings,
    layer: int,
    *,
    sample_size: int | None = 5000,
    seed: int = 0,
    clusters: np.ndarray | None = None,
    **search: Any,
) -> pd.DataFrame:
    """First three principal components of a seeded sample of one layer's tokens (``layer`` may
    be negative), with their k-means clusters (found on the full layer unless given)."""
    from sklearn.decomposition import PCA

    index = layer_index(embeddings, layer)
    points = embeddings.layers[index]
    if clusters is not None:
        if len(clusters) != len(points):
            raise ValueError(f"{len(clusters)} cluster labels for {len(points)} points")
    else:
        clusters = silhouette_clusters(points, seed, **search)
    clusters = np.asarray(clusters)
    pca = PCA(n_components=3, random_state=seed).fit(points)
    rows = _sample_rows(len(points), sample_size, seed)
    projected = pca.transform(points[rows])
    table = pd.DataFrame(projected, columns=["pc1", "pc2", "pc3"])
    table.insert(0, "layer", index)
    table["cluster"] = clusters[rows]
    table["token"] = embeddings.tokens[rows]
    for i, ratio in enumerate(pca.explained_variance_ratio_, start=1):
        table[f"variance_ratio_pc{i}"] = float(ratio)
    return table
