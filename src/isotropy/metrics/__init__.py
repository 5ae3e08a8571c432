"""The seed studies' metrics and section 2's objectives: one module per family, CPU and CUDA alike.

Every metric accepts a numpy array or a torch tensor (any device; the computation stays on that
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
named option here, so our numbers can be set beside theirs (docs/methods.md, "Differences from the
authors' code"):
``local_intrinsic_dimension(..., distances="squared")`` (Cai et al.'s faiss L2 scale),
``partition_isotropy(..., signs="solver")`` (Rajaee & Pilehvar's notebook) and
:func:`per_cluster_cosine_statistics` (Cai et al.'s ``--cluster_cos --center``).

The public names below are re-exported lazily, each from its family's module: the registry is
read by torch-free code (summaries, plots), so importing this package must not import torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "checks": ("ArrayLike", "checked_cluster_ids", "checked_points", "cluster_ids"),
    "isoscores": (
        "covariance",
        "isoscore",
        "isoscore_star",
        "isoscore_tensor",
        "partition_isotropy",
    ),
    "cosines": ("average_cosine_similarity", "per_cluster_cosine_statistics", "s_inter", "s_intra"),
    "clusters": (
        "ClusterLayout",
        "cluster_centred",
        "cluster_layout",
        "kmeans_by_silhouette",
        "silhouette",
        "silhouette_tensor",
        "to_device",
    ),
    "criteria": ("calinski_harabasz", "davies_bouldin", "dunn"),
    "dimensions": ("cai_local_intrinsic_dimension", "local_intrinsic_dimension", "twonn_dimension"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    """Import a public metric from its family's module on first use (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
