"""Figures of the direct-optimisation studies (paper Figures 2, 3 and 4), from stored traces."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, NullFormatter

from isotropy.metrics import registry


def _with_interval(row: pd.Series, column: str) -> str:
    """``-0.98 [-0.99, -0.97]``: a correlation and its bootstrap interval, when the table has one."""
    low, high = row.get(f"{column}_ci_low", np.nan), row.get(f"{column}_ci_high", np.nan)
    interval = f" [{low:.2f}, {high:.2f}]" if np.isfinite(low) and np.isfinite(high) else ""
    return f"{row[column]:.2f}{interval}"


def _mean_std(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.groupby("step")[column].agg(["mean", "std"]).reset_index().fillna({"std": 0.0})


def setup_label(dataset: str, encoder: str, encoder_labels: dict[str, str]) -> str:
    """A panel's setup in plain words: "polarity, miniLM", "pos, GloVe 50-d (stand-in for word2vec 300-d)"."""
    return f"{dataset}, {encoder_labels.get(encoder, encoder)}"


def _wrapped(text: str, width: int = 34) -> str:
    """Long panel titles on two lines, so neighbouring titles never meet."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) or text


def _curve_name(metric: registry.TraceMetric) -> str:
    return f"{metric.label} ({metric.axis} axis)"


def _panel_curves(ax: plt.Axes, frame: pd.DataFrame, seeds: int) -> bool:
    """Every registered metric's mean over seeds on its axis of one panel (the right one a twin),
    with a band of ± one standard deviation where there are 2 or more seeds; True if banded."""
    axes = {"left": ax, "right": ax.twinx()}
    banded = False
    for side, axis in axes.items():
        drawn = [metric for metric in registry.trace_metrics() if metric.axis == side]
        if not drawn:
            continue
        colour = drawn[0].colour if len(drawn) == 1 else "black"
        axis.set_ylabel(" / ".join(metric.label for metric in drawn), color=colour, fontsize=9)
        axis.tick_params(axis="y", labelcolor=colour, labelsize=8)
        if frame.empty:
            continue
        for metric in drawn:
            stats = _mean_std(frame, metric.name)
            axis.plot(stats["step"], stats["mean"], color=metric.colour, label=_curve_name(metric))
            if seeds >= 2:  # one seed has no spread: no band
                banded = True
                axis.fill_between(
                    stats["step"],
                    stats["mean"] - stats["std"],
                    stats["mean"] + stats["std"],
                    color=metric.colour,
                    alpha=0.25,
                    linewidth=0,
                )
    return banded


def _metric_legend(fig: plt.Figure, banded: bool) -> None:
    """One legend above the panels: every metric's curve, and the band where one is drawn."""
    handles = [
        Line2D([], [], color=metric.colour, label=_curve_name(metric))
        for metric in registry.trace_metrics()
    ]
    if banded:
        handles.append(Patch(color="0.6", alpha=0.4, label="± 1 std over seeds"))
    fig.legend(handles=handles, loc="outside upper center", ncol=len(handles), frameon=False)


def metric_curves(
    traces: pd.DataFrame, panel: str, title: str | None = None, row: str | None = None
) -> plt.Figure:
    """The per-update metrics against the update step, the mean over seeds (paper Figures 2 and 4).

    One column per value of ``panel`` (a setup or task); with ``row`` (e.g. the encoder) one
    row of panels per value. Each metric of :mod:`isotropy.metrics.registry` is drawn on its axis
    (IsoScore left, silhouette right), named on every panel and in the legend above the panels;
    a band of ± one standard deviation over seeds is drawn (and named) only where a panel has 2 or
    more seeds.
    """
    panels = list(dict.fromkeys(traces[panel]))
    rows = list(dict.fromkeys(traces[row])) if row else [None]
    fig, axes = plt.subplots(
        len(rows),
        len(panels),
        figsize=(3.6 * len(panels), 2.8 * len(rows) + 0.5),
        squeeze=False,
        sharex=True,
        layout="constrained",
    )
    banded = False
    for i, row_value in enumerate(rows):
        for j, panel_value in enumerate(panels):
            ax = axes[i][j]
            frame = traces[
                (traces[panel] == panel_value) & ((traces[row] == row_value) if row else True)
            ]
            frame = frame.dropna(subset=registry.metric_columns())
            seeds = frame["seed"].nunique() if not frame.empty else 0
            banded = _panel_curves(ax, frame, seeds) or banded
            if frame.empty:
                ax.text(0.5, 0.5, "no run", ha="center", va="center", transform=ax.transAxes)
            label = f"{row_value} / {panel_value}" if row else str(panel_value)
            ax.set_title(_wrapped(f"{label} ({seeds} seed{'s' if seeds != 1 else ''})"), fontsize=9)
            ax.tick_params(axis="x", labelsize=8)
            if i == len(rows) - 1:
                ax.set_xlabel("update")
    _metric_legend(fig, banded)
    if title:
        fig.suptitle(title)
    return fig


