"""Figures of the direct-optimisation studies, from stored traces: the paper's Figures 2, 3 and 4,
section 2 on real points, and the sensitivity study's (r by condition, the two phases of a run).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter, NullLocator

from isotropy.metrics import registry
from isotropy.plots.checks import DECORATION, band, caption, panel_grid, wrapped

SIGN_MARK = "sign differs from the paper"
INTERVAL_NOTE = (
    "r, ρ: Pearson and Spearman correlation of {x} and {y} over every recorded step of every seed "
    "(pooled). In brackets: the 95% t-interval over seeds of the per-seed values (Fisher z), "
    "after their mean; with one seed there is no interval. A red frame marks a panel whose sign "
    "differs from the paper's r (Mickus et al. 2024, §3.2) or whose seeds disagree in sign."
)
# Section 2 on real points: the curves of each panel (trace column, label, colour).
SECTION2_SCORES = (
    ("isoscore", "IsoScore", "tab:blue"),
    ("eq2_objective", "Eq. (2): cos(λ, 1)", "tab:cyan"),
    ("silhouette", "silhouette", "tab:red"),
)
SECTION2_DISTANCES = (
    ("eq1_objective", "Eq. (1): mean inter − intra distance", "tab:purple"),
    ("intra_class_spread", "intra-class spread", "tab:orange"),
)


def setup_label(dataset: str, encoder: str, encoder_labels: dict[str, str]) -> str:
    """A panel's setup in plain words: "pos, GloVe 50-d (stand-in for word2vec 300-d)"."""
    return f"{dataset}, {encoder_labels.get(encoder, encoder)}"


def _curve_name(metric: registry.TraceMetric) -> str:
    return f"{metric.label} ({metric.axis} axis)"


def _panel_curves(ax: plt.Axes, frame: pd.DataFrame, seeds: int) -> bool:
    """Every registered metric's mean over seeds on its axis of one panel (the right one a twin)."""
    banded = seeds >= 2 and not frame.empty  # one seed has no spread: no band
    for side, axis in (("left", ax), ("right", ax.twinx())):
        drawn = [metric for metric in registry.trace_metrics() if metric.axis == side]
        if not drawn:
            continue
        colour = drawn[0].colour if len(drawn) == 1 else "black"
        axis.set_ylabel(" / ".join(metric.label for metric in drawn), color=colour, fontsize=9)
        axis.tick_params(axis="y", labelcolor=colour, labelsize=8)
        if frame.empty:
            continue
        for metric in drawn:
            alpha = 0.25 if banded else 0
            band(axis, frame, "step", metric.name, _curve_name(metric), metric.colour, alpha=alpha)
    return banded


def _change(frame: pd.DataFrame) -> str:
    """What a panel's curves change by, first to last step (means over seeds): each panel scales
    its axes to its own data, so the size of the change is stated, not left to the eye."""
    lines = []
    for metric in registry.trace_metrics():
        means = frame.groupby("step")[metric.name].mean()
        first, last = means.iloc[0], means.iloc[-1]
        change = last - first
        # decimals enough to show the change: 0.30605 → 0.30616, not 0.306 → 0.306
        places = 3 if change == 0 else max(3, 1 - math.floor(math.log10(abs(change))))
        lines.append(f"{metric.label} {first:.{places}f} → {last:.{places}f} (Δ {change:+.2g})")
    return "\n".join(lines)


def metric_curves(traces: pd.DataFrame, panel: str, row: str | None = None) -> plt.Figure:
    """Each registered metric per update, mean over seeds (paper Figures 2 and 4): a panel per
    ``panel`` value, two a row, or with ``row`` (the encoder) a row of panels per value."""
    panels = list(dict.fromkeys(traces[panel]))
    rows = list(dict.fromkeys(traces[row])) if row else [None]
    cells = [(r, p) for r in rows for p in panels]
    # sized so that a 2-column figure reads at a paper's text width (checks.PAPER_TEXT_WIDTH)
    columns = len(panels) if row else min(len(panels), 2)
    fig, axes = panel_grid(len(cells), columns, panel=(3.7, 2.9), margin=(0, 0.6))
    banded = False
    for ax, (row_value, panel_value) in zip(axes.flat, cells):
        chosen = (traces[panel] == panel_value) & ((traces[row] == row_value) if row else True)
        frame = traces[chosen].dropna(subset=registry.metric_columns())
        seeds = frame["seed"].nunique()
        banded = _panel_curves(ax, frame, seeds) or banded
        label = f"{row_value} / {panel_value}" if row else str(panel_value)
        heading = wrapped(f"{label} ({seeds} seed{'s' if seeds != 1 else ''})", 44)
        if frame.empty:
            ax.text(0.5, 0.5, "no run", ha="center", va="center", transform=ax.transAxes)
        else:
            heading += "\n" + _change(frame)
        ax.set_title(heading, fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlabel("update", fontsize=9)
    # one legend below the panels (the top is the stamp's)
    handles: list[Artist] = [
        Line2D([], [], color=metric.colour, label=_curve_name(metric))
        for metric in registry.trace_metrics()
    ]
    if banded:
        handles.append(Patch(color="0.6", alpha=0.4, label="± 1 std over seeds"))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False)
    return fig


