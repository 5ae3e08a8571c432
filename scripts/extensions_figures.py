"""The extension study's figures, one per question, each stating its settings and this script:
curves are the mean over seeds with a band of ± one standard deviation; bars are seed means
with every seed's value as a dot."""

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.traces import read_traces

LABELS = {
    "isoscore": "IsoScore",
    "silhouette": "silhouette",
    "dunn": "Dunn",
    "calinski_harabasz": "Caliński–Harabasz",
    "davies_bouldin": "Davies–Bouldin (lower = better)",
}


def band(
    ax, frame: pd.DataFrame, x: str, column: str, label: str, colour: str, style: str = "-"
) -> None:
    stats = frame.groupby(x)[column].agg(["mean", "std"]).fillna(0.0)
    mean, std = stats["mean"], stats["std"]
    ax.plot(stats.index, mean, style, color=colour, label=label)
    ax.fill_between(stats.index, mean - std, mean + std, color=colour, alpha=0.2)


def criteria_figure(traces: pd.DataFrame):
    linear = traces[traces["head"] == "linear"]
    names = [n for n in LABELS if n != "isoscore" and n in linear]
    setups = list(dict.fromkeys(linear["setup"]))
    size = (3.2 * len(names), 2.6 * len(setups))
    fig, axes = plt.subplots(len(setups), len(names), figsize=size, squeeze=False)
    for row, setup in enumerate(setups):
        ours = linear[linear["setup"] == setup]
        for col, name in enumerate(names):
            ax = axes[row][col]
            band(ax, ours, "step", name, LABELS[name], "tab:red")
            band(ax.twinx(), ours, "step", "isoscore", "IsoScore", "tab:blue", "--")
            ax.set_title(f"{setup}: {LABELS[name]}", fontsize=9)
            ax.set_xlabel("update")
    return fig


def deep_figure(seeds: pd.DataFrame):
    changes = seeds[(seeds["question"] == "deep") & (seeds["quantity"] == "isoscore_change")]
    deep = changes[~changes["item"].str.endswith("/summary")]
    setups = list(dict.fromkeys(deep["setup"]))
    fig, axes = plt.subplots(1, len(setups), figsize=(6 * len(setups), 3.4), squeeze=False)
    for ax, setup in zip(axes[0], setups):
        ours = deep[deep["setup"] == setup]
        items = list(dict.fromkeys(ours["item"]))
        means = ours.groupby("item", sort=False)["value"].mean().reindex(items)
        ax.bar(range(len(items)), means, color="tab:blue", alpha=0.6)
        for i, item in enumerate(items):
            values = ours[ours["item"] == item]["value"]
            ax.plot([i] * len(values), values, "k.", markersize=4)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(items)), items, rotation=60, fontsize=7)
        ax.set_ylabel("IsoScore change (last − step 0)")
        ax.set_title(f"{setup}: per head / layer (table = embeddings)", fontsize=9)
    return fig


def triplet_figure(traces: pd.DataFrame):
    triplet = traces[traces["head"] == "triplet"]
    setups = list(dict.fromkeys(triplet["setup"]))
    panels = max(1, len(setups))
    fig, axes = plt.subplots(1, panels, figsize=(4.5 * panels, 3.2), squeeze=False)
    for ax, setup in zip(axes[0], setups):
        ours = triplet[triplet["setup"] == setup]
        band(ax, ours, "step", "isoscore", "IsoScore", "tab:blue")
        band(ax, ours, "step", "silhouette", "silhouette", "tab:red")
        ax.set_title(f"{setup}: triplet objective", fontsize=9)
        ax.set_xlabel("update")
        ax.legend(fontsize=7)
    return fig


def heldout_figure(epochs: pd.DataFrame):
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    for ax, quantity in zip(axes, ("isoscore", "silhouette", "accuracy")):
        for part, colour in (("heldout", "tab:red"), ("train", "tab:blue")):
            if not epochs.empty:
                band(ax, epochs, "epoch", f"{part}_{quantity}", part, colour)
        ax.set_title(quantity, fontsize=9)
        ax.set_xlabel("epoch (0 = pretrained)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    return fig


def save(fig, pdf: str, png: str, settings_line: str) -> None:
    caption = (
        f"Settings: {settings_line}. Curves: mean ± std over seeds."
        " Made by scripts/extensions_figures.py."
    )
    fig.text(0.01, 0.0, textwrap.fill(caption, 180), fontsize=6, va="top")
    fig.tight_layout()
    for path in (pdf, png):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, bbox_inches="tight", dpi=150)
    plt.close(fig)


def main(snakemake):
    configure_from_snakemake(snakemake)
    runs = snakemake.params.runs
    keys = [{"setup": r["dataset"], "head": r["head"]} for r in runs]
    traces = read_traces(list(snakemake.input.traces), keys)
    seeds = pd.read_csv(snakemake.input.seeds)
    epochs = pd.DataFrame()
    if snakemake.input.epochs:
        epochs = pd.concat(map(pd.read_csv, snakemake.input.epochs))
    figures = [
        criteria_figure(traces),
        deep_figure(seeds),
        triplet_figure(traces),
        heldout_figure(epochs),
    ]
    for fig, pdf, png in zip(figures, snakemake.output.pdf, snakemake.output.png):
        save(fig, pdf, png, snakemake.params.settings_line)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
