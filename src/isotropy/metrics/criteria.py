"""The cluster criteria the main paper names beside the silhouette (Mickus et al. 2024,
Limitations), as per-update tensor functions of the metric registry (points, a
:class:`~isotropy.metrics.clusters.ClusterLayout`) and as checked functions returning floats:

* Dunn: the smallest distance between points of different clusters over the largest
  within-cluster diameter (Euclidean; distances streamed in row blocks);
* Caliński–Harabasz and Davies–Bouldin: scikit-learn's ``calinski_harabasz_score`` and
  ``davies_bouldin_score`` (``tests/test_criteria.py`` checks both against it).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from isotropy.metrics.checks import (
    ArrayLike,
    check_cluster_count,
    checked_cluster_ids,
    checked_points,
    default_block,
)
from isotropy.metrics.clusters import ClusterLayout, cluster_layout


def _sorted_points(points: torch.Tensor, layout: ClusterLayout) -> torch.Tensor:
    """The points in float64, sorted by cluster (cluster c is rows ``bounds[c]:bounds[c+1]``)."""
    return points.detach()[layout.order].to(torch.float64)


def _centroids(x: torch.Tensor, layout: ClusterLayout) -> torch.Tensor:
    """Cluster means of sorted points (k x d, float64)."""
    sums = torch.zeros(layout.n_clusters, x.shape[1], dtype=x.dtype, device=x.device)
    sums.index_add_(0, layout.ids, x)
    return sums / layout.counts[:, None]


def calinski_harabasz_tensor(points: torch.Tensor, layout: ClusterLayout) -> torch.Tensor:
    """Caliński–Harabasz index of unchecked points for a prepared layout (0-d float64 tensor)."""
    x = _sorted_points(points, layout)
    n, k = x.shape[0], layout.n_clusters
    centroids = _centroids(x, layout)
    between = (layout.counts * ((centroids - x.mean(dim=0)) ** 2).sum(dim=1)).sum()
    within = ((x - centroids[layout.ids]) ** 2).sum()
    # scikit-learn returns 1.0 when every point sits on its centroid
    return torch.where(within > 0, between * (n - k) / (within.clamp(min=1e-300) * (k - 1)), 1.0)


def davies_bouldin_tensor(points: torch.Tensor, layout: ClusterLayout) -> torch.Tensor:
    """Davies–Bouldin index of unchecked points for a prepared layout (0-d float64 tensor)."""
    x = _sorted_points(points, layout)
    centroids = _centroids(x, layout)
    spread = torch.zeros(layout.n_clusters, dtype=x.dtype, device=x.device)
    spread.index_add_(0, layout.ids, torch.linalg.vector_norm(x - centroids[layout.ids], dim=1))
    spread = spread / layout.counts
    separation = torch.cdist(centroids, centroids)
    ratio = (spread[:, None] + spread[None, :]) / separation.clamp(min=1e-300)
    ratio = torch.where(separation > 0, ratio, math.inf)  # scikit-learn: coincident centroids → inf
    ratio.fill_diagonal_(-math.inf)
    return ratio.amax(dim=1).mean()


def dunn_tensor(
    points: torch.Tensor, layout: ClusterLayout, *, block_size: int | None = None
) -> torch.Tensor:
    """Dunn index of unchecked points for a prepared layout (0-d float64 tensor), the distances
    streamed in row blocks (memory O(block x n))."""
    x = _sorted_points(points, layout)
    n = x.shape[0]
    block = default_block(n, block_size)
    ids = layout.ids
    nearest = torch.tensor(math.inf, dtype=x.dtype, device=x.device)
    diameter = torch.zeros((), dtype=x.dtype, device=x.device)
    for start in range(0, n, block):
        stop = min(start + block, n)
        dist = torch.cdist(x[start:stop], x)
        same = ids[start:stop, None] == ids[None, :]
        nearest = torch.minimum(nearest, torch.where(same, math.inf, dist).amin())
        diameter = torch.maximum(diameter, torch.where(same, dist, 0.0).amax())
    return torch.where(diameter > 0, nearest / diameter.clamp(min=1e-300), math.inf)


def _checked(points: ArrayLike, labels) -> tuple[torch.Tensor, ClusterLayout]:
    x = checked_points(points, min_rows=2)
    ids = checked_cluster_ids(labels, x.shape[0])
    check_cluster_count(len(np.unique(ids)), x.shape[0])
    return x, cluster_layout(ids, x.device)


def calinski_harabasz(points: ArrayLike, labels) -> float:
    """Caliński–Harabasz index; labels as for :func:`~isotropy.metrics.clusters.silhouette`."""
    return float(calinski_harabasz_tensor(*_checked(points, labels)))


def davies_bouldin(points: ArrayLike, labels) -> float:
    """Davies–Bouldin index; labels as for :func:`~isotropy.metrics.clusters.silhouette`."""
    return float(davies_bouldin_tensor(*_checked(points, labels)))


def dunn(points: ArrayLike, labels) -> float:
    """Dunn index; labels as for :func:`~isotropy.metrics.clusters.silhouette`."""
    return float(dunn_tensor(*_checked(points, labels)))


def dunn_brute_force(points: ArrayLike, labels) -> float:
    """Dunn index by a plain double loop over point pairs (the reference of the tests)."""
    x = np.asarray(points, dtype=np.float64)
    y = checked_cluster_ids(labels, x.shape[0])
    nearest, diameter = math.inf, 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            d = float(np.sqrt(((x[i] - x[j]) ** 2).sum()))
            if y[i] == y[j]:
                diameter = max(diameter, d)
            else:
                nearest = min(nearest, d)
    return nearest / diameter if diameter > 0 else math.inf
