"""The sensitivity study's figures: r by condition, and the two phases of a run."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from isotropy.plots.check import DECORATION


def _caption(fig: plt.Figure, text: str, bottom: float) -> None:
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
    fig.text(0.5, 0.0, "\n".join(textwrap.wrap(text, 120)), ha="center", va="bottom", fontsize=8)


def cell_label(row: pd.Series, vector_labels: dict[str, str]) -> str:
    """A cell's row label: setup, vectors (as the reader knows them), label set, lr factor."""
    vectors = vector_labels.get(row["vectors"], row["vectors"])
    lr = "" if float(row["lr_factor"]) == 1 else f", lr x{float(row['lr_factor']):g}"
    return f"{row['setup']}: {vectors}, {row['label_set']}{lr}"


def r_by_condition(
    table: pd.DataFrame, settings_line: str, vector_labels: dict[str, str] | None = None
) -> plt.Figure:
    """One row per cell: every seed's Pearson r (dots) and the interval over seeds (bar).

    ``table``: results/sensitivity/table.csv (``pearson_r_seeds`` lists the seeds' values). The
    settings and the interval's kind are printed under the panel, so the figure states how it was
    made.
    """
    vector_labels = vector_labels or {}
    height = 1.8 + 0.32 * len(table)
    fig, ax = plt.subplots(figsize=(8.0, height), layout="constrained")
    for y, (_, row) in enumerate(table.iterrows()):
        seeds = [float(v) for v in str(row["pearson_r_seeds"]).split()]
        colour = "tab:red" if row["pearson_r"] > 0 else "tab:blue"
        first = y == 0
        ax.plot(
            seeds, [y] * len(seeds), "o", markersize=4, color=colour, alpha=0.6, zorder=3,
            label="a seed's r" if first else "_nolegend_", gid=None if first else DECORATION,
        )  # fmt: skip
        low, high = row.get("pearson_r_low"), row.get("pearson_r_high")
        if pd.notna(low) and pd.notna(high):
            ax.plot([low, high], [y, y], color=colour, linewidth=2.2, zorder=2, gid=DECORATION)
        ax.plot(
            [row["pearson_r"]], [y], marker="|", markersize=12, color="black", zorder=4,
            label="tanh(mean Fisher z) and interval" if first else "_nolegend_",
            gid=None if first else DECORATION,
        )  # fmt: skip
    ax.set_yticks(range(len(table)))
    ax.set_yticklabels([cell_label(row, vector_labels) for _, row in table.iterrows()], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="grey", linewidth=0.8, gid=DECORATION)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Pearson r (IsoScore, silhouette) over the recorded steps of a run", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, frameon=False)
    interval = table["interval"].iloc[0] if "interval" in table else "no interval"
    _caption(
        fig,
        f"{settings_line}. Dots: seeds; bar: {interval}; tick: tanh(mean Fisher z).",
        0.7 / height,
    )
    return fig


def phases(
    traces: pd.DataFrame, settings_line: str, vector_labels: dict[str, str] | None = None
) -> plt.Figure:
    """IsoScore (top) and silhouette (bottom) against updates, one column per cell.

    ``traces``: the runs' traces with ``setup``, ``vectors``, ``label_set``, ``seed``, ``step``,
    ``isoscore`` and ``silhouette``. One line per seed; each seed's IsoScore minimum is marked
    (a dot on IsoScore, a dotted vertical line on both panels).
    """
    vector_labels = vector_labels or {}
    cells = list(traces.groupby(["setup", "vectors", "label_set"], sort=False))
    fig, axes = plt.subplots(
        2, len(cells), figsize=(3.6 * len(cells), 5.2), squeeze=False, layout="constrained"
    )
    for column, ((setup, vectors, label_set), frame) in enumerate(cells):
        top, bottom = axes[0, column], axes[1, column]
        for index, (seed, run) in enumerate(frame.groupby("seed")):
            run = run.sort_values("step")
            colour = plt.get_cmap("tab10")(index % 10)
            low = int(np.argmin(run["isoscore"].to_numpy()))
            step = run["step"].to_numpy()
            top.plot(step, run["isoscore"], color=colour, linewidth=1, label=f"seed {seed}")
            top.plot(
                step[low], run["isoscore"].iloc[low], "o", color=colour, markersize=4,
                gid=DECORATION,
            )  # fmt: skip
            bottom.plot(step, run["silhouette"], color=colour, linewidth=1, label=f"seed {seed}")
            for ax in (top, bottom):
                ax.axvline(step[low], color=colour, linestyle=":", linewidth=0.8, gid=DECORATION)
        title = f"{setup}: {vector_labels.get(vectors, vectors)}, {label_set}"
        top.set_title(textwrap.fill(title, 36), fontsize=9)
        top.set_ylabel("IsoScore", fontsize=9)
        bottom.set_ylabel("silhouette", fontsize=9)
        bottom.set_xlabel("update", fontsize=9)
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
        top.legend(fontsize=7)
        bottom.legend(fontsize=7)
    _caption(fig, f"{settings_line}. Dots and dotted lines: each seed's IsoScore minimum.", 0.1)
    return fig
