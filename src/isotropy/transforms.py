"""Isotropy-enhancing transforms of embeddings, numpy in and out (the STS comparison's sentence
embeddings, the Rajaee CLS study's batch CLS states): :func:`centre`, :func:`all_but_the_top` (Mu
& Viswanath 2018) and :func:`cluster_based_isotropy` (Rajaee & Pilehvar 2021), computed in
float64 and returned in the input's floating dtype (integers give float64)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)


def _check_points(points, *, min_rows: int = 1) -> tuple[np.ndarray, np.dtype]:
    """The points checked as every metric checks them (:func:`isotropy.metrics.checks.
    numpy_points`), in float64, and the output dtype (half precision comes back as float32)."""
    from isotropy.metrics.checks import numpy_points  # imports torch: only when transforming

    x = numpy_points(points, min_rows=min_rows)
    return x.astype(np.float64), x.dtype


def centre(points) -> np.ndarray:
    """Subtract the mean vector."""
    x, dtype = _check_points(points)
    return (x - x.mean(axis=0)).astype(dtype)


def all_but_the_top(points, n_directions: int) -> np.ndarray:
    """All-but-the-top (Mu & Viswanath 2018): centre, remove the top ``n_directions`` (0: none)
    principal directions."""
    x, dtype = _check_points(points, min_rows=2)
    limit = min(x.shape) - 1
    if not 0 <= n_directions <= limit:
        raise ValueError(
            f"n_directions must be between 0 and min(n, d) - 1 = {limit}; found {n_directions}"
        )
    centred = x - x.mean(axis=0)
    top = _top_directions(centred, int(n_directions))  # none: centring only
    return (centred - (centred @ top.T) @ top).astype(dtype)


@dataclass(frozen=True)
class ClusterFit:
    """What :func:`fit_cluster_transform` learns from a set of points: each point's cluster and,
    per cluster, whether it is centred and the top principal directions removed from it (rows of
    ``directions[cluster]``, k × d, k = 0 for none)."""

    labels: np.ndarray
    centred: dict[int, bool]
    directions: dict[int, np.ndarray]


def fit_cluster_transform(
    points, n_clusters: int = 27, n_directions: int = 12, seed: int = 0, method: str = "kmeans"
) -> ClusterFit:
    """The clusters and per-cluster directions of :func:`cluster_based_isotropy` (seeded), apart
    from it so that fine-tuning applies them to torch tensors (isotropy.rajaee_cls.method)."""
    x, _ = _check_points(points, min_rows=2)
    n = x.shape[0]
    if not 1 <= n_clusters <= n:
        raise ValueError(
            f"n_clusters must be between 1 and the number of points {n}; found {n_clusters}"
        )
    if n_directions < 0 or n_directions >= x.shape[1]:
        raise ValueError(
            f"n_directions must be between 0 and d - 1 = {x.shape[1] - 1}; found {n_directions}"
        )
    if method == "kmeans":
        from sklearn.cluster import KMeans

        labels = KMeans(n_clusters=n_clusters, random_state=seed, n_init="auto").fit_predict(x)
    elif method == "gmm":
        from sklearn.mixture import GaussianMixture

        mixture = GaussianMixture(n_clusters, covariance_type="diag", random_state=seed)
        labels = mixture.fit_predict(x)
    else:
        raise ValueError(f"method must be 'kmeans' or 'gmm'; found {method!r}")
    centred: dict[int, bool] = {}
    directions: dict[int, np.ndarray] = {}
    for cluster in (int(c) for c in np.unique(labels)):
        members = labels == cluster
        size = int(members.sum())
        if size == 1:
            # Centring a lone point makes it the zero vector, which has no cosine: keep it as it is.
            log.warning("cluster %d has a single point: left uncentred", cluster)
            centred[cluster], directions[cluster] = False, np.empty((0, x.shape[1]))
            continue
        block = x[members] - x[members].mean(axis=0)
        # A centred cluster of m points spans at most m - 1 directions: removing them all would
        # zero every member, so at least one is kept.
        available = min(n_directions, size - 2)
        if available < n_directions:
            said = "cluster %d has %d points: removing %d directions instead of %d"
            log.info(said, cluster, size, available, n_directions)
        centred[cluster] = True
        directions[cluster] = _top_directions(block, available)
    return ClusterFit(np.asarray(labels), centred, directions)


def _top_directions(centred: np.ndarray, n_directions: int) -> np.ndarray:
    """The top ``n_directions`` principal directions (rows) of already-centred rows."""
    if n_directions == 0:
        return np.empty((0, centred.shape[1]))
    # right singular vectors of the centred data = principal directions, by explained variance
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return vt[:n_directions]


def cluster_based_isotropy(
    points, n_clusters: int = 27, n_directions: int = 12, seed: int = 0, method: str = "kmeans"
) -> np.ndarray:
    """Cluster-based isotropy enhancement (Rajaee & Pilehvar 2021), seeded: each cluster (k-means,
    or ``gmm``: a diagonal Gaussian mixture's hard assignments) centred on its own mean and its top
    ``n_directions`` principal directions removed; a cluster of m points loses at most m - 2 and a
    lone point stays uncentred, so no member becomes the zero vector (both logged)."""
    x, dtype = _check_points(points, min_rows=2)
    fit = fit_cluster_transform(x, n_clusters, n_directions, seed, method)
    out = x.copy()  # an uncentred cluster stays as it is
    for cluster, top in fit.directions.items():
        if fit.centred[cluster]:
            members = fit.labels == cluster
            block = x[members] - x[members].mean(axis=0)
            out[members] = block - (block @ top.T) @ top
    return out.astype(dtype)
