"""The extension study's figures, one per question (:mod:`isotropy.extensions`), from its traces,
per-seed values and fine-tuning epochs only: curves are means over seeds ± one standard deviation,
bars seed means with each seed's value as a dot."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from isotropy.metrics import registry
from isotropy.plots.checks import DECORATION, band, caption, panel_grid, plt, save_figure

SCRIPT = "scripts/extensions_figures.py"


def cluster_label(name: str) -> str:
    """A cluster metric's label as the metric registry gives it, saying when lower is better."""
    metrics = (*registry.trace_metrics(), *registry.OPTIONAL_METRICS)
    label = next(metric.label for metric in metrics if metric.name == name)
    return label if registry.orientation(name) > 0 else f"{label} (lower = better)"


def criteria_figure(traces: pd.DataFrame) -> Figure:
    """Per setup (rows) and cluster metric (columns: the silhouette, then the registry's
    criteria) of the linear runs: the metric and IsoScore (dashed, right axis) per update."""
    linear = traces[traces["head"] == "linear"]
    names = [n for n in ("silhouette", *registry.cluster_criteria()) if n in linear]
    setups = list(dict.fromkeys(linear["setup"]))
    fig, axes = panel_grid(len(setups) * len(names), len(names), (3.2, 2.6), (0, 0.6))
    legend = {}  # one legend above the panels: a panel's own would cover its twin's curve
    isoscore = "IsoScore (dashed, right axis)"
    for row, setup in enumerate(setups):
        ours = linear[linear["setup"] == setup]
        for ax, name in zip(axes[row], names):
            legend[name] = band(ax, ours, "step", name, cluster_label(name), "tab:red")
            twin = ax.twinx()
            legend["isoscore"] = band(twin, ours, "step", "isoscore", isoscore, "tab:blue", "--")
            ax.set_title(f"{setup}: {cluster_label(name)}", fontsize=9)
            ax.set_xlabel("update")
    if legend:
        fig.legend(handles=list(legend.values()), loc="outside upper center", ncols=len(legend))
    return fig


def deep_figure(seeds: pd.DataFrame) -> Figure:
    """Per setup: the IsoScore change of each head's layers (the embedding table, hidden layers)."""
    changes = seeds[(seeds["question"] == "deep") & (seeds["quantity"] == "isoscore_change")]
    deep = changes[~changes["item"].str.endswith("/summary")]
    setups = list(dict.fromkeys(deep["setup"]))
    fig, axes = panel_grid(len(setups), len(setups), (6, 3.4))
    for ax, setup in zip(axes[0], setups):
        ours = deep[deep["setup"] == setup]
        items = list(dict.fromkeys(ours["item"]))
        means = ours.groupby("item", sort=False)["value"].mean().reindex(items)
        ax.bar(range(len(items)), means, color="tab:blue", alpha=0.6, label="mean over seeds")
        position = ours["item"].map({item: i for i, item in enumerate(items)})
        ax.plot(position, ours["value"], "k.", markersize=4, label="each seed")
        ax.axhline(0, color="grey", lw=0.8, gid=DECORATION)
        ax.set_xticks(range(len(items)), items, rotation=60, fontsize=7)
        ax.set_ylabel("IsoScore change (last − step 0)")
        ax.set_title(f"{setup}: per head / layer (table = embeddings)", fontsize=9)
        ax.legend(fontsize=7)
    return fig


def triplet_figure(traces: pd.DataFrame) -> Figure:
    """Per setup: IsoScore and silhouette per update of the triplet runs."""
    triplet = traces[traces["head"] == "triplet"]
    setups = list(dict.fromkeys(triplet["setup"]))
    panels = max(1, len(setups))
    fig, axes = panel_grid(panels, panels, (4.5, 3.2))
    for ax, setup in zip(axes[0], setups):
        ours = triplet[triplet["setup"] == setup]
        band(ax, ours, "step", "isoscore", "IsoScore", "tab:blue")
        band(ax, ours, "step", "silhouette", "silhouette", "tab:red")
        ax.set_title(f"{setup}: triplet objective", fontsize=9)
        ax.set_xlabel("update")
        ax.legend(fontsize=7)
    return fig


def heldout_figure(epochs: pd.DataFrame) -> Figure:
    """IsoScore, silhouette and accuracy per epoch of the held-out and training sentences."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2), layout="constrained")
    for ax, quantity in zip(axes, ("isoscore", "silhouette", "accuracy")):
        for part, colour in (("heldout", "tab:red"), ("train", "tab:blue")):
            if not epochs.empty:
                band(ax, epochs, "epoch", f"{part}_{quantity}", part, colour)
        ax.set_title(quantity, fontsize=9)
        ax.set_xlabel("epoch (0 = pretrained)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if not epochs.empty:
            ax.legend(fontsize=7)
    return fig


def question_figures(
    traces: pd.DataFrame, seeds: pd.DataFrame, epochs: pd.DataFrame
) -> dict[str, Callable[[], Figure]]:
    """Each question's figure, keyed by the question (drawn when called)."""
    return {
        "criteria": lambda: criteria_figure(traces),
        "deep": lambda: deep_figure(seeds),
        "triplet": lambda: triplet_figure(traces),
        "heldout": lambda: heldout_figure(epochs),
    }


def save_question_figure(fig: Figure, pdf: str, png: str, settings_line: str) -> None:
    """Caption ``fig`` with the settings and this script, then check and save it."""
    caption(fig, f"Settings: {settings_line}. Curves: mean ± std over seeds. Made by {SCRIPT}.")
    save_figure(fig, pdf, png, dpi=150)
