"""Every figure reads at a glance: no two text boxes intersect and every curve is named.

The checker (tests/figure_checks.py) is shown failing on figures built to fail; then every figure
function is checked on synthetic results (every figure a test saves is checked: tests/conftest.py)
and, in the slow tier, every figure of the tiny run, drawn again from its stored tables.
"""

from __future__ import annotations

import itertools

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


def _twin_curves_without_a_legend():
    """IsoScore left, silhouette right, no legend, labels on the outer panels only."""
    figure, axes = plt.subplots(1, 3, figsize=(9, 3))
    for ax in axes:
        ax.plot([0, 1, 2], [0.5, 0.3, 0.1], color="tab:blue", label="IsoScore")
        ax.twinx().plot([0, 1, 2], [0.1, 0.3, 0.5], color="tab:red", label="Silhouette")
    axes[0].set_ylabel("IsoScore")
    return figure


def _legend_on_a_panel_title():
    figure, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], "o", label="miniLM")
    ax.set(title="sst2", xlabel="x", ylabel="y")
    figure.legend(loc="upper center", bbox_to_anchor=(0.5, 1.02), frameon=False)
    figure.tight_layout()
    return figure


def _legend_covering_a_bar():
    figure, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [9, 9, 9], label="bars")
    ax.bar([0.3, 1.3, 2.3], [9, 9, 9], label="more bars")
    ax.legend(loc="upper left")
    return figure


def _legend_covering_points():
    figure, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [1, 1], "o-", label="high")
    ax.plot([0, 1], [0, 0.1], label="low")
    ax.legend(loc="upper left")
    return figure


def _one_curve_without_axis_labels():
    figure, ax = plt.subplots(figsize=(3, 3))
    ax.plot([0, 1], [0, 1])
    return figure


def _tick_labels_run_into_each_other():
    """A log axis over less than a decade labels its minor ticks on top of each other."""
    figure, ax = plt.subplots(figsize=(3, 3))
    ax.scatter([0.29055, 0.2906, 0.29065, 0.2907, 0.29075], [1, 2, 3, 4, 5], label="x")
    ax.set(xscale="log", xlabel="IsoScore", ylabel="Silhouette")
    return figure


@pytest.mark.parametrize(
    "draw, problem",
    [
        (_twin_curves_without_a_legend, "unlabelled curve"),
        (_legend_on_a_panel_title, "overlap: figure legend 0 and title of panel 'sst2' intersect"),
        (_legend_covering_a_bar, "covers a bar"),
        (_legend_covering_points, "covers data points"),
        (_one_curve_without_axis_labels, "has neither both axis labels nor a legend entry"),
        (_tick_labels_run_into_each_other, "tick labels"),
    ],
)
def test_checker_flags_a_figure_built_to_fail(draw, problem):
    problems = _close(draw())
    assert any(problem in p for p in problems), problems


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
    step = np.arange(steps)
    frames = []
    for (encoder, dataset), seed in itertools.product(setups, seeds):
        isoscore = np.exp(-step / 3) * 0.5 + rng.random(steps) * 1e-3
        silhouette = np.linspace(0.0, 0.6, steps) + rng.random(steps) * 0.01
        run = dict(encoder=encoder, dataset=dataset, seed=seed, step=step)
        frames.append(pd.DataFrame(run | dict(isoscore=isoscore, silhouette=silhouette)))
    return pd.concat(frames, ignore_index=True)


SETUPS = [
    ("miniLM", "polarity, miniLM"),
    ("miniLM", "snli, miniLM"),
    ("word2vec", "pos, GloVe 50-d (stand-in for word2vec 300-d)"),
    ("word2vec", "supersense, GloVe 50-d (stand-in for word2vec 300-d)"),
]


STAMP = (
    "PREVIEW (make preview): seed 0, metrics after every 10th update; "
    "not the paper's protocol (make run)"
)


@pytest.mark.parametrize("seeds", [(0,), (0, 1)])
def test_figure2_names_both_curves_and_states_each_panels_change(seeds):
    """Both curves named, the band only where it is drawn; each panel's title states the change
    its curves show (its axes scale to its own data); with its preview stamp, the figure still
    reads at a paper's width."""
    traces = _traces(SETUPS, seeds)
    narrow = traces["dataset"] == SETUPS[1][1]
    traces.loc[narrow, "isoscore"] = 0.365 - 0.026 * traces.loc[narrow, "step"] / 19
    figure = metric_curves(traces, panel="dataset")
    texts = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert texts[:2] == ["IsoScore (left axis)", "Silhouette (right axis)"]
    assert ("± 1 std over seeds" in texts) == (len(seeds) >= 2)  # a band only with 2+ seeds
    title = [ax.get_title() for ax in figure.axes if ax.get_title()][1]
    assert "IsoScore 0.365 → 0.339 (Δ -0.026)" in title, title
    assert "Silhouette " in title and "(Δ +0.6" in title, title
    stamp(figure, STAMP)
    assert figure_problems(figure, page_width=PAPER_TEXT_WIDTH) == []
    plt.close(figure)


