"""Clusters (Cai et al. 2021): k-means with k chosen by silhouette, cluster-centred points, and
the mean silhouette (scikit-learn's definition) streamed in distance blocks without an n x n
matrix, on a cluster layout prepared once for many silhouettes of the same points.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from isotropy.metrics.checks import (
    ArrayLike,
    check_cluster_count,
    checked_cluster_ids,
    checked_points,
    cluster_ids,
    default_block,
    float64_mean,
    ieee_float32_matmul,
    numpy_points,
)

log = logging.getLogger(__name__)


def kmeans_by_silhouette(
    points: ArrayLike,
    k_range: tuple[int, int] = (2, 15),
    threshold: float = 0.1,
    seed: int = 0,
    sample_size: int | None = 5000,
) -> np.ndarray:
    """K-means labels, k of the best silhouette over ``k_range`` (inclusive; on one seeded
    sub-sample of ``sample_size`` points); all 0 when it is below ``threshold`` (Cai et al.)."""
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


# Below this many points silhouette distances are computed in float64 (cheap there); above it in
# float32 on centred data, with float64 accumulation of the per-cluster sums (error ~1e-6).
_SILHOUETTE_FLOAT64_BELOW = 4096


def _subsample(n: int, sample_size: int | None, seed: int | None) -> np.ndarray | None:
    """Row indices of the seeded sub-sample, drawn as scikit-learn's silhouette_score does."""
    if sample_size is None:
        return None
    if sample_size < 2:
        raise ValueError(f"sample_size must be at least 2 points; found {sample_size}")
    rng = np.random.RandomState(seed)
    return rng.permutation(n)[:sample_size]


# Above this many cluster segments in one distance block, per-cluster sums come from one pass
# (accelerators: float64 running sums; the CPU: index_add_) instead of one slice per cluster.
_FEW_SEGMENTS = 8
# Rows per distance block on the CPU: the block (n x 256 float32) stays in cache across its passes
# and the product is near MKL's best (measured: 128 and 512 rows are slower).
_CPU_BLOCK_ROWS = 256
# Elements per distance block on accelerators (128 MB of float32): a few large products instead of
# many small ones, whose launches dominated on an H100 (n = 10,662: 6.2 ms with the 16M default,
# 3.0 ms with 4,096-row blocks; benchmarks/optimize.py).
_ACCELERATOR_BLOCK_ELEMENTS = 1 << 25


@dataclass(eq=False)
class ClusterLayout:
    """Cluster labels prepared once for many silhouettes of the same points: ``order`` sorts the
    points by cluster c into rows ``bounds[c]:bounds[c+1]`` (host integers: no device sync);
    ``ids`` (sorted points' cluster ids) and ``counts`` (float64 sizes) live on the device."""

    order: torch.Tensor
    ids: torch.Tensor
    counts: torch.Tensor
    bounds: np.ndarray
    _gather_cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_clusters(self) -> int:
        return len(self.bounds) - 1

    def cluster_of(self, row: int) -> int:
        """Cluster of a sorted row."""
        return int(np.searchsorted(self.bounds, row, side="right")) - 1


def to_device(array: np.ndarray, device: torch.device | str | None) -> torch.Tensor:
    """Upload without a host sync (pinned memory and an asynchronous copy on CUDA)."""
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def cluster_layout(
    labels, device: torch.device | str | None = None, *, n: int | None = None
) -> ClusterLayout:
    """Prepare ``labels`` (as for :func:`silhouette`) once for repeated silhouettes."""
    ids = cluster_ids(labels) if n is None else checked_cluster_ids(labels, n)  # 0..K-1, all used
    counts = np.bincount(ids)
    check_cluster_count(len(counts), len(ids))
    order = np.argsort(ids, kind="stable")
    return ClusterLayout(
        order=to_device(order, device),
        ids=to_device(ids[order], device),
        counts=to_device(counts.astype(np.float64), device),
        bounds=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
    )


def _transposed_cpu_blocks(device: torch.device) -> bool:
    """The CPU computes distance blocks transposed; tests run the accelerator path on it too."""
    return device.type == "cpu"


def _segment_sums(
    values: torch.Tensor, dim: int, ends: np.ndarray, layout: ClusterLayout, key: tuple
) -> torch.Tensor:
    """Float64 sums of consecutive segments of ``values`` along ``dim`` (segment k ends before
    ``ends[k]``), in one pass whatever the number of segments (accelerators)."""
    starts = np.concatenate([[0], ends[:-1]])
    if len(ends) <= _FEW_SEGMENTS:
        # torch sums pairwise in the native dtype: accurate; then float64 for the accumulation
        parts = [
            values.narrow(dim, a, b - a).sum(dim=dim, keepdim=True)
            for a, b in zip(starts.tolist(), ends.tolist())
        ]
        return torch.cat(parts, dim=dim).to(torch.float64)
    gather = layout._gather_cache.get(key)
    if gather is None:
        gather = layout._gather_cache[key] = to_device(ends - 1, values.device)
    return _segment_sums_cumulative(values, dim, gather)