def sign_warning(correlation: pd.Series | None) -> str:
    """Why a panel is marked: our sign against the paper's r, or seeds that disagree; '' if none."""
    if correlation is None:
        return ""
    reasons = []
    paper = correlation.get("paper_pearson_r", np.nan)
    ours = correlation.get("pearson_r_seed_mean", correlation.get("pearson_r", np.nan))
    if np.isfinite(paper) and np.isfinite(ours) and paper * ours < 0:
        reasons.append(f"{SIGN_MARK} (r = {paper:.3f})")
    if str(correlation.get("seed_signs_disagree")).lower() == "true":  # bool, or read from CSV
        reasons.append("seeds disagree in sign")
    return "; ".join(reasons)


def panel_title(
    name: str, correlation: pd.Series | None = None, per_seed: Sequence[float] = ()
) -> str:
    """Figure 3's panel title: the setup; pooled r and ρ when defined, each with its interval over
    seeds; each seed's r (2 or more seeds); why the panel is marked."""
    title = wrapped(name, 44)
    if correlation is not None and np.isfinite(correlation["spearman_rho"]):
        # "r = -0.978 pooled; seeds -0.970 [-0.990, -0.940]", or "r = … (1 seed: no interval)"
        for symbol, column in (("r", "pearson_r"), ("ρ", "spearman_rho")):
            value = correlation[column]
            title += f"\n{symbol} = " + (f"{value:.3f}" if np.isfinite(value) else "undefined")
            low = correlation.get(f"{column}_seed_low", np.nan)
            high = correlation.get(f"{column}_seed_high", np.nan)
            if np.isfinite(low) and np.isfinite(high):
                mean = correlation[f"{column}_seed_mean"]
                title += f" pooled; seeds {mean:.3f} [{low:.3f}, {high:.3f}]"
            elif isinstance(correlation.get("interval"), str):
                title += f" ({correlation['interval']})"
    if len(per_seed) > 1:
        title += "\n" + wrapped("r per seed: " + " ".join(f"{v:+.3f}" for v in per_seed), 48)
    if warning := sign_warning(correlation):
        title += "\n" + wrapped(warning, 48)
    return title


def isotropy_axis(ax: plt.Axes, values: pd.Series, label: str, log: bool) -> None:
    """The isotropy metric on x, log (late updates near 0 show their path) or linear. A log panel
    narrower than a decade gets 3 plain ticks (a log axis labels none inside a decade)."""
    if not log:
        ax.set_xlabel(label, fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        return
    ax.set_xscale("log")
    ax.set_xlabel(f"{label} (log scale)", fontsize=10)
    ax.xaxis.set_minor_formatter(NullFormatter())  # labels on the decades only
    positive = values[values > 0]
    if len(positive) and positive.max() < 10 * positive.min():
        ticks = MaxNLocator(nbins=3).tick_values(positive.min(), positive.max())
        ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if t > 0]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_locator(NullLocator())


def silhouette_vs_isoscore(
    traces: pd.DataFrame, panel: str, correlations: pd.DataFrame | None = None
) -> plt.Figure:
    """The registry's cluster metric against its isotropy metric, a panel per setup, points
    coloured by update (paper Figure 3); one x scale for all (log when every value is positive)."""
    isotropy, clusters = registry.with_role("isotropy"), registry.with_role("clusters")
    panels = list(dict.fromkeys(traces[panel]))
    fig, axes = panel_grid(len(panels), 2, panel=(3.6, 3.3), margin=(0.8, 0.8))
    measured = traces.dropna(subset=registry.metric_columns())
    values = measured[isotropy.name]
    log = bool(len(values)) and bool((values > 0).all())
    for ax, panel_value in zip(axes.flat, panels):
        correlation, per_seed = None, []
        if correlations is not None:
            ours = correlations[correlations[panel] == panel_value]
            pooled = ours[ours["scope"] == "all"]
            correlation = None if pooled.empty else pooled.iloc[0]
            per_seed = ours.loc[ours["scope"].astype(str).str.startswith("seed"), "pearson_r"]
        frame = measured[measured[panel] == panel_value]
        x, y = frame[isotropy.name], frame[clusters.name]
        points = ax.scatter(x, y, c=frame["step"], cmap="viridis", s=6, rasterized=True)
        ax.set_title(panel_title(str(panel_value), correlation, list(per_seed)), fontsize=9)
        isotropy_axis(ax, x, isotropy.label, log)
        ax.set_ylabel(clusters.label, fontsize=10)
        ax.tick_params(labelsize=8)
        ax.locator_params(axis="y", nbins=5)
        ax.grid(alpha=0.3)
        if sign_warning(correlation):  # the mark: a red frame
            for spine in ax.spines.values():
                spine.set(color="firebrick", linewidth=2)
    visible = [ax for ax in axes.flat if ax.get_visible()]
    colourbar = fig.colorbar(points, ax=visible, label="update", shrink=0.8, pad=0.02, aspect=30)
    colourbar.ax.tick_params(labelsize=8)
    if correlations is not None:
        caption(fig, INTERVAL_NOTE.format(x=isotropy.label, y=clusters.label))
    return fig


