"""Intrinsic dimension: local intrinsic dimension (Levina & Bickel MLE, on Cai et al.'s scale too)
and TwoNN (Facco et al. 2017).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import torch

from isotropy.metrics.checks import ArrayLike, checked_points, default_block
from isotropy.metrics.cosines import unit_rows

log = logging.getLogger(__name__)


def _nearest_distances(
    x: torch.Tensor, k: int, metric: str = "euclidean", block_size: int | None = None
) -> torch.Tensor:
    """Sorted distances (n, k) from every point to its k nearest *other* points, float64."""
    n = x.shape[0]
    x = x.detach().to(torch.float64)
    if metric == "cosine":
        x = unit_rows(x)
    else:
        x = x - x.mean(dim=0, keepdim=True)  # translation-invariant; smaller cancellation
    sq = (x * x).sum(dim=1)
    block = default_block(n, block_size)
    out = torch.empty(n, k, dtype=torch.float64, device=x.device)
    for start in range(0, n, block):
        stop = min(start + block, n)
        gram = x[start:stop] @ x.T
        if metric == "cosine":
            dist = (1.0 - gram).clamp_(min=0.0)
        else:
            dist = gram.mul_(-2.0).add_(sq[start:stop, None]).add_(sq[None, :]).clamp_(min=0.0)
        rows = torch.arange(start, stop, device=x.device)
        dist[rows - start, rows] = math.inf  # exclude the point itself
        nearest = torch.topk(dist, k, dim=1, largest=False, sorted=True).values
        out[start:stop] = nearest if metric == "cosine" else nearest.sqrt()
    return out


def _first_occurrences(x: torch.Tensor) -> torch.Tensor:
    """Indices (ascending) of the first occurrence of every distinct row."""
    _, inverse = torch.unique(x, dim=0, return_inverse=True)
    n = x.shape[0]
    first = torch.full((int(inverse.max()) + 1,), n, dtype=torch.long, device=x.device)
    first.scatter_reduce_(0, inverse, torch.arange(n, device=x.device), reduce="amin")
    return first.sort().values


def _has_duplicate(x: torch.Tensor) -> torch.Tensor:
    """Boolean mask of rows that occur more than once (exactly)."""
    _, inverse, counts = torch.unique(x, dim=0, return_inverse=True, return_counts=True)
    return counts[inverse] > 1


def _lid_pointwise(points: ArrayLike, k: int, metric: str, distances: str = "true") -> torch.Tensor:
    if distances not in ("true", "squared"):
        raise ValueError(f"distances must be 'true' or 'squared'; found {distances!r}")
    if metric not in ("euclidean", "cosine"):
        raise ValueError(f"metric must be 'euclidean' or 'cosine'; found {metric!r}")
    x = checked_points(points, min_rows=2).detach().to(torch.float64)
    if metric == "cosine":
        x = unit_rows(x)
    keep = _first_occurrences(x)
    if keep.shape[0] < x.shape[0]:
        log.warning("LID: dropping %d duplicate points (zero distance)", x.shape[0] - keep.shape[0])
    unique = x[keep]
    n = unique.shape[0]
    if not 1 <= k < n:
        raise ValueError(
            f"k must be between 1 and the number of distinct points - 1 = {n - 1}; found k={k}"
        )
    with torch.no_grad():
        r = _nearest_distances(unique, k, metric)
        if bool((r[:, 0] <= 0).any()):
            raise ValueError(
                f"{int((r[:, 0] <= 0).sum())} points have a neighbour at distance 0 ({metric}); "
                "LID needs distinct points (remove duplicates or parallel vectors)"
            )
        if distances == "squared":
            r = r * r  # what a faiss IndexFlatL2 search returns (Cai et al.'s code)
        logs = torch.log(r / r[:, -1:]).sum(dim=1)  # Σ_j log(r_ij / r_ik) <= 0
        if bool((logs == 0).any()):
            raise ValueError(
                "some points have k equidistant neighbours; LID is undefined there (use a larger k)"
            )
        return -k / logs


def local_intrinsic_dimension(
    points: ArrayLike, k: int = 100, metric: str = "euclidean", distances: str = "true"
) -> float:
    """Mean local intrinsic dimension, MLE of Levina & Bickel as used by Cai et al. (2021):
    LID_i = -(1/k Σ_{j=1..k} log(r_ij / r_ik))^-1 over the k nearest neighbours (Euclidean or
    1 - cos), exact duplicates dropped. ``distances="squared"`` puts r² in the formula, as Cai et
    al.'s faiss ``IndexFlatL2`` code does: exactly half the estimate on distances.
    """
    return float(_lid_pointwise(points, k, metric, distances).mean())


def cai_local_intrinsic_dimension(
    points: ArrayLike, k: int = 100, metric: str = "euclidean"
) -> float:
    """LID on the scale of Cai et al.'s code: squared Euclidean distances (a faiss L2 index; their
    Figure 9), 1 - cos for cosine (their inner-product index, the same as ours; their Table 3)."""
    return local_intrinsic_dimension(
        points, k, metric, distances="squared" if metric == "euclidean" else "true"
    )


def twonn_dimension(points: ArrayLike) -> float:
    """TwoNN intrinsic dimension (Facco et al. 2017), equal to ``skdim.id.TwoNN()`` defaults:
    the slope through the origin of -log(1 - F_emp(μ)) on log μ = log(r2/r1), the 10 % largest μ
    and the points with r1 = 0 (duplicates, with a warning) left out."""
    x = checked_points(points, min_rows=3)
    with torch.no_grad():
        nearest = _nearest_distances(x, 2, "euclidean")
        # exact duplicates have r1 = 0 exactly, whatever the rounding of the dot-product distances
        nearest[_has_duplicate(x.detach()), 0] = 0.0
        r = nearest.cpu().numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = r[:, 1] / r[:, 0]
    finite = np.isfinite(mu)
    if not finite.all():
        log.warning("TwoNN: dropping %d points with a duplicate", int((~finite).sum()))
        mu = mu[finite]
    n_total = len(mu)
    n_keep = int(n_total * (1 - 0.1))
    if n_keep < 2:
        raise ValueError(
            "TwoNN needs at least 2 points after discarding duplicates and the top 10%; found "
            f"{n_keep}"
        )
    log_mu = np.log(np.sort(mu)[:n_keep])
    target = -np.log(1 - np.arange(1, n_keep + 1) / n_total)
    denom = float(log_mu @ log_mu)
    if denom == 0:
        raise ValueError(
            "all neighbour-distance ratios are 1 (a regular grid?); TwoNN is undefined"
        )
    return float(log_mu @ target / denom)
