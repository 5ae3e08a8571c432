"""Clusters (Cai et al. 2021): k-means with k chosen by silhouette, cluster-centred points, and the
scikit-learn cluster indices (Calinski–Harabasz, Davies–Bouldin).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from isotropy.metrics.checks import (
    ArrayLike,
    check_cluster_count,
    checked_cluster_ids,
    numpy_points,
)
from isotropy.metrics.silhouettes import silhouette

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------------------------
# clusters (Cai et al. 2021)
# ----------------------------------------------------------------------------------------------


def kmeans_by_silhouette(
    points: ArrayLike,
    k_range: tuple[int, int] = (2, 15),
    threshold: float = 0.1,
    seed: int = 0,
    sample_size: int | None = 5000,
) -> np.ndarray:
    """K-means cluster labels, k chosen by the best silhouette over ``k_range`` (inclusive).

    Following Cai et al. (2021): when the best silhouette is below ``threshold`` the space has no
    cluster structure and every point gets cluster 0 (k = 1). Silhouettes are computed on one
    seeded sub-sample of ``sample_size`` points (None: all points), the same for every k.
    """
    from sklearn.cluster import KMeans

    x = numpy_points(points, min_rows=3)
    n = x.shape[0]
    low, high = int(k_range[0]), int(k_range[1])
    if low < 2 or high < low:
        raise ValueError(f"k_range must be (low, high) with 2 <= low <= high; found {k_range}")
    high = min(high, n - 1)
    if high < low:
        raise ValueError(f"k_range {k_range} needs more than {low} points; found {n}")
    best_score, best_labels = -math.inf, None
    for k in range(low, high + 1):
        labels = KMeans(n_clusters=k, random_state=seed, n_init="auto").fit_predict(x)
        if len(np.unique(labels)) < 2:
            continue  # degenerate fit (duplicate points): no silhouette defined
        sample = None if sample_size is None or sample_size >= n else sample_size
        score = silhouette(x, labels, sample_size=sample, seed=seed)
        log.debug("k-means k=%d silhouette %.4f", k, score)
        if score > best_score:
            best_score, best_labels = score, labels
    if best_labels is None or best_score < threshold:
        return np.zeros(n, dtype=np.int64)
    return best_labels.astype(np.int64)


def cluster_centred(points: ArrayLike, clusters) -> np.ndarray:
    """Subtract each cluster's mean from its members (numpy float64 out)."""
    x = numpy_points(points, min_rows=1).astype(np.float64)
    ids = checked_cluster_ids(clusters, x.shape[0], name="clusters")
    k = int(ids.max()) + 1
    sums = np.zeros((k, x.shape[1]))
    np.add.at(sums, ids, x)
    means = sums / np.bincount(ids, minlength=k)[:, None]
    return x - means[ids]


# ----------------------------------------------------------------------------------------------
# scikit-learn cluster indices
# ----------------------------------------------------------------------------------------------


def _sklearn_inputs(points: ArrayLike, labels) -> tuple[np.ndarray, np.ndarray]:
    x = numpy_points(points, min_rows=2)
    ids = checked_cluster_ids(labels, x.shape[0])
    check_cluster_count(len(np.unique(ids)), x.shape[0])
    return x, ids


def calinski_harabasz(points: ArrayLike, labels) -> float:
    """Calinski–Harabasz index (scikit-learn); labels as for :func:`silhouette`."""
    from sklearn.metrics import calinski_harabasz_score

    x, ids = _sklearn_inputs(points, labels)
    return float(calinski_harabasz_score(x, ids))


def davies_bouldin(points: ArrayLike, labels) -> float:
    """Davies–Bouldin index (scikit-learn); labels as for :func:`silhouette`."""
    from sklearn.metrics import davies_bouldin_score

    x, ids = _sklearn_inputs(points, labels)
    return float(davies_bouldin_score(x, ids))
