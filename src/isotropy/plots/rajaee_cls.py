"""The per-layer CLS isotropy after fine-tuning with and without the cluster-based method (the
Rajaei & Sheikhi 2020 slides' figure), from results/rajaee_cls/layers.csv only."""

from __future__ import annotations

import pandas as pd

from isotropy.plots.checks import plt, seed_means

METHOD_LABELS = {"none": "without the method", "cluster": "with the method (cluster-based on CLS)"}
PANELS = (("iw", "I(W) (log scale)"), ("isoscore", "IsoScore"))


def plot_cls_layers(layers: pd.DataFrame, title: str) -> tuple[plt.Figure, pd.DataFrame]:
    """Two panels (I(W), IsoScore) against the layer, one line per model/task × method, mean ±
    std over seeds; ``title`` states the settings; returns the figure and the plotted summary."""
    keys = ["model", "task", "method", "layer"]
    summary = seed_means(layers, keys, ["iw", "isoscore"]).fillna(0.0)
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    for axis, (column, label) in zip(axes, PANELS, strict=True):
        for (model, task, method), group in summary.groupby(["model", "task", "method"]):
            mean, std = group[f"{column}_mean"], group[f"{column}_std"]
            name = f"{model}/{task}, {METHOD_LABELS.get(method, method)}"
            axis.errorbar(group["layer"], mean, yerr=std, marker="o", capsize=3, label=name)
        axis.set_yscale("log" if column == "iw" else "linear")
        axis.set(xlabel="layer (validation CLS states, before the method)", ylabel=label)
        axis.set_xticks(summary["layer"].unique())
    # one legend under both panels: each panel draws the same curves
    figure.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", fontsize=7)
    figure.suptitle(title, fontsize=9)
    return figure, summary