def _segment_sums_cumulative(
    values: torch.Tensor, dim: int, last_of_segment: torch.Tensor
) -> torch.Tensor:
    """Segment sums from float64 running sums (any device; used on accelerators): a segment is
    the difference of two running sums, whose rounding error is ~1e-16 of the row total."""
    if dim == 0:  # GPUs scan the innermost dimension far faster: transpose within the float64 copy
        return _segment_sums_cumulative(values.T, 1, last_of_segment).T
    running = values.to(torch.float64, memory_format=torch.contiguous_format, copy=True)
    running = running.cumsum_(dim=1).index_select(1, last_of_segment)
    return torch.diff(running, dim=1, prepend=torch.zeros_like(running[:, :1]))


def _distance_factors(
    points: torch.Tensor, order: torch.Tensor, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """The points gathered in ``order``, centred, as factors [-2x, |x|², 1] and [x, 1, |x|²]: the
    product of a row of one and a row of the other is |x - y|², so one matmul yields squared
    distances without a pass adding the norms. Centring (in float64, without a float64 copy)
    keeps the |x|² + |y|² - 2xy cancellation small; distances are translation-invariant.
    Memory peaks at two copies of the points: the gathered copy is freed before ``right`` exists
    and no temporary of the points' size is made."""
    x = points.detach()[order]  # a copy: centred in place
    x = x.sub_(float64_mean(x).to(x.dtype)).to(dtype)
    n, d = x.shape
    width = -(-(d + 2) // 8) * 8  # zero-padded to a multiple of 8: aligned rows for the BLAS
    left = torch.zeros(n, width, dtype=dtype, device=x.device)
    left[:, :d] = x
    del x
    right = torch.zeros_like(left)
    right[:, :d] = left[:, :d]
    squares = torch.linalg.vector_norm(right[:, :d], dim=1).square_()
    left[:, :d].mul_(-2.0)
    left[:, d], left[:, d + 1] = squares, 1.0
    right[:, d], right[:, d + 1] = 1.0, squares
    return left, right


def _distances(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """Euclidean distances from the factors' products, in place (rounding can make them < 0)."""
    return (left @ right.T).clamp_(min=0.0).sqrt_()


class _Block(NamedTuple):
    """Rows ``start:stop`` of the points sorted by cluster, which hold clusters ``first..last``."""

    start: int
    stop: int
    first: int
    last: int


def _block_sums(left: torch.Tensor, right: torch.Tensor, layout: ClusterLayout, block: _Block):
    """Row block ``start:stop`` against the columns ``start:``, float64 sums: its rows' distances
    to the clusters ``first..`` (clusters x rows), and the later rows' distances to the block's
    clusters ``first..last`` (clusters x later rows; None for the last block). Accelerators: a
    ``rows x columns`` block, cluster sums by slices or running sums (one pass each way)."""
    start, stop, first, last = block
    n, rows = left.shape[0], stop - start
    dist = _distances(left[start:stop], right[start:])
    torch.diagonal(dist[:, :rows]).zero_()  # a point's distance to itself is exactly 0
    ends = np.minimum(layout.bounds[first + 1 :], n) - start
    sums = _segment_sums(dist, 1, ends, layout, (start, stop, 1)).T
    if stop == n:
        return sums, None
    ends = np.minimum(layout.bounds[first + 1 : last + 2], stop) - start
    return sums, _segment_sums(dist[:, rows:], 0, ends, layout, (start, stop, 0))


def _cpu_block_sums(left: torch.Tensor, right: torch.Tensor, layout: ClusterLayout, block: _Block):
    """:func:`_block_sums` on the CPU: the block is computed transposed (``columns x rows``), for
    which MKL's product is markedly faster (measured: 0.4 instead of 0.55 of a full ``x @ x.T`` for
    the half product). Cluster sums down the columns: one torch sum per cluster (few clusters) or
    one ``index_add_`` pass (many, hence short); across the rows: numpy's pairwise ``reduceat``.
    (Products with one-hot matrices measured 3-10x slower for both at these shapes.)"""
    start, stop, first, last = block
    n, rows = left.shape[0], stop - start
    dist = _distances(right[start:], left[start:stop])
    torch.diagonal(dist[:rows]).zero_()  # a point's distance to itself is exactly 0
    ends = np.minimum(layout.bounds[first + 1 :], n) - start
    if len(ends) <= _FEW_SEGMENTS:
        segment_starts = [0, *ends[:-1].tolist()]
        sums = torch.stack([dist[a:b].sum(dim=0) for a, b in zip(segment_starts, ends.tolist())])
    else:
        column_ids = layout.ids[start:] - first
        sums = dist.new_zeros(len(ends), rows).index_add_(0, column_ids, dist)
    sums = sums.to(torch.float64)
    if stop == n:
        return sums, None
    if first == last:
        return sums, dist[rows:].sum(dim=1).to(torch.float64)[None]  # no float64 copy
    starts = layout.bounds[first : last + 1] - start
    starts[0] = 0
    later = np.add.reduceat(dist[rows:].numpy(), starts, axis=1)
    return sums, torch.from_numpy(later).T.to(torch.float64)


def _streamed_silhouette_sum(
    left: torch.Tensor, right: torch.Tensor, layout: ClusterLayout, block: int
) -> torch.Tensor:
    """Sum over points of their silhouette (0-d float64), one pass over the pairs, no K x n array.

    With the points sorted by cluster, row block I is compared with the columns from I's first
    row on (each pair once, serving both ways): block I's rows get their sums to every cluster
    starting in or after I, completed by ``pending`` (the cluster still open at I's start), and
    are scored at once; the later rows get their sums to I's clusters, a closed one folded into
    their running ``nearest`` mean distance, the open one carried in ``pending``.
    """
    n = left.shape[0]
    bounds, ids, counts = layout.bounds, layout.ids, layout.counts
    block_sums = _cpu_block_sums if _transposed_cpu_blocks(left.device) else _block_sums
    pending = torch.zeros(n, dtype=torch.float64, device=left.device)
    nearest = torch.full((n,), math.inf, dtype=torch.float64, device=left.device)
    total = torch.zeros((), dtype=torch.float64, device=left.device)
    for start in range(0, n, block):
        stop = min(start + block, n)
        first, last = layout.cluster_of(start), layout.cluster_of(stop - 1)
        # block I's rows: sums to clusters first.. (columns start..n), completed by `pending`;
        # the later rows: sums to block I's clusters first..last
        sums, later = block_sums(left, right, layout, _Block(start, stop, first, last))
        sums[0] += pending[start:stop]
        own = ids[None, start:stop] - first
        own_sums = sums.gather(0, own).squeeze(0)
        own_counts = counts[ids[start:stop]]
        means = sums.div_(counts[first:, None]).scatter_(0, own, math.inf)
        inter = torch.minimum(means.amin(dim=0), nearest[start:stop])
        intra = own_sums / (own_counts - 1).clamp(min=1)
        denom = torch.maximum(intra, inter)
        scores = torch.where(denom > 0, (inter - intra) / torch.where(denom > 0, denom, 1.0), 0.0)
        total += torch.where(own_counts > 1, scores, 0.0).sum()  # singletons score 0

        if stop == n:
            break
        later[0] += pending[stop:]
        closed = last + 1 if bounds[last + 1] <= stop else last  # clusters ending in this block
        if closed > first:
            means = later[: closed - first].div_(counts[first:closed, None]).amin(dim=0)
            torch.minimum(nearest[stop:], means, out=nearest[stop:])
        pending[stop:] = later[-1] if closed == last else 0.0
    return total


def silhouette_tensor(
    points: torch.Tensor, layout: ClusterLayout, *, block_size: int | None = None
) -> torch.Tensor:
    """Mean silhouette of unchecked points (original order) for a prepared layout: 0-d float64
    tensor, no host sync (:func:`silhouette` checks and returns a float)."""
    n = points.shape[0]
    if block_size is None and points.device.type == "cpu":
        block_size = _CPU_BLOCK_ROWS
    block = default_block(n, block_size, _ACCELERATOR_BLOCK_ELEMENTS)
    with torch.no_grad(), ieee_float32_matmul():
        # sorted by cluster: each cluster becomes a contiguous slice (the mean is order-free)
        compute = torch.float64 if n < _SILHOUETTE_FLOAT64_BELOW else torch.float32
        left, right = _distance_factors(points, layout.order, compute)
        return _streamed_silhouette_sum(left, right, layout, block) / n


def silhouette(
    points: ArrayLike,
    labels,
    *,
    block_size: int | None = None,
    sample_size: int | None = None,
    seed: int | None = None,
) -> float:
    """Mean silhouette coefficient (Euclidean), scikit-learn's definition, without an n x n matrix,
    on the points' device. ``labels`` as for :func:`~isotropy.metrics.checks.cluster_ids`;
    ``block_size``: rows per distance block; ``sample_size`` and ``seed``: a random subset drawn
    as ``sklearn.metrics.silhouette_score`` draws it. Needs 2 <= clusters <= n - 1.
    """
    x = checked_points(points, min_rows=2)
    n = x.shape[0]
    ids = checked_cluster_ids(labels, n)
    default_block(n, block_size)  # reject a bad block size before any work
    indices = _subsample(n, sample_size, seed)
    if indices is not None:
        ids = ids[indices]
        x = x.detach()[torch.from_numpy(indices).to(x.device)]
    layout = cluster_layout(ids, x.device)
    return float(silhouette_tensor(x, layout, block_size=block_size))
