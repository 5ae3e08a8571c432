"""Every figure reads at a glance: no two text boxes intersect and every curve is named.

The checker (tests/figure_checks.py: figure_problems) is tested on figures built to fail; then every
figure function is checked on synthetic results (the I-STAR figures where tests/test_istar_plots.py
saves them: every figure a test saves is checked), and (slow tier) every figure of the tiny run is
rendered again from its stored tables and checked.
"""

from __future__ import annotations

import figure_checks
import numpy as np
import pandas as pd
import pytest
from figure_checks import FigureCheckError, check_figure, figure_problems
from matplotlib.colors import to_rgb

from isotropy.plots import geometry as geometry_plots
from isotropy.plots.checks import PAPER_TEXT_WIDTH, plt, save_figure, stamp
from isotropy.plots.main import metric_curves, panel_title, silhouette_vs_isoscore
from isotropy.summaries import correlation_table, with_paper_values
from isotropy.verdicts.comparison import read_published


def _close(figure):
    problems = figure_problems(figure)
    plt.close(figure)
    return problems


# --- the checker fails where it should ------------------------------------------------------


def test_checker_flags_twin_curves_without_a_legend():
    """Figure 2 as it was: IsoScore left, silhouette right, no legend, labels on outer panels
    only."""
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


def test_checker_passes_a_clean_figure_and_strict_mode_raises(tmp_path):
    figure, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1], label="a")
    ax.plot([0, 1], [1, 0], label="b")
    ax.axhline(0.5, gid="decoration")
    figure.legend(loc="outside right upper")
    assert figure_problems(figure) == []
    ax.plot([0, 1], [0.5, 0.6])  # a third, unnamed curve
    with pytest.raises(FigureCheckError, match="unlabelled curve"):
        check_figure(figure)
    # the house saver runs the check (tests/conftest.py) before it writes anything
    with pytest.raises(FigureCheckError, match="f.pdf does not read at a glance"):
        save_figure(figure, tmp_path / "f.pdf", tmp_path / "f.png")
    assert list(tmp_path.iterdir()) == []
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
@pytest.mark.covers("mickus:fig2")
def test_figure2_names_both_curves_on_every_panel(seeds):
    figure = metric_curves(_traces(SETUPS, seeds), panel="dataset")
    texts = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert texts[:2] == ["IsoScore (left axis)", "Silhouette (right axis)"]
    assert ("± 1 std over seeds" in texts) == (len(seeds) >= 2)  # a band only with 2+ seeds
    assert _close(figure) == []


STAMP = (
    "PREVIEW (make preview): seed 0, metrics after every 10th update; "
    "not the paper's protocol (make run)"
)


def _figure2_as_it_was():
    """Figure 2 before issue 36: four panels in a row on 14.4 inches, 8-pt ticks, the legend above
    the panels and the PREVIEW stamp as a figure text at the top edge."""
    figure, axes = plt.subplots(1, 4, figsize=(14.4, 3.3), layout="constrained")
    for ax, (_, name) in zip(axes, SETUPS):
        twin = ax.twinx()
        ax.plot([0, 1, 2], [0.3, 0.1, 0.01], color="tab:blue", label="IsoScore (left axis)")
        twin.plot([0, 1, 2], [0.1, 0.3, 0.4], color="tab:red", label="Silhouette (right axis)")
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=8)
        twin.tick_params(labelsize=8)
    figure.legend(loc="outside upper center", ncol=2, frameon=False)
    figure.text(0.5, 1.0, STAMP, ha="center", va="bottom", fontsize=11, fontweight="bold")
    return figure


def test_checker_reads_the_saved_layout_where_figure2_hid_its_stamp():
    figure = _figure2_as_it_was()
    figure.canvas.draw()  # at draw time the two do not meet: the old check passed
    drawn = figure_checks._overlaps(figure, figure.canvas.get_renderer())
    assert not any("PREVIEW" in p for p in drawn), drawn
    problems = figure_problems(figure, page_width=PAPER_TEXT_WIDTH)
    plt.close(figure)
    assert any("PREVIEW" in p and "figure legend" in p for p in problems), problems
    assert any(p.startswith("small text: 8, ") for p in problems), problems  # ticks at 3.5 pt


def test_figure2_with_its_stamp_reads_at_a_papers_width():
    figure = metric_curves(_traces(SETUPS, (0,)), panel="dataset")
    stamp(figure, STAMP)
    assert figure_problems(figure, page_width=PAPER_TEXT_WIDTH) == []
    plt.close(figure)


