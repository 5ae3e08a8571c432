"""Isotropy and cluster metrics of the seed studies, in torch, one implementation for CPU and CUDA.

Every function accepts a numpy array or a torch tensor (any device; the computation stays on that
device) of shape ``(n points, d dimensions)`` and returns a Python float unless stated. Bad input
(NaN/inf, too few points, wrong dimensionality, mismatched labels, a single cluster) raises a
``ValueError`` that says what was found and what is needed: no metric returns a silent NaN.

Exactness, checked by ``tests/test_metrics.py`` against independent implementations:

- :func:`isoscore` and :func:`isoscore_star` equal ``IsoScore.IsoScore.IsoScore`` and
  ``IsoScore_star`` (package 2.0.1) within 1e-6 (float64, closed form without an eigen-solve;
  correct when n < d).
- :func:`silhouette` equals ``sklearn.metrics.silhouette_score`` (Euclidean) within 1e-6.
- :func:`twonn_dimension` equals ``skdim.id.TwoNN()`` (default settings) within 1e-6.
- :func:`local_intrinsic_dimension` equals ``skdim.id.MLE`` (mean of pointwise estimates) up to
  its documented k/(k-1) factor.

Where a seed paper's released code computes a number differently, the authors' convention is a
named option here, so our numbers can be set beside theirs (papers.md section 5):
``local_intrinsic_dimension(..., distances="squared")`` (Cai et al.'s faiss L2 scale),
``partition_isotropy(..., signs="solver")`` (Rajaee & Pilehvar's notebook) and
:func:`per_cluster_cosine_statistics` (Cai et al.'s ``--cluster_cos --center``).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

log = logging.getLogger(__name__)

ArrayLike = np.ndarray | torch.Tensor

# Below this many points silhouette distances are computed in float64 (cheap there); above it in
# float32 on centred data, with float64 accumulation of the per-cluster sums (error ~1e-6).
_SILHOUETTE_FLOAT64_BELOW = 4096
# Elements of one distance block (64 MB in float32): bounds memory at O(block x n).
_BLOCK_ELEMENTS = 1 << 24


# ----------------------------------------------------------------------------------------------
# input checking
# ----------------------------------------------------------------------------------------------


def _as_tensor(
    points: ArrayLike, *, name: str = "points", min_rows: int = 2, min_cols: int = 1
) -> torch.Tensor:
    """Validate a point cloud and return it as a floating torch tensor (grad kept if present)."""
    if isinstance(points, torch.Tensor):
        tensor = points
    else:
        array = np.asarray(points)
        if array.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be a numeric array; found dtype {array.dtype}")
        tensor = torch.from_numpy(np.ascontiguousarray(array))
    if tensor.is_complex():
        raise ValueError(f"{name} must be real-valued; found dtype {tensor.dtype}")
    if not tensor.is_floating_point():
        tensor = tensor.to(torch.float64)
    elif tensor.dtype in (torch.float16, torch.bfloat16):
        tensor = tensor.float()  # half precision is too coarse for any of these metrics
    if tensor.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n points, d dimensions); "
            f"found {tensor.ndim}-D with shape {tuple(tensor.shape)}"
        )
    n, d = tensor.shape
    if n < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} points (rows); found {n}")
    if d < min_cols:
        raise ValueError(f"{name} needs at least {min_cols} dimensions (columns); found {d}")
    finite = torch.isfinite(tensor.detach())
    if not bool(finite.all()):
        bad = int((~finite).sum())
        raise ValueError(
            f"{name} contains {bad} NaN or infinite values; every value must be finite"
        )
    return tensor


def cluster_ids(labels) -> np.ndarray:
    """Map labels to integer cluster ids ``0..K-1`` (int64 array, one per point).

    1-D labels may be any hashable values (ints, strings, ...). A 2-D array is a multi-label
    indicator matrix: each distinct row (label *vector*) is one cluster.
    """
    if isinstance(labels, torch.Tensor):
        labels = labels.detach().cpu().numpy()
    array = np.asarray(labels) if not isinstance(labels, np.ndarray) else labels
    if array.ndim == 2:
        if array.dtype.kind not in "biuf":
            raise ValueError(
                f"a 2-D label matrix must be numeric (0/1 indicators); found dtype {array.dtype}"
            )
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise ValueError("the label matrix contains NaN or infinite values; use 0/1 indicators")
        _, inverse = np.unique(array, axis=0, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64)
    if array.ndim != 1:
        raise ValueError(
            "labels must be 1-D (one label per point) or a 2-D 0/1 multi-label matrix; "
            f"found {array.ndim}-D with shape {array.shape}"
        )
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(
            f"labels contain {int(np.isnan(array).sum())} NaN values; every point needs a label"
        )
    if array.dtype.kind in "biufUS":
        _, inverse = np.unique(array, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64)
    # object labels (mixed types, tuples, None ...): first-seen order, any hashable value
    mapping: dict = {}
    ids = np.empty(len(array), dtype=np.int64)
    for i, value in enumerate(array.tolist()):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            raise ValueError(f"label {i} is missing ({value!r}); every point needs a label")
        ids[i] = mapping.setdefault(
            value if not isinstance(value, list) else tuple(value), len(mapping)
        )
    return ids


def _checked_ids(labels, n: int, *, name: str = "labels") -> np.ndarray:
    ids = cluster_ids(labels)
    if len(ids) != n:
        raise ValueError(f"{name} has {len(ids)} entries but points has {n} rows; they must match")
    return ids


def _check_cluster_count(n_clusters: int, n: int) -> None:
    if not 1 < n_clusters < n:
        raise ValueError(
            f"found {n_clusters} distinct cluster(s) among {n} points; "
            f"this metric needs between 2 and n - 1 = {n - 1} clusters"
        )


@contextlib.contextmanager
def _ieee_float32_matmul() -> Iterator[None]:
    """Forbid TF32/bf16 matmuls (set globally by training code) while computing distances."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(previous)


