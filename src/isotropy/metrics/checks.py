"""Point checks and numeric helpers, imported by ``isotropy.metrics`` and ``isotropy.transforms``:
:func:`checked_points` and :func:`checked_cluster_ids` are the public checks, for callers that
evaluate the tensor functions on their own data.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import numpy as np
import torch

ArrayLike = np.ndarray | torch.Tensor

# Elements of one distance block (64 MB in float32): bounds memory at O(block x n).
BLOCK_ELEMENTS = 1 << 24


def checked_points(
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
    """Map labels (1-D, any hashable values; or a 2-D multi-label indicator matrix, each distinct
    row one cluster) to integer cluster ids ``0..K-1``, one per point."""
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


def checked_cluster_ids(labels, n: int, *, name: str = "labels") -> np.ndarray:
    """:func:`cluster_ids` of ``labels``, checked to give one label to each of ``n`` points."""
    ids = cluster_ids(labels)
    if len(ids) != n:
        raise ValueError(f"{name} has {len(ids)} entries but points has {n} rows; they must match")
    return ids


def check_cluster_count(n_clusters: int, n: int) -> None:
    if not 1 < n_clusters < n:
        raise ValueError(
            f"found {n_clusters} distinct cluster(s) among {n} points; "
            f"this metric needs between 2 and n - 1 = {n - 1} clusters"
        )


@contextlib.contextmanager
def ieee_float32_matmul() -> Iterator[None]:
    """Forbid TF32/bf16 matmuls (set globally by training code) while computing distances."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(previous)


def float64_mean(x: torch.Tensor) -> torch.Tensor:
    """Column means (1 x d) accumulated in float64, over row chunks of ~1M elements: torch's
    ``mean(dtype=torch.float64)`` first makes a float64 copy of all of ``x``."""
    n, d = x.shape
    step = max(1, (BLOCK_ELEMENTS // 16) // d)
    total = torch.zeros(d, dtype=torch.float64, device=x.device)
    for start in range(0, n, step):  # chunk by chunk, in order: the sum the builtin sum() took
        total += x[start : start + step].sum(dim=0, dtype=torch.float64)
    return (total / n)[None, :]


def default_block(n: int, block_size: int | None, elements: int = BLOCK_ELEMENTS) -> int:
    """Rows per block: ``block_size`` checked, or (None) about ``elements`` per block of n
    columns, 64 to 4,096 rows."""
    if block_size is None:
        return int(min(4096, max(64, elements // max(n, 1))))
    if block_size < 1:
        raise ValueError(f"block_size must be a positive number of rows; found {block_size}")
    return int(block_size)


def numpy_points(points: ArrayLike, *, min_rows: int = 2) -> np.ndarray:
    """The checked points as a numpy array on the host, for the metrics computed by scikit-learn."""
    x = checked_points(points, min_rows=min_rows)
    return x.detach().cpu().numpy()
