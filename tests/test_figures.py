"""Every figure reads at a glance: no two text boxes intersect and every curve is named.

The checker (isotropy.plots.check) is tested on figures built to fail; then every figure
function is checked on synthetic results, and (slow tier) every figure of the tiny run is
rendered again from its stored tables and checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from isotropy.plots import FigureCheckError, check_figure, plt
from isotropy.plots import geometry as geometry_plots
from isotropy.plots import istar as istar_plots
from isotropy.plots.check import figure_problems
from isotropy.plots.main import metric_curves, panel_title, silhouette_vs_isoscore


def _close(figure):
    problems = figure_problems(figure)
    plt.close(figure)
    return problems


# --- the checker fails where it should ------------------------------------------------------


def test_checker_flags_twin_curves_without_a_legend():
    """Figure 2 as it was: IsoScore left, silhouette right, no legend, labels on outer panels only."""
    figure, axes = plt.subplots(1, 3, figsize=(9, 3))
    for j, ax in enumerate(axes):
        twin = ax.twinx()
        ax.plot([0, 1, 2], [0.5, 0.3, 0.1], color="tab:blue", label="IsoScore")
        twin.plot([0, 1, 2], [0.1, 0.3, 0.5], color="tab:red", label="Silhouette")
        if j == 0:
            ax.set_ylabel("IsoScore")
        if j == 2:
            twin.set_ylabel("Silhouette")
    problems = _close(figure)
    assert sum("unlabelled curve" in p for p in problems) == 6, problems


def test_checker_flags_a_legend_on_a_panel_title():
    """Figure 5 as it was: a figure legend anchored at the top, on the panel title."""
    figure, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], "o", label="miniLM")
    ax.set_title("sst2")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    figure.legend(loc="upper center", bbox_to_anchor=(0.5, 1.02), frameon=False)
    figure.tight_layout()
    problems = _close(figure)
    assert any("overlap" in p and "sst2" in p for p in problems), problems


def test_checker_flags_a_legend_covering_a_bar():
    figure, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [9, 9, 9], label="bars")
    ax.bar([0.3, 1.3, 2.3], [9, 9, 9], label="more bars")
    ax.legend(loc="upper left")
    problems = _close(figure)
    assert any("covers a bar" in p for p in problems), problems


def test_checker_passes_a_clean_figure_and_strict_mode_raises(monkeypatch):
    figure, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1], label="a")
    ax.plot([0, 1], [1, 0], label="b")
    ax.axhline(0.5, gid="decoration")
    figure.legend(loc="outside right upper")
    assert figure_problems(figure) == []
    ax.plot([0, 1], [0.5, 0.6])  # a third, unnamed curve
    monkeypatch.setenv("ISOTROPY_FIGURE_CHECK", "strict")
    with pytest.raises(FigureCheckError, match="unlabelled curve"):
        check_figure(figure)
    plt.close(figure)


# --- every figure function, on synthetic results --------------------------------------------


def _traces(setups, seeds=(0, 1), steps=20):
    rng = np.random.default_rng(0)
    rows = []
    for encoder, dataset in setups:
        for seed in seeds:
            iso = np.exp(-np.arange(steps) / 3) * 0.5 + rng.random(steps) * 1e-3
            sil = np.linspace(0.0, 0.6, steps) + rng.random(steps) * 0.01
            for step in range(steps):
                rows.append(
                    {
                        "encoder": encoder,
                        "dataset": dataset,
                        "seed": seed,
                        "step": step,
                        "isoscore": iso[step],
                        "silhouette": sil[step],
                    }
                )
    return pd.DataFrame(rows)


SETUPS = [
    ("miniLM", "polarity, miniLM"),
    ("miniLM", "snli, miniLM"),
    ("word2vec", "pos, GloVe 50-d (stand-in for word2vec 300-d)"),
    ("word2vec", "supersense, GloVe 50-d (stand-in for word2vec 300-d)"),
]


@pytest.mark.parametrize("seeds", [(0,), (0, 1)])
def test_figure2_names_both_curves_on_every_panel(seeds):
    figure = metric_curves(_traces(SETUPS, seeds), panel="dataset")
    texts = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert texts[:2] == ["IsoScore (left axis)", "Silhouette (right axis)"]
    assert ("± 1 std over seeds" in texts) == (len(seeds) >= 2)  # a band only with 2+ seeds
    assert _close(figure) == []


def test_figure4_grid_of_encoders_and_tasks():
    traces = _traces([("miniLM", t) for t in ("rte", "wnli", "cola")] + [("mpnet", "wnli")], (0,))
    assert _close(metric_curves(traces, panel="dataset", row="encoder")) == []


def test_figure3_log_isoscore_axis_and_titles():
    traces = _traces(SETUPS)
    correlations = pd.DataFrame(
        [
            {"dataset": d, "scope": "all", "pearson_r": -0.9, "spearman_rho": -0.95}
            for _, d in SETUPS
        ]
    )
    figure = silhouette_vs_isoscore(traces, panel="dataset", correlations=correlations)
    panels = [ax for ax in figure.axes if ax.get_xlabel()]
    assert {ax.get_xscale() for ax in panels} == {"log"}
    assert panels[2].get_title().startswith("pos, GloVe 50-d (stand-in for")
    assert "ρ = -0.95" in panels[2].get_title()
    assert _close(figure) == []
    assert panel_title("polarity, miniLM") == "polarity, miniLM"


@pytest.mark.parametrize("low", [0.0, 0.3])  # a zero, or less than a decade: linear
def test_figure3_linear_isoscore_axis_when_log_would_not_help(low):
    traces = _traces(SETUPS[:1])
    traces["isoscore"] = np.linspace(0.5, low, len(traces))
    figure = silhouette_vs_isoscore(traces, panel="dataset")
    assert figure.axes[0].get_xscale() == "linear"
    assert figure.axes[0].get_xlabel() == "IsoScore"
    assert _close(figure) == []


def test_checker_flags_tick_labels_that_run_into_each_other():
    """A log axis over less than a decade labels its minor ticks on top of each other."""
    figure, ax = plt.subplots(figsize=(3, 3))
    ax.scatter([0.29055, 0.2906, 0.29065, 0.2907, 0.29075], [1, 2, 3, 4, 5], label="x")
    ax.set_xscale("log")
    ax.set_xlabel("IsoScore")
    ax.set_ylabel("Silhouette")
    problems = _close(figure)
    assert any("tick labels" in p for p in problems), problems


def _istar_runs():
    rows = []
    for model in ("miniLM", "mpnet"):
        for task in ("sst2", "cola"):
            for regulariser, lams in (("none", [0]), ("istar", [-5, 5]), ("cosreg", [1])):
                for lam in lams:
                    for seed in (0, 1):
                        rows.append(
                            {
                                "model": model,
                                "task": task,
                                "regulariser": regulariser,
                                "lambda": float(lam),
                                "seed": seed,
                                "metric": 0.5 + 0.01 * lam + 0.01 * seed,
                                "metric_name": "accuracy",
                                "isoscore_star": 0.3 - 0.02 * lam,
                                "twonn": 10 + lam,
                            }
                        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("make", [istar_plots.figure5, istar_plots.figure6, istar_plots.figure7])
def test_istar_figures(make):
    figure, _ = make(_istar_runs())
    assert _close(figure) == []


def _sts_table():
    rows = []
    for model in ("miniLM", "mpnet"):
        for dataset in ("stsb",):
            for i, method in enumerate(("none", "cluster-based", "abtt")):
                rows.append(
                    {
                        "model": model,
                        "dataset": dataset,
                        "split": "train",
                        "method": method,
                        "pearson": 80 + i,
                        "spearman": 79 + i,  # tall bars: a legend inside would cover them
                        "isotropy": 10.0 ** (-3 + i),
                    }
                )
    return pd.DataFrame(rows)


def _cosine_table():
    rows = []
    for model in ("miniLM", "mpnet"):
        for layer in range(4):
            rows.append(
                {
                    "model": model,
                    "kind": "contextual",
                    "layer": layer,
                    "seed": 0,
                    "s_inter": 0.1 * layer,
                    "s_intra": 0.2 + 0.1 * layer,
                    "s_inter_adjusted": 0.01,
                    "s_intra_adjusted": 0.1,
                }
            )
    rows.append(
        {
            "model": "GloVe 50-d (stand-in for word2vec)",
            "kind": "static",
            "layer": np.nan,
            "seed": 0,
            "s_inter": 0.05,
            "s_intra": np.nan,
            "s_inter_adjusted": 0.01,
            "s_intra_adjusted": np.nan,
        }
    )
    return pd.DataFrame(rows)


def _lid_table():
    rows = []
    for metric in ("euclidean", "cosine"):
        for model in ("miniLM", "mpnet"):
            for layer in range(4):
                rows.append(
                    dict(
                        model=model,
                        kind="contextual",
                        layer=layer,
                        metric=metric,
                        k=10,
                        lid_cai_scale=5 + layer,
                    )
                )
        rows.append(
            dict(model="GloVe", kind="static", layer=np.nan, metric=metric, k=10, lid_cai_scale=8)
        )
    return pd.DataFrame(rows)


def test_geometry_figures():
    rng = np.random.default_rng(0)
    pca = pd.DataFrame(rng.normal(size=(60, 3)), columns=["pc1", "pc2", "pc3"])
    pca["cluster"] = rng.integers(0, 3, 60)
    pca["layer"] = 6
    for figure in (
        geometry_plots.plot_sts(_sts_table()),
        geometry_plots.plot_cosine_by_layer(_cosine_table()),
        geometry_plots.plot_lid_by_layer(_lid_table()),
        geometry_plots.plot_pca_view(pca, "miniLM on polarity"),
    ):
        assert _close(figure) == []


# --- every figure of the tiny run -----------------------------------------------------------


@pytest.mark.slow
def test_every_figure_of_the_tiny_run_reads_at_a_glance(tiny_run):
    """Re-draw every figure of the tiny run from its stored results, as the plot steps do, and
    check each (the plot steps themselves warn in their logs on any problem)."""
    import figure_rendering

    workdir, _, _ = tiny_run
    figures = figure_rendering.tiny_run_figures(workdir)
    assert len(figures) == 10, sorted(figures)  # figures 2-7, cosine, LID, STS, one PCA view
    failures = {name: _close(figure) for name, figure in figures.items()}
    assert {name: p for name, p in failures.items() if p} == {}