def test_checker_reads_the_saved_layout_where_a_legend_hides_the_stamp():
    """Four panels in a row on 14.4 inches, 8-pt ticks, the legend above the panels and the stamp
    as a figure text at the top edge: the boxes meet only in the saved, cropped layout."""
    figure, axes = plt.subplots(1, 4, figsize=(14.4, 3.3), layout="constrained")
    for ax, (_, name) in zip(axes, SETUPS):
        ax.plot([0, 1, 2], [0.3, 0.1, 0.01], color="tab:blue", label="IsoScore (left axis)")
        ax.twinx().plot([0, 1, 2], [0.1, 0.3, 0.4], color="tab:red", label="Silhouette")
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=8)
    figure.legend(loc="outside upper center", ncol=2, frameon=False)
    figure.text(0.5, 1.0, STAMP, ha="center", va="bottom", fontsize=11, fontweight="bold")
    figure.canvas.draw()  # at draw time the two do not meet
    drawn = figure_checks._overlaps(figure, figure.canvas.get_renderer())
    assert not any("PREVIEW" in p for p in drawn), drawn
    problems = figure_problems(figure, page_width=PAPER_TEXT_WIDTH)
    plt.close(figure)
    assert any("PREVIEW" in p and "figure legend" in p for p in problems), problems
    assert any(p.startswith("small text: 8, ") for p in problems), problems  # ticks at 3.5 pt


def test_figure4_grid_of_encoders_and_tasks():
    traces = _traces([("miniLM", t) for t in ("rte", "wnli", "cola")] + [("mpnet", "wnli")], (0,))
    assert _close(metric_curves(traces, panel="dataset", row="encoder")) == []


def _figure3(seeds=(0, 1), flip=None):
    """Figure 3 on SETUPS named as the published values know them (polarity, ..., supersense),
    with the workflow's correlation table (intervals over seeds, the paper's r); ``flip``: a
    data set whose silhouette changes sign."""
    traces = _traces(SETUPS, seeds)
    traces["dataset"] = traces["dataset"].str.split(",").str[0]
    if flip:
        traces.loc[traces["dataset"] == flip, "silhouette"] *= -1
    table = correlation_table(traces, ["encoder", "dataset"])
    table = with_paper_values(table, read_published(), "main")
    figure = silhouette_vs_isoscore(traces, "dataset", table)
    panels = {ax.get_title().split("\n")[0]: ax for ax in figure.axes if ax.get_xlabel()}
    return figure, panels, table


def test_figure3_titles_give_the_interval_over_seeds_and_say_what_it_is():
    figure, panels, table = _figure3(seeds=(0, 1, 2))
    assert {ax.get_xscale() for ax in panels.values()} == {"log"}  # one convention for all
    title = panels["polarity"].get_title()
    assert title.startswith("polarity\nr = ") and " pooled; seeds " in title and "[" in title
    # each seed's r, as the table's seed<k> rows give it
    seed_rs = table[(table["dataset"] == "polarity") & (table["scope"] != "all")]["pearson_r"]
    assert len(seed_rs) > 1
    assert "r per seed: " + " ".join(f"{v:+.3f}" for v in seed_rs) in title.replace("\n", " ")
    note = figure._supxlabel.get_text().replace("\n", " ")  # the figure says what its intervals are
    assert "the 95% t-interval over seeds of the per-seed values" in note
    assert _close(figure) == []
    assert panel_title("polarity, miniLM") == "polarity, miniLM"


def test_figure3_one_seed_says_no_interval_and_a_sign_against_the_paper_is_marked():
    figure, panels, _ = _figure3(seeds=(0,), flip="supersense")  # r > 0; the paper's −0.978
    titles = [ax.get_title() for ax in panels.values()]
    assert all("(1 seed: no interval)" in t and "[" not in t for t in titles), titles
    assert not any("per seed" in t for t in titles)  # one seed: its value is the pooled r
    assert "sign differs from the paper (r = -0.978)" in panels["supersense"].get_title()
    assert panels["supersense"].spines["left"].get_edgecolor()[:3] == to_rgb("firebrick")
    assert "sign differs" not in panels["polarity"].get_title()
    assert panels["polarity"].spines["left"].get_edgecolor()[:3] != to_rgb("firebrick")
    assert _close(figure) == []


@pytest.mark.parametrize("zero", [False, True])
def test_figure3_keeps_one_scale_and_labels_a_narrow_log_panel(zero):
    """One x scale for all panels: log, labelled even inside one decade; linear everywhere once a
    value is 0."""
    traces = _traces(SETUPS[:2])
    narrow = traces["dataset"] == SETUPS[1][1]
    traces.loc[narrow, "isoscore"] = np.linspace(0.365, 0.339, narrow.sum())  # supersense-like
    if zero:
        traces.loc[traces.index[0], "isoscore"] = 0.0
    figure = silhouette_vs_isoscore(traces, panel="dataset")
    panels = [ax for ax in figure.axes if ax.get_xlabel()]
    assert [ax.get_xscale() for ax in panels] == ["linear" if zero else "log"] * 2
    figure.canvas.draw()
    labels = [t.get_text() for t in panels[1].get_xticklabels() if t.get_text()]
    assert len(labels) >= 2, labels  # a log axis inside one decade still says where it is
    assert _close(figure) == []


