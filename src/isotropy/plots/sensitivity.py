"""The sensitivity figure: Pearson r (with its bootstrap interval) against dimension."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd


def r_against_dimension(
    table: pd.DataFrame, settings_line: str, vector_labels: dict[str, str] | None = None
) -> plt.Figure:
    """One panel per setup, one line per label set, each point labelled with its vectors.

    ``table``: results/sensitivity/table.csv; ``vector_labels``: vector set -> what the vectors
    really are (the GloVe stand-in as such). The settings and the interval's kind are printed
    under the panels, so the figure states how it was made.
    """
    vector_labels = vector_labels or {}
    setups = list(dict.fromkeys(table["setup"]))
    fig, axes = plt.subplots(
        1, len(setups), figsize=(4.6 * len(setups), 3.8), squeeze=False, layout="constrained"
    )
    for ax, setup in zip(axes.flat, setups):
        frame = table[table["setup"] == setup]
        for label_set, group in frame.groupby("label_set", sort=False):
            group = group.sort_values("dimension")
            errors = [
                group["pearson_r"] - group["pearson_r_ci_low"],
                group["pearson_r_ci_high"] - group["pearson_r"],
            ]
            ax.errorbar(
                group["dimension"],
                group["pearson_r"],
                yerr=errors,
                marker="o",
                capsize=3,
                label=f"{label_set} ({int(group['clusters'].iloc[0])} clusters)",
            )
        for _, row in frame.drop_duplicates("vectors").iterrows():
            ax.annotate(
                vector_labels.get(row["vectors"], row["vectors"]),
                (row["dimension"], 0.0),
                textcoords="offset points",
                xytext=(3, 3),
                rotation=90,
                fontsize=7,
                color="dimgrey",
            )
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_ylim(-1.05, 1.05)
        ax.set_title(setup, fontsize=10)
        ax.set_xlabel("dimension", fontsize=10)
        ax.set_ylabel("Pearson r (IsoScore, silhouette)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, title="label set", title_fontsize=8)
    caption = f"{settings_line}. Error bars: {table['ci'].iloc[0]}."
    fig.get_layout_engine().set(rect=(0, 0.12, 1, 0.88))
    fig.text(0.5, 0.0, "\n".join(textwrap.wrap(caption, 130)), ha="center", va="bottom", fontsize=8)
    return fig