def r_by_condition(
    table: pd.DataFrame, settings_line: str, vector_labels: dict[str, str]
) -> plt.Figure:
    """One row per cell of results/sensitivity/table.csv: every seed's Pearson r (dots) and the
    interval over seeds (bar); the caption states the settings and the interval's kind."""
    fig, ax = plt.subplots(figsize=(8.0, 1.8 + 0.32 * len(table)), layout="constrained")
    rows = np.arange(len(table))
    colours = ["tab:red" if r > 0 else "tab:blue" for r in table["pearson_r"]]
    seeds = [[float(v) for v in str(values).split()] for values in table["pearson_r_seeds"]]
    counts = [len(values) for values in seeds]
    x, y, c = np.concatenate(seeds), np.repeat(rows, counts), np.repeat(colours, counts)
    ax.scatter(x, y, s=16, c=c, alpha=0.6, zorder=3, label="a seed's r")
    if {"pearson_r_low", "pearson_r_high"} <= set(table):  # NaN bounds draw no bar
        low, high = table["pearson_r_low"], table["pearson_r_high"]
        ax.hlines(rows, low, high, colors=colours, linewidth=2.2, zorder=2, gid=DECORATION)
    label = "tanh(mean Fisher z) and interval"
    ax.scatter(table["pearson_r"], rows, marker="|", s=144, color="black", zorder=4, label=label)
    # a row's label: setup, vectors (as the reader knows them), label set, lr factor
    labels = [
        f"{row['setup']}: {vector_labels.get(row['vectors'], row['vectors'])}, {row['label_set']}"
        + ("" if float(row["lr_factor"]) == 1 else f", lr x{float(row['lr_factor']):g}")
        for _, row in table.iterrows()
    ]
    ax.set_yticks(rows, labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="grey", linewidth=0.8, gid=DECORATION)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Pearson r (IsoScore, silhouette) over the recorded steps of a run", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, frameon=False)
    interval = table["interval"].iloc[0] if "interval" in table else "no interval"
    caption(fig, f"{settings_line}. Dots: seeds; bar: {interval}; tick: tanh(mean Fisher z).")
    return fig


def phases(traces: pd.DataFrame, settings_line: str, vector_labels: dict[str, str]) -> plt.Figure:
    """IsoScore (top) and silhouette (bottom) against updates, one column per cell, one line per
    seed; each seed's IsoScore minimum marked (a dot, and a dotted line on both panels)."""
    cells = list(traces.groupby(["setup", "vectors", "label_set"], sort=False))
    fig, axes = panel_grid(2 * len(cells), len(cells), panel=(3.6, 2.6))
    for column, ((setup, vectors, label_set), frame) in enumerate(cells):
        top, panels = axes[0, column], list(zip(axes[:, column], ("isoscore", "silhouette")))
        for index, (seed, run) in enumerate(frame.groupby("seed")):
            run = run.sort_values("step")
            colour = plt.get_cmap("tab10")(index % 10)
            low = run.loc[run["isoscore"].idxmin()]
            top.plot(low["step"], low["isoscore"], "o", color=colour, ms=4, gid=DECORATION)
            for ax, metric in panels:
                ax.plot(run["step"], run[metric], color=colour, linewidth=1, label=f"seed {seed}")
                ax.axvline(low["step"], color=colour, linestyle=":", linewidth=0.8, gid=DECORATION)
        title = f"{setup}: {vector_labels.get(vectors, vectors)}, {label_set}"
        top.set_title(wrapped(title, 36), fontsize=9)
        for ax, metric in panels:
            ax.set_ylabel("IsoScore" if metric == "isoscore" else metric, fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        axes[1, column].set_xlabel("update", fontsize=9)
    caption(fig, f"{settings_line}. Dots and dotted lines: each seed's IsoScore minimum.")
    return fig


def plot_section2(trace: pd.DataFrame, classes: pd.DataFrame) -> plt.Figure:
    """The main paper's section 2 on real points, Eq. (3) optimised under norm bounds: left the
    isotropy side and the silhouette, right Eq. (1) and the intra-class spread."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    for ax, unit, curves in (
        (left, "score", SECTION2_SCORES),
        (right, "distance", SECTION2_DISTANCES),
    ):
        for column, label, colour in curves:
            ax.plot(trace["step"], trace[column], color=colour, label=label)
        ax.set(xlabel="ascent step on Eq. (3)", ylabel=unit)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ratios = ", ".join(f"{v:.4g}" for v in classes["norm_per_count"])
    figure.suptitle(
        f"‖w_c‖ / n_c per class: {ratios} (footnote 2: equal at the optimum)", fontsize=9
    )
    return figure