MODELS = ("miniLM", "mpnet")


def _sts_table():
    methods = pd.DataFrame({"method": ["none", "cluster-based", "abtt"], "rank": range(3)})
    table = pd.DataFrame({"model": MODELS}).merge(methods, how="cross")
    rank = table.pop("rank")
    # tall bars (Spearman): a legend inside would cover them
    table = table.assign(dataset="stsb", split="train", pearson=80 + rank, spearman=79 + rank)
    return table.assign(isotropy=10.0 ** (rank - 3))


def _cosine_table():
    layer = np.tile(np.arange(4.0), 2)
    contextual = pd.DataFrame({"model": np.repeat(MODELS, 4), "kind": "contextual", "layer": layer})
    contextual = contextual.assign(s_inter=0.1 * layer, s_intra=0.2 + 0.1 * layer)
    contextual = contextual.assign(s_inter_adjusted=0.01, s_intra_adjusted=0.1)
    contextual["condition_number"] = 100.0 + layer
    static = pd.DataFrame(
        [{"model": "GloVe 50-d (stand-in for word2vec)", "kind": "static", "layer": np.nan}]
    ).assign(s_inter=0.05, s_inter_adjusted=0.01, condition_number=40.0)
    return pd.concat([contextual, static], ignore_index=True).assign(seed=0)


def _lid_table():
    table = _cosine_table()[["model", "kind", "layer"]]
    table["lid_cai_scale"] = np.where(table["kind"] == "static", 8, 5 + table["layer"])
    both = [table.assign(metric=metric) for metric in ("euclidean", "cosine")]
    return pd.concat(both, ignore_index=True).assign(k=10)


def test_geometry_figures():
    """Every geometry figure reads; the cosine figure's third panel draws the condition numbers
    per layer (log scale); the token views colour the same points by kind and by the decade band
    of the corpus count."""
    rng = np.random.default_rng(0)
    tokens = ["the", "##ing", ",", "[CLS]", "film"] * 12
    pca = pd.DataFrame(rng.normal(size=(60, 3)), columns=["pc1", "pc2", "pc3"])
    pca = pca.assign(cluster=rng.integers(0, 3, 60), layer=6, token=tokens)
    pca[["variance_ratio_pc1", "variance_ratio_pc2", "variance_ratio_pc3"]] = [0.3, 0.2, 0.1]
    cosine = _cosine_table()
    counts = pd.DataFrame({"token": tokens[:5], "count": [5000, 3, 700, 80, 1]})
    figures = [
        geometry_plots.plot_sts(_sts_table()),
        geometry_plots.plot_cosine_by_layer(cosine),
        geometry_plots.plot_lid_by_layer(_lid_table()),
        geometry_plots.plot_pca_view(pca, "miniLM on polarity"),
        geometry_plots.plot_token_views(pca, counts, "gpt2 on wikitext2"),
    ]
    panel = figures[1].axes[2]
    assert panel.get_yscale() == "log" and len(figures[1].axes) == 3
    first = cosine[cosine["model"] == "miniLM"]["condition_number"]
    np.testing.assert_allclose(panel.lines[0].get_ydata(), first)
    by_kind, by_count = figures[-1].axes[:2]
    labels = [t.get_text() for t in by_count.get_legend().get_texts()]
    assert labels == ["1 (12)", "2-9 (12)", "10-99 (12)", "100-999 (12)", "1,000-9,999 (12)"]
    kinds = [t.get_text() for t in by_kind.get_legend().get_texts()]
    assert kinds == ["word (24)", "sub-word piece (12)", "symbol (12)", "special (12)"]
    assert [_close(figure) for figure in figures] == [[]] * len(figures)
    tokens = ("film", "##s", "...", "'", "[SEP]", "<s>", "3d")
    kinds = [geometry_plots.token_kind(t) for t in tokens]
    assert kinds == ["word", "sub-word piece", "symbol", "symbol", "special", "special", "word"]
    bands = [geometry_plots.frequency_band(c) for c in (1, 2, 9, 10, 99, 100, 12_345)]
    assert bands == ["1", "2-9", "2-9", "10-99", "10-99", "100-999", "10,000 or more"]


# --- every figure of the tiny run -----------------------------------------------------------


@pytest.mark.slow
def test_every_figure_of_the_tiny_run_reads_at_a_glance(tiny_run):
    """Re-draw every figure of the tiny run from its stored results, as the plot steps do, and
    check each."""
    import figure_rendering

    workdir, _, _ = tiny_run
    figures = figure_rendering.tiny_run_figures(workdir)
    # figures 2-7, cosine, LID, STS, one PCA view and its token views
    assert len(figures) == 11, sorted(figures)
    failures = {name: _close(figure) for name, figure in figures.items()}
    assert {name: p for name, p in failures.items() if p} == {}