def test_figure2_panels_state_the_change_they_show():
    traces = _traces(SETUPS[:2], (0, 1))
    narrow = traces["dataset"] == SETUPS[1][1]
    traces.loc[narrow, "isoscore"] = 0.365 - 0.026 * traces.loc[narrow, "step"] / 19
    figure = metric_curves(traces, panel="dataset")
    title = [ax.get_title() for ax in figure.axes if ax.get_title()][1]
    assert "IsoScore 0.365 → 0.339 (Δ -0.026)" in title, title
    assert "Silhouette " in title and "(Δ +0.6" in title, title
    assert _close(figure) == []


@pytest.mark.covers("mickus:fig4")
def test_figure4_grid_of_encoders_and_tasks():
    traces = _traces([("miniLM", t) for t in ("rte", "wnli", "cola")] + [("mpnet", "wnli")], (0,))
    assert _close(metric_curves(traces, panel="dataset", row="encoder")) == []


def _correlations(traces):
    """The correlation table of the workflow (intervals over seeds, the paper's r) for
    ``traces``."""
    table = correlation_table(traces, ["encoder", "dataset"])
    return with_paper_values(table, read_published(), "main")


def _paper_named(traces):
    """SETUPS with the data set names the published values know (polarity, snli, pos,
    supersense)."""
    traces = traces.copy()
    traces["dataset"] = traces["dataset"].str.split(",").str[0]
    return traces


@pytest.mark.covers("mickus:fig3")
def test_figure3_titles_give_the_interval_over_seeds_and_say_what_it_is():
    traces = _paper_named(_traces(SETUPS, seeds=(0, 1, 2)))
    figure = silhouette_vs_isoscore(traces, "dataset", _correlations(traces))
    panels = [ax for ax in figure.axes if ax.get_xlabel()]
    assert {ax.get_xscale() for ax in panels} == {"log"}  # one convention for every panel
    title = panels[0].get_title()
    assert title.startswith("polarity\nr = ") and " pooled; seeds " in title and "[" in title
    # each seed's r, as the table's seed<k> rows give it
    table = _correlations(traces)
    seed_rs = table[(table["dataset"] == "polarity") & (table["scope"] != "all")]["pearson_r"]
    assert len(seed_rs) > 1
    assert "r per seed: " + " ".join(f"{v:+.3f}" for v in seed_rs) in title.replace("\n", " ")
    note = figure._supxlabel.get_text().replace("\n", " ")  # the figure says what its intervals are
    assert "the 95% t-interval over seeds of the per-seed values" in note
    assert _close(figure) == []
    assert panel_title("polarity, miniLM") == "polarity, miniLM"


def test_figure3_one_seed_says_no_interval():
    traces = _paper_named(_traces(SETUPS, seeds=(0,)))
    figure = silhouette_vs_isoscore(traces, "dataset", _correlations(traces))
    titles = [ax.get_title() for ax in figure.axes if ax.get_xlabel()]
    assert all("(1 seed: no interval)" in t and "[" not in t for t in titles), titles
    assert not any("per seed" in t for t in titles)  # one seed: its value is the pooled r
    assert _close(figure) == []


def test_figure3_marks_a_sign_against_the_paper():
    traces = _paper_named(_traces(SETUPS))
    flipped = traces["dataset"] == "supersense"
    traces.loc[flipped, "silhouette"] = -traces.loc[flipped, "silhouette"]  # r > 0; paper −0.978
    figure = silhouette_vs_isoscore(traces, "dataset", _correlations(traces))
    panels = {ax.get_title().split("\n")[0]: ax for ax in figure.axes if ax.get_xlabel()}
    assert "sign differs from the paper (r = -0.978)" in panels["supersense"].get_title()
    assert panels["supersense"].spines["left"].get_edgecolor()[:3] == to_rgb("firebrick")
    assert "sign differs" not in panels["polarity"].get_title()
    assert panels["polarity"].spines["left"].get_edgecolor()[:3] != to_rgb("firebrick")
    assert _close(figure) == []


