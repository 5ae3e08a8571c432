"""Figures of the direct-optimisation studies (paper Figures 2, 3 and 4), from stored traces."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

METRICS = {"isoscore": "IsoScore", "silhouette": "Silhouette"}


def _with_interval(row: pd.Series, column: str) -> str:
    """``-0.98 [-0.99, -0.97]``: a correlation and its bootstrap interval, when the table has one."""
    low, high = row.get(f"{column}_ci_low", np.nan), row.get(f"{column}_ci_high", np.nan)
    interval = f" [{low:.2f}, {high:.2f}]" if np.isfinite(low) and np.isfinite(high) else ""
    return f"{row[column]:.2f}{interval}"


def _mean_std(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.groupby("step")[column].agg(["mean", "std"]).reset_index().fillna({"std": 0.0})


def metric_curves(
    traces: pd.DataFrame, panel: str, title: str | None = None, row: str | None = None
) -> plt.Figure:
    """IsoScore and silhouette against the update step, mean ± std over seeds.

    One column per value of ``panel`` (a setup or task); with ``row`` (e.g. the encoder) one
    row of panels per value. IsoScore is drawn on the left axis, silhouette on the right.
    """
    panels = list(dict.fromkeys(traces[panel]))
    rows = list(dict.fromkeys(traces[row])) if row else [None]
    fig, axes = plt.subplots(
        len(rows),
        len(panels),
        figsize=(3.2 * len(panels), 2.6 * len(rows)),
        squeeze=False,
        sharex=True,
    )
    colours = {"isoscore": "tab:blue", "silhouette": "tab:red"}
    for i, row_value in enumerate(rows):
        for j, panel_value in enumerate(panels):
            ax = axes[i][j]
            frame = traces[
                (traces[panel] == panel_value) & ((traces[row] == row_value) if row else True)
            ]
            frame = frame.dropna(subset=list(METRICS))
            twin = ax.twinx()
            for axis, metric in ((ax, "isoscore"), (twin, "silhouette")):
                if frame.empty:
                    continue
                stats = _mean_std(frame, metric)
                axis.plot(
                    stats["step"], stats["mean"], color=colours[metric], label=METRICS[metric]
                )
                axis.fill_between(
                    stats["step"],
                    stats["mean"] - stats["std"],
                    stats["mean"] + stats["std"],
                    color=colours[metric],
                    alpha=0.25,
                )
                axis.tick_params(axis="y", labelcolor=colours[metric], labelsize=8)
            if frame.empty:
                ax.text(0.5, 0.5, "no run", ha="center", va="center", transform=ax.transAxes)
            label = f"{row_value} / {panel_value}" if row else str(panel_value)
            seeds = frame["seed"].nunique() if not frame.empty else 0
            ax.set_title(f"{label} ({seeds} seed{'s' if seeds != 1 else ''})", fontsize=9)
            if i == len(rows) - 1:
                ax.set_xlabel("update")
            if j == 0:
                ax.set_ylabel("IsoScore", color=colours["isoscore"])
            if j == len(panels) - 1:
                twin.set_ylabel("Silhouette", color=colours["silhouette"])
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def silhouette_vs_isoscore(
    traces: pd.DataFrame, panel: str, correlations: pd.DataFrame | None = None
) -> plt.Figure:
    """Silhouette against IsoScore, one panel per setup, points coloured by update (paper Figure 3).

    Constrained layout keeps each panel's axis labels clear of its neighbour; at most four
    panels per row.
    """
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
        frame = traces[traces[panel] == panel_value].dropna(subset=list(METRICS))
        points = ax.scatter(
            frame["isoscore"],
            frame["silhouette"],
            c=frame["step"],
            cmap="viridis",
            s=6,
            rasterized=True,
        )
        title = str(panel_value)
        if correlations is not None:
            row = correlations[
                (correlations[panel] == panel_value) & (correlations["scope"] == "all")
            ]
            if not row.empty and np.isfinite(row["spearman_rho"].iloc[0]):
                title += "\n" + ", ".join(
                    f"{symbol} = {_with_interval(row.iloc[0], column)}"
                    for symbol, column in (("r", "pearson_r"), ("ρ", "spearman_rho"))
                )
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("IsoScore", fontsize=10)
        ax.set_ylabel("Silhouette", fontsize=10)
        ax.tick_params(labelsize=9)
        ax.locator_params(nbins=5)
        ax.grid(alpha=0.3)
    colourbar = fig.colorbar(points, ax=axes.ravel().tolist(), label="update", shrink=0.8)
    colourbar.ax.tick_params(labelsize=9)
    return fig