def panel_title(name: str, correlation: pd.Series | None = None) -> str:
    """Figure 3's panel title: the setup, then Pearson's r and Spearman's rho over all steps and
    seeds when defined, each with its bootstrap interval where the table has one (one place for
    everything a title states)."""
    title = _wrapped(name)
    if correlation is not None and np.isfinite(correlation["spearman_rho"]):
        title += "".join(
            f"\n{symbol} = {_with_interval(correlation, column)}"
            for symbol, column in (("r", "pearson_r"), ("ρ", "spearman_rho"))
        )
    return title


def isotropy_axis(ax: plt.Axes, values: pd.Series, label: str = "IsoScore") -> str:
    """The isotropy metric (IsoScore) on a log axis where a panel's values span more than a factor
    10: late updates pile up near 0, where a linear axis hides their path. A narrower span stays
    linear (a log axis over less than a decade reads no better). Returns the scale chosen."""
    positive = values[values > 0]
    if len(values) and len(positive) == len(values) and positive.max() > 10 * positive.min():
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # labels on the decades only
        ax.set_xlabel(f"{label} (log scale)", fontsize=10)
        return "log"
    ax.set_xlabel(label, fontsize=10)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    return "linear"


def silhouette_vs_isoscore(
    traces: pd.DataFrame, panel: str, correlations: pd.DataFrame | None = None
) -> plt.Figure:
    """Silhouette against IsoScore, one panel per setup, points coloured by update (paper Figure 3).

    The two metrics are the registry's correlated pair (:func:`registry.with_role`): the isotropy
    metric on x, on a log axis where a panel spans more than a decade (:func:`isotropy_axis`), the
    cluster metric on y. Constrained layout keeps each panel's axis labels clear of its neighbour
    and the colour bar beside the panels; at most four panels per row.
    """
    isotropy, clusters = registry.with_role("isotropy"), registry.with_role("clusters")
    panels = list(dict.fromkeys(traces[panel]))
    columns = min(len(panels), 4)
    lines = -(-len(panels) // columns)
    fig, axes = plt.subplots(
        lines,
        columns,
        figsize=(3.6 * columns + 0.8, 3.4 * lines),
        squeeze=False,
        layout="constrained",
    )
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, panel_value in zip(axes.flat, panels):
        frame = traces[traces[panel] == panel_value].dropna(subset=registry.metric_columns())
        points = ax.scatter(
            frame[isotropy.name],
            frame[clusters.name],
            c=frame["step"],
            cmap="viridis",
            s=6,
            rasterized=True,
        )
        correlation = None
        if correlations is not None:
            row = correlations[
                (correlations[panel] == panel_value) & (correlations["scope"] == "all")
            ]
            correlation = None if row.empty else row.iloc[0]
        ax.set_title(panel_title(str(panel_value), correlation), fontsize=10)
        isotropy_axis(ax, frame[isotropy.name], isotropy.label)
        ax.set_ylabel(clusters.label, fontsize=10)
        ax.tick_params(labelsize=9)
        ax.locator_params(axis="y", nbins=5)
        ax.grid(alpha=0.3)
    visible = [ax for ax in axes.flat if ax.get_visible()]
    colourbar = fig.colorbar(points, ax=visible, label="update", shrink=0.8, pad=0.02, aspect=30)
    colourbar.ax.tick_params(labelsize=9)
    return fig
