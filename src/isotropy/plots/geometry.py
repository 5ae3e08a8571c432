"""Figures of the geometry study (Cai et al. 2021; Rajaee & Pilehvar 2021), from stored tables only."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

_STATISTICS = (("s_inter", "$S_{inter}$"), ("s_intra", "$S_{intra}$"))


def _check_columns(table: pd.DataFrame, needed: set[str], what: str) -> None:
    missing = needed - set(table.columns)
    if missing:
        raise ValueError(
            f"{what} table lacks columns {sorted(missing)}; found {list(table.columns)}"
        )
    if table.empty:
        raise ValueError(f"{what} table is empty; nothing to plot")


def name_static_rows(table: pd.DataFrame, label: str) -> pd.DataFrame:
    """Static rows name the vectors really used: "GloVe 50-d (stand-in for word2vec)"."""
    if label and "kind" in table:
        static = table["kind"] == "static"
        table.loc[static, "model"] = label + " (stand-in for " + table.loc[static, "model"] + ")"
    return table


def plot_cosine_by_layer(table: pd.DataFrame) -> plt.Figure:
    """S_inter and S_intra per layer and model: solid raw, dashed after cluster centring.

    Static word vectors (one vector per word) appear as a horizontal line in the S_inter panel.
    """
    _check_columns(
        table,
        {"model", "kind", "layer", "s_inter", "s_intra", "s_inter_adjusted", "s_intra_adjusted"},
        "cosine",
    )
    contextual = table[table["kind"] == "contextual"]
    static = table[table["kind"] == "static"]
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    colours = dict(zip(contextual["model"].unique(), plt.cm.tab10.colors))
    for ax, (column, label) in zip(axes, _STATISTICS):
        for model, rows in contextual.groupby("model", sort=False):
            rows = rows.groupby("layer")[[column, f"{column}_adjusted"]].mean()  # mean over seeds
            ax.plot(rows.index, rows[column], marker="o", color=colours[model], label=f"{model}")
            ax.plot(
                rows.index,
                rows[f"{column}_adjusted"],
                marker="o",
                linestyle="--",
                color=colours[model],
                label=f"{model}, per-cluster centred",
            )
        if column == "s_inter":
            for model, rows in static.groupby("model", sort=False):
                ax.axhline(
                    rows["s_inter"].mean(), color="grey", linestyle=":", label=f"{model} (static)"
                )
        ax.set_xlabel("layer")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean cosine similarity")
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    figure.tight_layout()
    return figure


def plot_lid_by_layer(table: pd.DataFrame) -> plt.Figure:
    """Mean local intrinsic dimension per layer, one panel per distance; static vectors dotted.

    Drawn on Cai et al.'s scale (``lid_cai_scale``: squared Euclidean distances, half the MLE
    on distances), the scale of their Figure 9 (Euclidean) and Table 3 (cosine).
    """
    _check_columns(table, {"model", "kind", "layer", "metric", "k", "lid_cai_scale"}, "LID")
    metrics = list(table["metric"].unique())
    figure, axes = plt.subplots(
        1,
        len(metrics),
        figsize=(4.5 * len(metrics) + 2.5, 3.6),
        squeeze=False,
        layout="constrained",
    )
    contextual = table[table["kind"] == "contextual"]
    colours = dict(zip(contextual["model"].unique(), plt.cm.tab10.colors))
    for ax, metric in zip(axes[0], metrics):
        for model, rows in contextual[contextual["metric"] == metric].groupby("model", sort=False):
            rows = rows.groupby("layer")["lid_cai_scale"].mean()
            ax.plot(rows.index, rows.values, marker="o", color=colours[model], label=model)
        for model, rows in table[(table["kind"] == "static") & (table["metric"] == metric)].groupby(
            "model", sort=False
        ):
            ax.axhline(
                rows["lid_cai_scale"].mean(), color="grey", linestyle=":", label=f"{model} (static)"
            )
        k = ", ".join(str(v) for v in sorted(table.loc[table["metric"] == metric, "k"].unique()))
        ax.set_title(
            f"{metric} distance{', squared (Cai et al.)' if metric == 'euclidean' else ''} (k = {k})"
        )
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("layer")
        ax.set_ylabel("mean LID, Cai et al.'s scale" if metric == "euclidean" else "mean LID")
        ax.grid(alpha=0.3)
    # one legend for every panel, beside them (a legend inside a panel would cover its lines)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right upper", frameon=False)
    return figure


TOKEN_KINDS = {
    "word": "tab:blue",
    "sub-word piece": "tab:green",
    "symbol": "tab:red",
    "special": "black",
}


def token_kind(token: str) -> str:
    """Cai et al.'s token views: ``special`` ([CLS], <s>, ...), ``symbol`` (no letter or digit),
    ``sub-word piece`` (WordPiece ``##`` continuation), else ``word``."""
    text = str(token)
    if (text.startswith("[") and text.endswith("]")) or (
        text.startswith("<") and text.endswith(">")
    ):
        return "special"
    if not any(ch.isalnum() for ch in text):
        return "symbol"
    return "sub-word piece" if text.startswith("##") else "word"


def plot_isotropy_by_layer(table: pd.DataFrame) -> plt.Figure:
    """I(W) per layer and model on a log scale (the slides' "Pre-trained BERT Isotropy"): solid
    with numpy's eigenvector signs (Rajaee & Pilehvar's number), dashed after centring."""
    _check_columns(table, {"model", "layer", "isotropy", "isotropy_centred"}, "I(W) by layer")
    figure, ax = plt.subplots(figsize=(6.5, 3.6), layout="constrained")
    colours = dict(zip(table["model"].unique(), plt.cm.tab10.colors))
    for model, rows in table.groupby("model", sort=False):
        rows = rows.groupby("layer")[["isotropy", "isotropy_centred"]].mean()
        # I(W) can underflow to 0 in float64: the log axis shows the smallest positive double
        floor = np.finfo(float).tiny
        ax.plot(rows.index, rows["isotropy"].clip(lower=floor), marker="o", color=colours[model],
                label=f"{model}")  # fmt: skip
        ax.plot(rows.index, rows["isotropy_centred"].clip(lower=floor), marker="o",
                linestyle="--", color=colours[model], label=f"{model}, centred")  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("I(W) (1 = isotropic)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    figure.legend(loc="outside right upper", frameon=False)
    return figure


def plot_pca_view(table: pd.DataFrame, title: str) -> plt.Figure:
    """One layer's token embeddings on their first principal components, coloured by k-means
    cluster; with a ``token`` column, a third panel colours PC1/PC2 by token kind (:func:`token_kind`)."""
    _check_columns(table, {"pc1", "pc2", "pc3", "cluster", "layer"}, "PCA view")
    kinds = "token" in table
    figure = plt.figure(figsize=(15 if kinds else 10, 4.5))
    flat = figure.add_subplot(1, 3 if kinds else 2, 1)
    cube = figure.add_subplot(1, 3 if kinds else 2, 2, projection="3d")
    if kinds:
        by_kind = figure.add_subplot(1, 3, 3)
        kind = table["token"].map(token_kind)
        for name, colour in TOKEN_KINDS.items():
            part = table[kind == name]
            if len(part):
                by_kind.scatter(part["pc1"], part["pc2"], s=3, alpha=0.6, linewidths=0, color=colour,
                                label=f"{name} ({len(part)})")  # fmt: skip
        by_kind.set_title("by token kind", fontsize=9)
        by_kind.set_xlabel("PC1")
        by_kind.set_ylabel("PC2")
        by_kind.legend(fontsize=7, markerscale=3, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    n_clusters = table["cluster"].nunique()
    palette = plt.cm.tab10 if n_clusters <= 10 else plt.cm.tab20  # tab20 pairs look alike when few
    colours = palette(table["cluster"].to_numpy() % palette.N)
    ratios = [
        table[f"variance_ratio_pc{i}"].iloc[0] if f"variance_ratio_pc{i}" in table else np.nan
        for i in (1, 2, 3)
    ]
    names = [
        f"PC{i} ({ratio:.1%})" if np.isfinite(ratio) else f"PC{i}"
        for i, ratio in zip((1, 2, 3), ratios)
    ]
    flat.scatter(table["pc1"], table["pc2"], c=colours, s=3, alpha=0.6, linewidths=0)
    flat.set_xlabel(names[0])
    flat.set_ylabel(names[1])
    cube.scatter(table["pc1"], table["pc2"], table["pc3"], c=colours, s=2, alpha=0.5, linewidths=0)
    cube.set_xlabel(names[0])
    cube.set_ylabel(names[1])
    cube.set_zlabel(names[2])
    figure.suptitle(
        f"{title}: layer {int(table['layer'].iloc[0])}, {len(table)} tokens, {n_clusters} k-means cluster(s)"
    )
    figure.tight_layout()
    return figure


def plot_sts(table: pd.DataFrame) -> plt.Figure:
    """STS correlation (Spearman x100, Pearson as dots) and I(W) per enhancement method."""
    _check_columns(table, {"model", "dataset", "method", "pearson", "spearman", "isotropy"}, "STS")
    summary = (
        table.groupby(["model", "dataset", "method"], sort=False)[
            ["pearson", "spearman", "isotropy"]
        ]
        .mean()
        .reset_index()
    )
    methods = list(dict.fromkeys(summary["method"]))
    groups = list(dict.fromkeys(zip(summary["model"], summary["dataset"])))
    width = 0.8 / len(groups)
    x = np.arange(len(methods))
    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(6, 1.3 * len(methods)) + 2.5, 6), sharex=True, layout="constrained"
    )
    for i, (model, dataset) in enumerate(groups):
        rows = (
            summary[(summary["model"] == model) & (summary["dataset"] == dataset)]
            .set_index("method")
            .reindex(methods)
        )
        offset = x - 0.4 + width * (i + 0.5)
        split = (
            table.loc[(table["model"] == model) & (table["dataset"] == dataset), "split"].iloc[0]
            if "split" in table
            else None
        )
        name = f"{model} / {dataset}" + (f" ({split} split)" if split else "")
        top.bar(offset, rows["spearman"], width, label=name, color=plt.cm.tab10(i))
        top.scatter(
            offset,
            rows["pearson"],
            color="black",
            s=12,
            zorder=3,
            label="Pearson x 100",
        )
        # markers, not bars: a bar's length on a log axis depends on an arbitrary baseline
        bottom.scatter(offset, rows["isotropy"], color=plt.cm.tab10(i), s=30, zorder=3, label=name)
    top.set_ylabel("Spearman x 100")
    # one legend for both panels, beside them: inside a panel it would cover a bar
    named = dict(zip(*reversed(top.get_legend_handles_labels())))  # each name once
    figure.legend(
        named.values(), named.keys(), loc="outside right upper", frameon=False, fontsize="small"
    )
    top.grid(axis="y", alpha=0.3)
    bottom.set_yscale("log")
    bottom.set_ylabel("I(W), log scale\n(eigenvector signs as Rajaee & Pilehvar)", fontsize=9)
    bottom.grid(axis="y", alpha=0.3)
    bottom.set_xticks(x, methods, rotation=20, ha="right")
    return figure
