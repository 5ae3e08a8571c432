"""The per-update metrics of the direct optimisation, one entry each.

The optimisation evaluates each entry after every ``metric_stride``-th update into the trace
column of its name (after ``loss`` and ``accuracy``, in the order below); the traces are checked
against its bounds, the summaries and verdicts correlate the ``isotropy`` metric with the
``clusters`` one, and :mod:`isotropy.plots.main` draws each curve (docs/extending.md: adding one).
The tensor function, named ``"module:function"`` inside :mod:`isotropy.metrics`, is imported on
first use (the registry's readers stay torch-free); it takes the ``(n, d)`` points and, where
``labels`` is set, their labels' :class:`~isotropy.metrics.clusters.ClusterLayout`, and returns a
0-d tensor on the points' device without a host sync.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass

# What a metric is computed on: the whole embedding table, or the classified representations of
# the items (with the items' labels as clusters).
POINTS = ("table", "representations")
# The pair of metrics whose correlation the paper studies (summaries, Figure 3).
ROLES = ("isotropy", "clusters")
# The trace columns before the metrics: the evaluated state's loss and accuracy.
STATE_COLUMNS = ("loss", "accuracy")


@dataclass(frozen=True)
class TraceMetric:
    """One per-update metric: its trace column, its tensor function and how it is drawn."""

    name: str  # the trace column
    label: str  # axis and legend label
    function: str  # "module:function" in isotropy.metrics
    colour: str
    points: str = "representations"  # "table" or "representations"
    labels: bool = True  # the function also takes the cluster layout of the labels
    axis: str = "right"  # the curve's axis in Figures 2 and 4: "left" or "right"
    role: str | None = None  # "isotropy" or "clusters" for the correlated pair, else None
    bounds: tuple[float, float] = (-math.inf, math.inf)  # a trace outside is refused
    higher_is_better: bool = True  # tighter, better separated clusters (False: Davies–Bouldin)

    def __post_init__(self) -> None:
        if self.points not in POINTS:
            raise ValueError(
                f"metric {self.name}: points must be one of {POINTS}; found {self.points!r}"
            )
        if self.role is not None and self.role not in ROLES:
            raise ValueError(
                f"metric {self.name}: role must be one of {ROLES} or None; found {self.role!r}"
            )
        if self.labels and self.points != "representations":
            raise ValueError(f"metric {self.name}: only the representations have labels")

    def tensor_function(self) -> Callable:
        """The metric's tensor function, imported from its metrics module."""
        module, function = self.function.split(":")
        return getattr(importlib.import_module(f"isotropy.metrics.{module}"), function)


TRACE_METRICS: tuple[TraceMetric, ...] = (
    TraceMetric(
        "isoscore",
        "IsoScore",
        "isoscores:isoscore_tensor",
        "tab:blue",
        points="table",
        labels=False,
        axis="left",
        role="isotropy",
        bounds=(0.0, 1.0),
    ),
    TraceMetric(
        "silhouette",
        "Silhouette",
        "clusters:silhouette_tensor",
        "tab:red",
        role="clusters",
        bounds=(-1.0, 1.0),
    ),
)


def trace_metrics() -> tuple[TraceMetric, ...]:
    """The registered per-update metrics, in trace-column order (read at call time)."""
    return TRACE_METRICS


def trace_columns() -> tuple[str, ...]:
    """The value columns of a trace after ``step``: loss, accuracy, then every metric."""
    return STATE_COLUMNS + tuple(metric.name for metric in trace_metrics())


def metric_columns() -> list[str]:
    """The trace columns of the registered metrics."""
    return [metric.name for metric in trace_metrics()]


def with_role(role: str) -> TraceMetric:
    """The one registered metric with ``role`` (``"isotropy"`` or ``"clusters"``)."""
    found = [metric for metric in trace_metrics() if metric.role == role]
    if len(found) != 1:
        raise ValueError(
            f"exactly one per-update metric must have role {role!r}; found {len(found)}"
        )
    return found[0]


# Per-update metrics a study may add to its traces (``extra_metrics`` of an optimisation section,
# off by default): the cluster criteria the main paper names beside the silhouette (its
# Limitations), recorded after the metrics above in this order. Dunn costs O(n²) like the
# silhouette; Caliński–Harabasz and Davies–Bouldin O(n d).
OPTIONAL_METRICS: tuple[TraceMetric, ...] = tuple(
    TraceMetric(name, label, function, colour, bounds=(0.0, math.inf), higher_is_better=better)
    for name, label, function, colour, better in (
        ("dunn", "Dunn index", "criteria:dunn_tensor", "tab:green", True),
        (
            "calinski_harabasz",
            "Caliński–Harabasz index",
            "criteria:calinski_harabasz_tensor",
            "tab:purple",
            True,
        ),
        (
            "davies_bouldin",
            "Davies–Bouldin index",
            "criteria:davies_bouldin_tensor",
            "tab:brown",
            False,
        ),
    )
)


def optional_metrics(names: tuple[str, ...] | list[str] = ()) -> tuple[TraceMetric, ...]:
    """The optional metrics named (all of them when none is named), in the order asked."""
    known = {metric.name: metric for metric in OPTIONAL_METRICS}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"unknown optional metric(s) {unknown}; known: {sorted(known)}")
    return tuple(known[name] for name in names) if names else OPTIONAL_METRICS


def cluster_criteria() -> tuple[str, ...]:
    """The names of the cluster criteria beside the silhouette (the optional metrics), in order:
    the one list the schema's enums, the extension study and its figures follow."""
    return tuple(metric.name for metric in OPTIONAL_METRICS)


def orientation(name: str) -> int:
    """+1 where a higher value of the cluster metric ``name`` means tighter, better separated
    clusters, -1 where a lower one does (the silhouette's and the criteria's)."""
    metrics = (*trace_metrics(), *OPTIONAL_METRICS)
    known = {metric.name: metric for metric in metrics if metric.labels}
    if name not in known:
        raise ValueError(f"unknown cluster metric {name!r}; known: {sorted(known)}")
    return 1 if known[name].higher_is_better else -1