def _float64_mean(x: torch.Tensor) -> torch.Tensor:
    """Column means (1 x d) accumulated in float64, over row chunks of ~1M elements: torch's
    ``mean(dtype=torch.float64)`` first makes a float64 copy of all of ``x``."""
    n, d = x.shape
    step = max(1, (_BLOCK_ELEMENTS // 16) // d)
    total = sum(
        x[start : start + step].sum(dim=0, dtype=torch.float64) for start in range(0, n, step)
    )
    return (total / n)[None, :]


def _default_block(n: int, block_size: int | None) -> int:
    if block_size is None:
        return int(min(4096, max(64, _BLOCK_ELEMENTS // max(n, 1))))
    if block_size < 1:
        raise ValueError(f"block_size must be a positive number of rows; found {block_size}")
    return int(block_size)


# ----------------------------------------------------------------------------------------------
# IsoScore and IsoScore*
# ----------------------------------------------------------------------------------------------


def covariance(points: torch.Tensor) -> torch.Tensor:
    """Unbiased (ddof = 1) covariance matrix ``d x d`` of the rows; differentiable.

    Used to build the reference covariance Σ_S of IsoScore*.
    """
    x = _as_tensor(points, min_rows=2)
    centred = x - x.mean(dim=0, keepdim=True)
    return centred.T @ centred / (x.shape[0] - 1)


def _isoscore_of_moments(
    trace: torch.Tensor, frobenius_squared: torch.Tensor, d: int
) -> torch.Tensor:
    """IsoScore (Rudman et al. 2022) from tr(C) and ‖C‖_F² of a d x d covariance C; no eigen-solve.

    The published steps, with λ the eigenvalues (the variance vector in the PCA basis, λ >= 0):
    normalise λ̂ = √d λ/‖λ‖; defect δ = ‖λ̂ - 1‖/√(2(d - √d)); fraction of dimensions used
    φ = (d - δ²(d - √d))²/d²; IsoScore = (dφ - 1)/(d - 1). Expanding the norm,
    ‖λ̂ - 1‖² = ‖λ̂‖² - 2·1ᵀλ̂ + d = 2d - 2√d Σλ/‖λ‖, so δ²(d - √d) = d - √d Σλ/‖λ‖,
    d - δ²(d - √d) = √d Σλ/‖λ‖ and dφ = (Σλ)²/Σλ². For symmetric C, Σλ = tr(C) and
    Σλ² = ‖C‖_F², hence IsoScore = (tr(C)²/‖C‖_F² - 1)/(d - 1): scale-free, so C may carry any
    positive factor (e.g. (n-1)), and any n works, n < d included. A zero C gives NaN (0/0);
    callers turn that into an error where they can afford the check. Differentiable.
    """
    return (trace * trace / frobenius_squared - 1.0) / (d - 1.0)


def isoscore_tensor(x: torch.Tensor) -> torch.Tensor:
    """IsoScore of an unchecked (n, d) tensor as a 0-d float64 tensor on its device, no host sync.

    For loops that validate their input once (see :func:`isoscore`, which checks and returns a
    float). Works on the smaller of the d x d scatter matrix XᵀX and the n x n Gram matrix XXᵀ of
    the centred rows: both have the same trace and Frobenius norm. NaN when all points coincide.
    """
    with torch.no_grad():
        x = x.detach()
        n, d = x.shape
        mean = _float64_mean(x)
        small = min(n, d)
        scatter = torch.zeros(small, small, dtype=torch.float64, device=x.device)
        if n >= d:
            # float64 centring in row blocks: exact, without a float64 copy of the whole cloud
            step = max(1, _BLOCK_ELEMENTS // (4 * d))
            for start in range(0, n, step):
                centred = x[start : start + step].to(torch.float64) - mean
                scatter.addmm_(centred.T, centred)
        else:
            centred = x.to(torch.float64) - mean  # n < d: the n x d copy is smaller than d x d
            torch.mm(centred, centred.T, out=scatter)
        trace = torch.diagonal(scatter).sum()
        return _isoscore_of_moments(trace, (scatter * scatter).sum(), d)


def isoscore(points: ArrayLike) -> float:
    """IsoScore of a point cloud (n x d), computed in float64: 1 isotropic, 0 one direction.

    Closed form (tr(C)²/‖C‖_F² - 1)/(d - 1) of the covariance C, derived in
    :func:`_isoscore_of_moments`; equal to ``IsoScore.IsoScore.IsoScore`` (package 2.0.1) within
    1e-6. Strongly sample-size dependent when n is not much larger than d, so report n with it.
    """
    x = _as_tensor(points, min_rows=2, min_cols=2)
    value = float(isoscore_tensor(x))
    if math.isnan(value):
        raise ValueError(
            "the covariance is zero (all points are identical); IsoScore needs spread points"
        )
    return value


def isoscore_star(
    points: torch.Tensor, reference_covariance: torch.Tensor | None = None, zeta: float = 0.0
) -> torch.Tensor:
    """IsoScore* (Rudman & Eickhoff 2024): IsoScore of the shrunk covariance (1-ζ)Σ_X + ζΣ_S.

    Differentiable 0-d tensor (gradients flow into ``points``), for use as a training penalty
    ``1 - isoscore_star(...)``. ``zeta = 0`` gives IsoScore; ``zeta > 0`` needs the reference.
    Same closed form as :func:`isoscore` (the identity holds for any symmetric matrix, so for
    the shrunk one), in float64; the result has ``points``' floating dtype.
    """
    x = _as_tensor(points, min_rows=2, min_cols=2)
    if not 0.0 <= float(zeta) <= 1.0:
        raise ValueError(f"zeta must lie in [0, 1]; found {zeta}")
    if zeta > 0 and reference_covariance is None:
        raise ValueError(
            f"zeta = {zeta} shrinks towards a reference covariance, but none was given; pass reference_covariance or zeta = 0"
        )
    out_dtype = x.dtype
    d = x.shape[1]
    cov = covariance(x).to(torch.float64)
    if reference_covariance is not None:
        ref = torch.as_tensor(reference_covariance)
        if tuple(ref.shape) != (d, d):
            raise ValueError(
                f"reference_covariance must be {d} x {d} to match the points' dimension; found shape {tuple(ref.shape)}"
            )
        if not bool(torch.isfinite(ref.detach()).all()):
            raise ValueError(
                "reference_covariance contains NaN or infinite values; every value must be finite"
            )
        ref = ref.to(device=x.device, dtype=torch.float64)
        cov = (1.0 - zeta) * cov + zeta * ref
    frobenius_squared = (cov * cov).sum()
    if not bool(frobenius_squared.detach() > 0):
        raise ValueError(
            "the covariance is zero (all points are identical); IsoScore needs spread points"
        )
    return _isoscore_of_moments(torch.diagonal(cov).sum(), frobenius_squared, d).to(out_dtype)


# ----------------------------------------------------------------------------------------------
# silhouette
# ----------------------------------------------------------------------------------------------


def _subsample(n: int, sample_size: int | None, seed: int | None) -> np.ndarray | None:
    """Row indices of the seeded sub-sample, drawn exactly as scikit-learn's silhouette_score does."""
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


@dataclass(eq=False)
class ClusterLayout:
    """Cluster labels prepared once for many silhouettes of the same points, kept on a device.

    ``order`` sorts the points by cluster, so that cluster c occupies the sorted rows
    ``bounds[c]:bounds[c+1]``. ``bounds`` are host integers (slicing by them needs no device
    sync); ``ids`` (sorted points' cluster ids) and ``counts`` (float64 sizes) live on the device.
    """

    order: torch.Tensor
    ids: torch.Tensor
    counts: torch.Tensor
    bounds: np.ndarray
    _gather_cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_points(self) -> int:
        return int(self.bounds[-1])

    @property
    def n_clusters(self) -> int:
        return len(self.bounds) - 1

    def cluster_of(self, row: int) -> int:
        """Cluster of a sorted row."""
        return int(np.searchsorted(self.bounds, row, side="right")) - 1


def _to_device(array: np.ndarray, device: torch.device | str | None) -> torch.Tensor:
    """Upload without a host sync: pinned memory and an asynchronous copy where the device is CUDA."""
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def cluster_layout(
    labels, device: torch.device | str | None = None, *, n: int | None = None
) -> ClusterLayout:
    """Prepare ``labels`` (as for :func:`silhouette`) once for repeated silhouettes on ``device``."""
    ids = cluster_ids(labels) if n is None else _checked_ids(labels, n)
    _, ids = np.unique(ids, return_inverse=True)  # compact ids: no empty cluster
    ids = ids.reshape(-1)
    counts = np.bincount(ids)
    _check_cluster_count(len(counts), len(ids))
    order = np.argsort(ids, kind="stable")
    return ClusterLayout(
        order=_to_device(order, device),
        ids=_to_device(ids[order], device),
        counts=_to_device(counts.astype(np.float64), device),
        bounds=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
    )


def _transposed_cpu_blocks(device: torch.device) -> bool:
    """The CPU computes distance blocks transposed; tests run the accelerator path on the CPU too."""
    return device.type == "cpu"


def _segment_sums(
    values: torch.Tensor, dim: int, ends: np.ndarray, layout: ClusterLayout, key: tuple
) -> torch.Tensor:
    """Sums of consecutive segments of ``values`` along ``dim`` (segment k ends before ``ends[k]``,
    the first starts at 0), float64, with the segments along ``dim`` (accelerators). Cost: one pass
    over ``values`` whatever the number of segments."""
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
        gather = layout._gather_cache[key] = _to_device(ends - 1, values.device)
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
    x = x.sub_(_float64_mean(x).to(x.dtype)).to(dtype)
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
        starts = [0, *ends[:-1].tolist()]
        sums = torch.stack([dist[a:b].sum(dim=0) for a, b in zip(starts, ends.tolist())])
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

    ``left``/``right`` (see :func:`_distance_factors`) hold the points sorted by cluster
    (``layout.order``), so a cluster is one contiguous slice of rows and of columns. Row block I
    is compared with the columns from I's first row on, so each pair is computed once, and serves
    both ways:

    - block I's rows get their distance sums to every cluster that starts in or after block I:
      with what earlier blocks left in ``pending`` (the cluster still open at block I's start),
      those are complete, so block I's rows are scored at once;
    - the later rows get their sums to block I's clusters: a cluster that ends in block I is then
      complete for them and is folded into their running ``nearest`` mean distance; the one that
      goes on past block I is carried in ``pending``.

    Memory is a few vectors of n besides one distance block; per block the cluster sums take one
    pass each way whatever the number of clusters, accumulated in float64.
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
    """Mean silhouette of unchecked points for a prepared layout: 0-d float64 tensor, no host sync.

    For loops that validate their input once (see :func:`silhouette`, which checks and returns a
    float). ``points`` are in the original order; ``layout`` comes from :func:`cluster_layout`.
    """
    n = points.shape[0]
    if block_size is None and points.device.type == "cpu":
        block_size = _CPU_BLOCK_ROWS
    block = _default_block(n, block_size)
    with torch.no_grad(), _ieee_float32_matmul():
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
    """Mean silhouette coefficient (Euclidean), scikit-learn's definition, without an n x n matrix.

    Args:
        points: (n, d) array or tensor; the computation runs on its device.
        labels: 1-D labels (any hashable values) or a 2-D 0/1 multi-label matrix, where each
            distinct row is one cluster.
        block_size: rows per distance block (memory O(block_size x n)); default ~16M elements
            (256 rows on the CPU, where a smaller block stays in cache).
        sample_size: compute on a random subset of this many points, drawn exactly as
            ``sklearn.metrics.silhouette_score(..., sample_size, random_state=seed)`` draws it.
        seed: seed of the sub-sample (None: fresh randomness).

    Points alone in their cluster score 0. Needs 2 <= clusters <= n - 1.
    """
    x = _as_tensor(points, min_rows=2)
    n = x.shape[0]
    ids = _checked_ids(labels, n)
    _default_block(n, block_size)  # reject a bad block size before any work
    indices = _subsample(n, sample_size, seed)
    if indices is not None:
        ids = ids[indices]
        x = x.detach()[torch.from_numpy(indices).to(x.device)]
    layout = cluster_layout(ids, x.device)
    return float(silhouette_tensor(x, layout, block_size=block_size))


# ----------------------------------------------------------------------------------------------
# cosine similarities (Ethayarajh 2019; Cai et al. 2021)
# ----------------------------------------------------------------------------------------------


def _unit_rows(x: torch.Tensor) -> torch.Tensor:
    x = x.detach().to(torch.float64)
    norms = torch.linalg.vector_norm(x, dim=1)
    zero = int((norms == 0).sum())
    if zero:
        raise ValueError(f"found {zero} all-zero vectors; cosine similarity needs non-zero vectors")
    return x / norms[:, None]


def average_cosine_similarity(points: ArrayLike, n_pairs: int = 10000, seed: int = 0) -> float:
    """Mean cosine similarity of ``n_pairs`` uniformly random pairs of distinct points (seeded)."""
    x = _as_tensor(points, min_rows=2)
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1; found {n_pairs}")
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, size=n_pairs)
    second = rng.integers(0, n - 1, size=n_pairs)
    second = second + (second >= first)  # uniform over j != i
    with torch.no_grad():
        unit = _unit_rows(x)
        i = torch.from_numpy(first).to(unit.device)
        j = torch.from_numpy(second).to(unit.device)
        return float((unit[i] * unit[j]).sum(dim=1).mean())


def _type_groups(types, n: int, max_per_type: int | None, seed: int) -> list[np.ndarray]:
    """Row indices per type, each capped at ``max_per_type`` rows drawn without replacement."""
    if max_per_type is not None and max_per_type < 1:
        raise ValueError(
            f"max_per_type must be a positive number of instances; found {max_per_type}"
        )
    ids = _checked_ids(types, n, name="types")
    order = np.argsort(ids, kind="stable")
    bounds = np.flatnonzero(np.diff(ids[order])) + 1
    groups = np.split(order, bounds)
    rng = np.random.default_rng(seed)
    if max_per_type is not None:
        groups = [
            g if len(g) <= max_per_type else np.sort(rng.choice(g, max_per_type, replace=False))
            for g in groups
        ]
    return groups


def s_inter(points: ArrayLike, types, *, max_per_type: int | None = None, seed: int = 0) -> float:
    """Inter-type cosine similarity S_inter of Cai et al. (2021).

    Mean cosine between embeddings of *different* types. By default (``max_per_type=None``) one
    random instance per type (Cai et al.'s definition), averaged over all pairs of types; with
    ``max_per_type=m``, up to m random instances per type and the mean over all pairs of instances
    of different types. Needs at least two types.
    """
    x = _as_tensor(points, min_rows=2)
    groups = _type_groups(types, x.shape[0], max_per_type, seed)
    if len(groups) < 2:
        raise ValueError(f"found {len(groups)} type(s); S_inter needs at least 2 distinct types")
    if max_per_type is None:
        rng = np.random.default_rng(seed)
        groups = [g[[rng.integers(len(g))]] for g in groups]
    with torch.no_grad():
        unit = _unit_rows(x)
        rows = torch.from_numpy(np.concatenate(groups)).to(unit.device)
        sizes = np.array([len(g) for g in groups])
        group_of = torch.from_numpy(np.repeat(np.arange(len(groups)), sizes)).to(unit.device)
        chosen = unit[rows]
        total = chosen.sum(dim=0)
        per_type = torch.zeros(
            len(groups), chosen.shape[1], dtype=torch.float64, device=unit.device
        )
        per_type.index_add_(0, group_of, chosen)
        # sum over ordered cross-type pairs = |Σu|² - Σ_t |Σ_{u∈t} u|²
        cross = (total @ total) - (per_type * per_type).sum()
        n_cross = float(sizes.sum() ** 2 - (sizes**2).sum())
        return float(cross / n_cross)


def s_intra(points: ArrayLike, types, *, max_per_type: int | None = None, seed: int = 0) -> float:
    """Intra-type cosine similarity S_intra of Cai et al. (2021).

    For every type with at least two instances (capped at ``max_per_type`` random ones), the mean
    cosine between its distinct instances; then the mean over those types.
    """
    x = _as_tensor(points, min_rows=2)
    groups = [g for g in _type_groups(types, x.shape[0], max_per_type, seed) if len(g) >= 2]
    if not groups:
        raise ValueError("no type has two or more instances; S_intra needs repeated types")
    with torch.no_grad():
        unit = _unit_rows(x)
        rows = torch.from_numpy(np.concatenate(groups)).to(unit.device)
        sizes_np = np.array([len(g) for g in groups], dtype=np.float64)
        group_of = torch.from_numpy(
            np.repeat(np.arange(len(groups)), sizes_np.astype(np.int64))
        ).to(unit.device)
        per_type = torch.zeros(len(groups), unit.shape[1], dtype=torch.float64, device=unit.device)
        per_type.index_add_(0, group_of, unit[rows])
        sizes = torch.from_numpy(sizes_np).to(unit.device)
        # mean over distinct pairs within a type = (|Σu|² - m) / (m (m - 1))
        within = ((per_type * per_type).sum(dim=1) - sizes) / (sizes * (sizes - 1))
        return float(within.mean())


# ----------------------------------------------------------------------------------------------
# clusters (Cai et al. 2021)
# ----------------------------------------------------------------------------------------------


def _numpy_points(points: ArrayLike, *, min_rows: int = 2) -> np.ndarray:
    x = _as_tensor(points, min_rows=min_rows)
    return x.detach().cpu().numpy()


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

    x = _numpy_points(points, min_rows=3)
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
    x = _numpy_points(points, min_rows=1).astype(np.float64)
    ids = _checked_ids(clusters, x.shape[0], name="clusters")
    k = int(ids.max()) + 1
    sums = np.zeros((k, x.shape[1]))
    np.add.at(sums, ids, x)
    means = sums / np.bincount(ids, minlength=k)[:, None]
    return x - means[ids]


def per_cluster_cosine_statistics(
    points: ArrayLike,
    types,
    clusters,
    *,
    max_per_type: int | None = None,
    seed: int = 0,
    statistics: tuple[str, ...] = ("s_inter", "s_intra"),
) -> dict[str, float]:
    """Cai et al.'s cluster-adjusted S_inter and S_intra (their code's ``--cluster_cos --center``).

    Every cluster is centred on its own mean, the statistic is computed on the pairs *inside* that
    cluster only (:func:`s_inter`, :func:`s_intra` with the same ``max_per_type`` and ``seed``),
    and the values are averaged over clusters, unweighted. A cluster where a statistic is
    undefined (fewer than two types, no repeated type) is left out of that statistic's mean.
    Returns the ``statistics`` asked for (NaN only when no cluster defines one, which is logged)
    and ``clusters_inter``/``clusters_intra``, the number of clusters each mean is over. Compare the
    pooled alternative: :func:`s_inter` of :func:`cluster_centred` points, all pairs at once.
    """
    x = cluster_centred(points, clusters)
    ids = _checked_ids(clusters, x.shape[0], name="clusters")
    type_ids = _checked_ids(types, x.shape[0], name="types")
    inter, intra = [], []
    for cluster in np.unique(ids):
        members = np.flatnonzero(ids == cluster)
        member_types = type_ids[members]
        if "s_inter" in statistics and len(np.unique(member_types)) >= 2:
            inter.append(s_inter(x[members], member_types, max_per_type=max_per_type, seed=seed))
        if "s_intra" in statistics and len(members) > len(
            np.unique(member_types)
        ):  # a type repeats
            intra.append(s_intra(x[members], member_types, max_per_type=max_per_type, seed=seed))
    for name, values in (("s_inter", inter), ("s_intra", intra)):
        if name in statistics and not values:
            log.warning(
                "per-cluster %s is undefined: no cluster has the pairs it needs; recording NaN",
                name,
            )
    values = {
        "s_inter": float(np.mean(inter)) if inter else math.nan,
        "s_intra": float(np.mean(intra)) if intra else math.nan,
    }
    return {
        **{name: values[name] for name in statistics},
        "clusters_inter": len(inter),
        "clusters_intra": len(intra),
    }


# ----------------------------------------------------------------------------------------------
# intrinsic dimension
# ----------------------------------------------------------------------------------------------


def _nearest_distances(
    x: torch.Tensor, k: int, metric: str = "euclidean", block_size: int | None = None
) -> torch.Tensor:
    """Sorted distances (n, k) from every point to its k nearest *other* points, float64, blocked."""
    n = x.shape[0]
    x = x.detach().to(torch.float64)
    if metric == "cosine":
        x = _unit_rows(x)
    else:
        x = x - x.mean(dim=0, keepdim=True)  # translation-invariant; smaller cancellation
    sq = (x * x).sum(dim=1)
    block = _default_block(n, block_size)
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
    x = _as_tensor(points, min_rows=2).detach().to(torch.float64)
    if metric == "cosine":
        x = _unit_rows(x)
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
    """Mean local intrinsic dimension, MLE of Levina & Bickel as used by Cai et al. (2021).

    LID_i = -(1/k Σ_{j=1..k} log(r_ij / r_ik))^-1 over the k nearest neighbours (Euclidean or
    cosine distance 1 - cos), averaged over points. Exact duplicates are dropped with a warning.

    ``distances="true"`` is the estimator on distances (Levina & Bickel). ``"squared"`` puts the
    squared distances r² in the formula, as Cai et al.'s code does (a faiss ``IndexFlatL2``
    returns squared Euclidean distances): log(r²_ij / r²_ik) = 2 log(r_ij / r_ik), so the result
    is exactly half the true-distance estimate. Their Euclidean LID (Figure 9) is on that scale;
    their Table 3 is the cosine LID, where both options agree.
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
    """TwoNN intrinsic dimension (Facco et al. 2017), equal to ``skdim.id.TwoNN()`` defaults.

    Ratios μ = r2/r1 of second to first neighbour distances; the 10 % largest are discarded and the
    slope of -log(1 - F_emp(μ)) on log μ is fitted through the origin. Points with r1 = 0
    (duplicates) are dropped with a warning, as scikit-dimension does.
    """
    x = _as_tensor(points, min_rows=3)
    with torch.no_grad():
        r = _nearest_distances(x, 2, "euclidean")
        # exact duplicates have r1 = 0 exactly, whatever the rounding of the dot-product distances
        r[_has_duplicate(x.detach()), 0] = 0.0
        r = r.cpu().numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = r[:, 1] / r[:, 0]
    finite = np.isfinite(mu)
    if not finite.all():
        log.warning(
            "TwoNN: dropping %d points with a duplicate (zero distance)", int((~finite).sum())
        )
        mu = mu[finite]
    n_total = len(mu)
    n_keep = int(n_total * (1 - 0.1))
    if n_keep < 2:
        raise ValueError(
            f"TwoNN needs at least 2 points after discarding duplicates and the top 10%; found {n_keep}"
        )
    log_mu = np.log(np.sort(mu)[:n_keep])
    target = -np.log(1 - np.arange(1, n_keep + 1) / n_total)
    denom = float(log_mu @ log_mu)
    if denom == 0:
        raise ValueError(
            "all neighbour-distance ratios are 1 (a regular grid?); TwoNN is undefined"
        )
    return float(log_mu @ target / denom)


# ----------------------------------------------------------------------------------------------
# partition-function isotropy (Mu & Viswanath 2018)
# ----------------------------------------------------------------------------------------------


def partition_isotropy(points: ArrayLike, *, signs: str = "solver") -> float:
    """I(W) = min_c Z(c) / max_c Z(c), Z(c) = Σ_w exp(cᵀw), c over the unit eigenvectors of WᵀW.

    The eigenvectors are the *columns* of the eigenvector matrix. ``signs="solver"`` (Rajaee &
    Pilehvar's notebook, the number their paper reports) takes each one with the sign
    ``numpy.linalg.eig`` returns, as their code does; on uncentred vectors the value depends on
    those signs. ``signs="both"`` takes each with both signs (±c are both unit eigenvectors):
    independent of the solver, never larger than the ``"solver"`` value, and equal to it when the
    points are centred symmetrically. Computed in log space (logsumexp), so large norms do not
    overflow where their ``np.exp`` would.
    """
    if signs not in ("solver", "both"):
        raise ValueError(
            f"signs must be 'solver' (Rajaee & Pilehvar's code) or 'both'; found {signs!r}"
        )
    w = _as_tensor(points, min_rows=2).detach().cpu().to(torch.float64).numpy()
    _, vectors = np.linalg.eig(w.T @ w)  # the general solver their notebook calls: its signs
    if np.iscomplexobj(vectors):
        vectors = np.real(vectors)  # WᵀW is symmetric: any imaginary part is round-off
    projections = torch.from_numpy(w @ vectors)  # column j: c_jᵀ w for every w
    log_z = torch.logsumexp(projections, dim=0)
    if signs == "both":
        log_z = torch.cat([log_z, torch.logsumexp(-projections, dim=0)])
    return float(torch.exp(log_z.min() - log_z.max()))


# ----------------------------------------------------------------------------------------------
# scikit-learn cluster indices
# ----------------------------------------------------------------------------------------------


def _sklearn_inputs(points: ArrayLike, labels) -> tuple[np.ndarray, np.ndarray]:
    x = _numpy_points(points, min_rows=2)
    ids = _checked_ids(labels, x.shape[0])
    _check_cluster_count(len(np.unique(ids)), x.shape[0])
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
