"""The metric registry drives the per-update metrics: a metric registered here (and nowhere else)
gains its trace column in the optimisation, its curve in Figures 2 and 4, and, given the
``clusters`` role, the correlation table and Figure 3. The shipped registry keeps the golden
trace columns."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats
from test_optimize import CPU, settings, word_task

from isotropy.metrics import isoscores, registry
from isotropy.optimize import OptimisationSettings, build_problem, run_optimisation
from isotropy.plots.checks import plt
from isotropy.plots.main import metric_curves, silhouette_vs_isoscore
from isotropy.summaries import correlation_table


def mean_norm_tensor(x: torch.Tensor) -> torch.Tensor:
    """A toy per-update metric: the mean row norm, a 0-d float64 tensor."""
    return torch.linalg.vector_norm(x.to(torch.float64), dim=1).mean()


TOY = registry.TraceMetric(
    "mean_norm",
    "Mean norm",
    "isoscores:mean_norm_tensor",
    points="table",
    labels=False,
    colour="tab:green",
    axis="left",
)


def test_shipped_registry_keeps_the_golden_trace_columns_and_the_optional_criteria():
    assert registry.trace_columns() == ("loss", "accuracy", "isoscore", "silhouette")
    assert registry.with_role("isotropy").name == "isoscore"
    assert registry.with_role("clusters").name == "silhouette"
    # the cluster criteria (tests/test_criteria.py): registered, recorded only when asked
    names = [m.name for m in registry.optional_metrics()]
    assert names == ["dunn", "calinski_harabasz", "davies_bouldin"]
    assert registry.cluster_criteria() == tuple(names)
    assert not set(names) & set(registry.metric_columns())
    with pytest.raises(ValueError, match="unknown optional metric"):
        OptimisationSettings(extra_metrics=("dunno",))
    # which way is better
    assert [registry.orientation(n) for n in ("silhouette", *names)] == [1, 1, 1, -1]
    with pytest.raises(ValueError, match="unknown cluster metric 'isoscore'"):
        registry.orientation("isoscore")


def test_registry_is_torch_free_to_import():
    code = "import sys, isotropy.metrics.registry; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def _toy_traces():
    rng = np.random.default_rng(0)
    rows = []
    for seed in (0, 1):
        for step in range(12):
            rows.append(
                {
                    "dataset": "polarity",
                    "seed": seed,
                    "step": step,
                    "isoscore": 0.5 * np.exp(-step / 3) + rng.random() * 1e-3,
                    "silhouette": step / 20 + rng.random() * 0.01,
                    "mean_norm": 1 + step / 10 + rng.random() * 0.05,
                }
            )
    return pd.DataFrame(rows)


def test_a_registered_metric_gains_its_trace_column(monkeypatch):
    """The toy metric in a metrics module and one registry entry: its column after the others,
    which stay as they were without it, and its curve in Figure 2."""
    problem = build_problem(*word_task(n=60))
    before, _ = run_optimisation(problem, settings(updates=6, metric_stride=2), CPU)
    monkeypatch.setattr(isoscores, "mean_norm_tensor", mean_norm_tensor, raising=False)
    monkeypatch.setattr(registry, "TRACE_METRICS", (*registry.TRACE_METRICS, TOY))
    trace, summary = run_optimisation(problem, settings(updates=6, metric_stride=2), CPU)
    assert list(trace.columns) == [*before.columns, "mean_norm"]
    assert list(before.columns) == ["seed", "step", "loss", "accuracy", "isoscore", "silhouette"]
    assert trace[list(before.columns)].equals(before)
    assert np.isfinite(trace["mean_norm"]).all()
    assert trace["mean_norm"].iloc[0] == pytest.approx(
        float(np.linalg.norm(problem.vectors.astype(np.float64), axis=1).mean())
    )
    assert "mean_norm" in summary["final"]
    figure = metric_curves(_toy_traces(), panel="dataset")
    texts = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    plt.close(figure)
    assert texts[:3] == ["IsoScore (left axis)", "Silhouette (right axis)", "Mean norm (left axis)"]


def test_correlation_table_and_figure3_follow_the_registered_roles(monkeypatch):
    monkeypatch.setattr(isoscores, "mean_norm_tensor", mean_norm_tensor, raising=False)
    silhouette = registry.with_role("clusters")
    entries = [m for m in registry.TRACE_METRICS if m is not silhouette]
    monkeypatch.setattr(
        registry,
        "TRACE_METRICS",
        (
            *entries,
            registry.TraceMetric(**{**vars(silhouette), "role": None}),
            registry.TraceMetric(**{**vars(TOY), "role": "clusters"}),
        ),
    )
    traces = _toy_traces()
    table = correlation_table(traces, by=["dataset"])
    pooled = table[table["scope"] == "all"].iloc[0]
    expected = stats.spearmanr(traces["isoscore"], traces["mean_norm"]).statistic
    assert pooled["spearman_rho"] == pytest.approx(expected)
    figure = silhouette_vs_isoscore(traces, panel="dataset")
    assert figure.axes[0].get_ylabel() == "Mean norm"
    plt.close(figure)