def test_figure3_keeps_one_scale_and_labels_a_narrow_log_panel():
    traces = _traces(SETUPS[:2])
    narrow = traces["dataset"] == SETUPS[1][1]
    traces.loc[narrow, "isoscore"] = np.linspace(0.365, 0.339, narrow.sum())  # supersense-like
    figure = silhouette_vs_isoscore(traces, panel="dataset")
    panels = [ax for ax in figure.axes if ax.get_xlabel()]
    assert [ax.get_xscale() for ax in panels] == ["log", "log"]
    figure.canvas.draw()
    labels = [t.get_text() for t in panels[1].get_xticklabels() if t.get_text()]
    assert len(labels) >= 2, labels  # a log axis inside one decade still says where it is
    assert _close(figure) == []


def test_figure3_is_linear_everywhere_when_a_value_is_zero():
    traces = _traces(SETUPS[:2])
    traces.loc[traces.index[-1], "isoscore"] = 0.0
    figure = silhouette_vs_isoscore(traces, panel="dataset")
    assert {ax.get_xscale() for ax in figure.axes if ax.get_xlabel()} == {"linear"}
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
    table = pd.DataFrame(rows)
    table["condition_number"] = np.where(table["kind"] == "static", 40.0, 100.0 + table["layer"])
    return table


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
    pca["token"] = ["the", "##ing", ",", "[CLS]"] * 15
    pca[["variance_ratio_pc1", "variance_ratio_pc2", "variance_ratio_pc3"]] = [0.3, 0.2, 0.1]
    for figure in (
        geometry_plots.plot_sts(_sts_table()),
        geometry_plots.plot_cosine_by_layer(_cosine_table()),
        geometry_plots.plot_lid_by_layer(_lid_table()),
        geometry_plots.plot_pca_view(pca, "miniLM on polarity"),
    ):
        assert _close(figure) == []


def test_condition_number_panel_and_token_views():
    """The cosine figure's third panel draws the condition numbers per layer (log scale); the
    token views colour the same points by kind and by the decade band of the corpus count."""
    table = _cosine_table()
    figure = geometry_plots.plot_cosine_by_layer(table)
    panel = figure.axes[2]
    assert panel.get_yscale() == "log" and len(figure.axes) == 3
    first = table[table["kind"] == "contextual"].groupby("model", sort=False)
    model, rows = next(iter(first))
    np.testing.assert_allclose(panel.lines[0].get_ydata(), rows["condition_number"])
    assert _close(figure) == []
    bands = [geometry_plots.frequency_band(c) for c in (1, 2, 9, 10, 99, 100, 12_345)]
    assert bands == ["1", "2-9", "2-9", "10-99", "10-99", "100-999", "10,000 or more"]
    rng = np.random.default_rng(1)
    tokens = ["the", "##ing", ",", "[CLS]", "film"] * 12
    view = pd.DataFrame(rng.normal(size=(60, 2)), columns=["pc1", "pc2"])
    view = view.assign(layer=2, token=tokens)
    counts = pd.DataFrame({"token": ["the", "##ing", ",", "[CLS]", "film"]})
    counts["count"] = [5000, 3, 700, 80, 1]
    figure = geometry_plots.plot_token_views(view, counts, "gpt2 on wikitext2")
    by_kind, by_count = figure.axes[:2]
    labels = [t.get_text() for t in by_count.get_legend().get_texts()]
    assert labels == ["1 (12)", "2-9 (12)", "10-99 (12)", "100-999 (12)", "1,000-9,999 (12)"]
    kinds = [t.get_text() for t in by_kind.get_legend().get_texts()]
    assert kinds == ["word (24)", "sub-word piece (12)", "symbol (12)", "special (12)"]
    assert _close(figure) == []


@pytest.mark.covers("cai:token-kinds")
def test_token_kinds_of_the_pca_view():
    kinds = [
        geometry_plots.token_kind(t) for t in ("film", "##s", "...", "'", "[SEP]", "<s>", "3d")
    ]
    assert kinds == ["word", "sub-word piece", "symbol", "symbol", "special", "special", "word"]


# --- every figure of the tiny run -----------------------------------------------------------


@pytest.mark.slow
def test_every_figure_of_the_tiny_run_reads_at_a_glance(tiny_run):
    """Re-draw every figure of the tiny run from its stored results, as the plot steps do, and
    check each (the plot steps themselves warn in their logs on any problem)."""
    import figure_rendering

    workdir, _, _ = tiny_run
    figures = figure_rendering.tiny_run_figures(workdir)
    # figures 2-7, cosine, LID, STS, one PCA view and its token views
    assert len(figures) == 11, sorted(figures)
    failures = {name: _close(figure) for name, figure in figures.items()}
    assert {name: p for name, p in failures.items() if p} == {}
