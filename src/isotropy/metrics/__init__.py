"""The seed studies' metrics and section 2's objectives: one module per family, CPU and CUDA alike.

Every metric takes a numpy array or a torch tensor ``(n points, d dimensions)``, computes on its
device, and refuses bad input with a ``ValueError`` (no silent NaN). ``tests/test_metrics.py``
checks each against an independent implementation (IsoScore 2.0.1, scikit-learn, scikit-dimension);
where a seed paper's code computes a number differently, its convention is a named option
(docs/methods.md, "Differences from the authors' code"). The public names are re-exported lazily
from their modules: the registry is read by torch-free code, so this package must not import torch.
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
