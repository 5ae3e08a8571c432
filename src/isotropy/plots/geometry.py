"""Figures of the geometry study (Cai et al. 2021; Rajaee & Pilehvar 2021), from stored tables
only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from isotropy.plots.checks import panel_grid

_STATISTICS = (("s_inter", "$S_{inter}$"), ("s_intra", "$S_{intra}$"))
TOKEN_KINDS = {
    "word": "tab:blue",
    "sub-word piece": "tab:green",
    "symbol": "tab:red",
    "special": "black",
}
# Corpus frequency bands of the token views: decades of the count (1, 2-9, 10-99, ...).
FREQUENCY_BAND_EDGES = (1, 2, 10, 100, 1_000, 10_000)


def _model_colours(models: Iterable[str]) -> dict[str, tuple[float, ...]]:
    """One tab10 colour per model, in order (wrapping after ten)."""
    return {model: plt.cm.tab10(i % 10) for i, model in enumerate(dict.fromkeys(models))}


def name_static_rows(table: pd.DataFrame, label: str) -> pd.DataFrame:
    """Static rows name the vectors really used: "GloVe 50-d (stand-in for word2vec)"."""
    if label and "kind" in table:
        static = table["kind"] == "static"
        table.loc[static, "model"] = label + " (stand-in for " + table.loc[static, "model"] + ")"
    return table


def _by_layer(
    ax: plt.Axes,
    contextual: pd.DataFrame,
    static: pd.DataFrame,
    colours: dict[str, tuple[float, ...]],
    curves: tuple[tuple[str, str, str], ...],
) -> None:
    """Per contextual model, each of ``curves`` (column, label suffix, line style), its mean over
    seeds per layer; per static model (no layer), the first curve's mean as a grey dotted line."""
    for model, rows in contextual.groupby("model", sort=False):
        means = rows.groupby("layer")[[column for column, _, _ in curves]].mean()
        for column, suffix, style in curves:
            colour, label = colours[model], f"{model}{suffix}"
            ax.plot(means.index, means[column], "o" + style, color=colour, label=label)
    for model, rows in static.groupby("model", sort=False):
        mean = rows[curves[0][0]].mean()
        ax.axhline(mean, color="grey", linestyle=":", label=f"{model} (static)")
    ax.set_xlabel("layer")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)


def plot_cosine_by_layer(table: pd.DataFrame) -> plt.Figure:
    """S_inter and S_intra per layer and model (solid raw, dashed after cluster centring; static
    vectors a horizontal line), and the condition number of each centred layer on its numerical
    range (log scale; :func:`isotropy.geometry.layers.centred_condition_number`)."""
    contextual = table[table["kind"] == "contextual"]
    static = table[table["kind"] == "static"]
    figure, grid = panel_grid(3, 3, (4.4, 3.6))
    axes = grid[0]
    axes[1].sharey(axes[0])
    colours = _model_colours(contextual["model"].unique())
    for ax, (column, label) in zip(axes, _STATISTICS):
        curves = ((column, "", "-"), (f"{column}_adjusted", ", per-cluster centred", "--"))
        _by_layer(ax, contextual, static if column == "s_inter" else static[:0], colours, curves)
        ax.set_title(label)
    axes[0].set_ylabel("mean cosine similarity")
    _by_layer(axes[2], contextual, static, colours, (("condition_number", "", "-"),))
    axes[2].set_yscale("log")
    axes[2].set_title("condition number, centred", fontsize=10)
    axes[2].set_ylabel("$s_{max} / s_{min}$ (numerical rank)")
    figure.legend(*axes[0].get_legend_handles_labels(), loc="outside right center", frameon=False)
    return figure


def plot_lid_by_layer(table: pd.DataFrame) -> plt.Figure:
    """Mean local intrinsic dimension per layer, one panel per distance, static vectors dotted, on
    Cai et al.'s scale (``lid_cai_scale``), that of their Figure 9 and Table 3."""
    metrics = list(table["metric"].unique())
    figure, axes = panel_grid(len(metrics), len(metrics), (4.5, 3.6), (2.5, 0))
    contextual = table[table["kind"] == "contextual"]
    colours = _model_colours(contextual["model"].unique())
    for ax, metric in zip(axes[0], metrics):
        rows = table[table["metric"] == metric]
        static = rows[rows["kind"] == "static"]
        lid = (("lid_cai_scale", "", "-"),)
        _by_layer(ax, contextual[contextual["metric"] == metric], static, colours, lid)
        k = ", ".join(str(v) for v in sorted(rows["k"].unique()))
        squared = ", squared (Cai et al.)" if metric == "euclidean" else ""
        ax.set_title(f"{metric} distance{squared} (k = {k})")
        ax.set_ylabel("mean LID, Cai et al.'s scale" if squared else "mean LID")
    # one legend for every panel, beside them (a legend inside a panel would cover its lines)
    figure.legend(*axes[0][0].get_legend_handles_labels(), loc="outside right upper", frameon=False)
    return figure


def token_kind(token: str) -> str:
    """Cai et al.'s token views: ``special`` ([CLS], <s>, ...), ``symbol`` (no letter or digit),
    ``sub-word piece`` (WordPiece ``##`` continuation), else ``word``."""
    text = str(token)
    if (text[:1], text[-1:]) in {("[", "]"), ("<", ">")}:
        return "special"
    if not any(ch.isalnum() for ch in text):
        return "symbol"
    return "sub-word piece" if text.startswith("##") else "word"


def plot_isotropy_by_layer(table: pd.DataFrame) -> plt.Figure:
    """I(W) per layer and model on a log scale (the slides' "Pre-trained BERT Isotropy"): solid
    with numpy's eigenvector signs (Rajaee & Pilehvar's number), dashed after centring."""
    figure, ax = plt.subplots(figsize=(6.5, 3.6), layout="constrained")
    # I(W) can underflow to 0 in float64: the log axis shows the smallest positive double
    columns = ["isotropy", "isotropy_centred"]
    clipped = table.assign(**table[columns].clip(lower=np.finfo(float).tiny))
    curves = (("isotropy", "", "-"), ("isotropy_centred", ", centred", "--"))
    _by_layer(ax, clipped, table[:0], _model_colours(table["model"].unique()), curves)
    ax.set_yscale("log")
    ax.set(xlabel="layer (0 = embeddings)", ylabel="I(W) (1 = isotropic)")
    figure.legend(loc="outside right upper", frameon=False)
    return figure


def plot_pca_view(table: pd.DataFrame, title: str) -> plt.Figure:
    """One layer's token embeddings on their first principal components (the table of
    :func:`isotropy.geometry.layers.pca_view`) in 2-D and 3-D, coloured by k-means cluster (by
    token kind: :func:`plot_token_views`)."""
    figure = plt.figure(figsize=(10, 4.5))
    flat = figure.add_subplot(1, 2, 1)
    cube = figure.add_subplot(1, 2, 2, projection="3d")
    n_clusters = table["cluster"].nunique()
    palette = plt.cm.tab10 if n_clusters <= 10 else plt.cm.tab20  # tab20 pairs look alike when few
    colours = palette(table["cluster"].to_numpy() % palette.N)
    names = [f"PC{i} ({table[f'variance_ratio_pc{i}'].iloc[0]:.1%})" for i in (1, 2, 3)]
    flat.scatter(table["pc1"], table["pc2"], c=colours, s=3, alpha=0.6, linewidths=0)
    flat.set(xlabel=names[0], ylabel=names[1])
    cube.scatter(table["pc1"], table["pc2"], table["pc3"], c=colours, s=2, alpha=0.5, linewidths=0)
    cube.set(xlabel=names[0], ylabel=names[1], zlabel=names[2])
    layer = int(table["layer"].iloc[0])
    figure.suptitle(f"{title}: layer {layer}, {len(table)} tokens, {n_clusters} k-means cluster(s)")
    figure.tight_layout()
    return figure


def _scatter_groups(
    ax: plt.Axes, table: pd.DataFrame, groups: pd.Series, colours: Mapping[str, object]
) -> None:
    """PC1 against PC2, one colour per group (in ``colours``' order), counts in the legend."""
    for name, colour in colours.items():
        part = table[groups == name]
        if len(part):
            label = f"{name} ({len(part)})"
            ax.scatter(part["pc1"], part["pc2"], s=4, alpha=0.7, lw=0, color=colour, label=label)
    ax.set(xlabel="PC1", ylabel="PC2")
    ax.legend(fontsize=7, markerscale=3, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def frequency_band(count: int) -> str:
    """The decade band of a corpus count (at least 1): "1", "2-9", ..., "10,000 or more"."""
    edges = FREQUENCY_BAND_EDGES
    for low, high in zip(edges, edges[1:]):
        if count < high:
            return f"{low:,}" if high == low + 1 else f"{low:,}-{high - 1:,}"
    return f"{edges[-1]:,} or more"


def plot_token_views(view: pd.DataFrame, frequencies: pd.DataFrame, title: str) -> plt.Figure:
    """Cai et al.'s token views of one layer's PCA view: PC1 against PC2 coloured by
    :func:`token_kind` and by the :func:`frequency_band` of the token's count over the whole
    corpus (``frequencies``: ``token``, ``count``)."""
    counts = frequencies.groupby("token")["count"].sum()
    figure, (by_kind, by_count) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    _scatter_groups(by_kind, view, view["token"].map(token_kind), TOKEN_KINDS)
    by_kind.set_title("by token kind", fontsize=9)
    bands = view["token"].map(counts).map(frequency_band)
    shades = plt.cm.viridis(np.linspace(0, 1, len(FREQUENCY_BAND_EDGES)))
    names = [frequency_band(low) for low in FREQUENCY_BAND_EDGES]  # rarest first
    _scatter_groups(by_count, view, bands, dict(zip(names, map(tuple, shades))))
    by_count.set_title("by corpus count of the token type", fontsize=9)
    figure.suptitle(f"{title}: layer {int(view['layer'].iloc[0])}, {len(view)} tokens")
    return figure


def plot_sts(table: pd.DataFrame) -> plt.Figure:
    """STS correlation (Spearman x100 bars, Pearson as dots) and I(W) per enhancement method."""
    keys = ["model", "dataset", "split"]  # one group of bars each
    summary = table.groupby([*keys, "method"], sort=False)[["pearson", "spearman", "isotropy"]]
    summary = summary.mean().reset_index()
    methods = list(dict.fromkeys(summary["method"]))
    groups = list(summary.groupby(keys, sort=False))
    width = 0.8 / len(groups)
    x = np.arange(len(methods))
    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(max(6, 1.3 * len(methods)) + 2.5, 6), sharex=True, layout="constrained"
    )
    for i, ((model, dataset, split), rows) in enumerate(groups):
        rows = rows.set_index("method").reindex(methods)
        offset, colour = x - 0.4 + width * (i + 0.5), plt.cm.tab10(i)
        name = f"{model} / {dataset} ({split} split)"
        top.bar(offset, rows["spearman"], width, label=name, color=colour)
        top.scatter(offset, rows["pearson"], color="black", s=12, zorder=3, label="Pearson x 100")
        # markers, not bars: a bar's length on a log axis depends on an arbitrary baseline
        bottom.scatter(offset, rows["isotropy"], color=colour, s=30, zorder=3, label=name)
    top.set_ylabel("Spearman x 100")
    # one legend for both panels, beside them: inside a panel it would cover a bar
    named = dict(zip(*reversed(top.get_legend_handles_labels())))  # each name once
    figure.legend(
        named.values(), named.keys(), loc="outside right upper", frameon=False, fontsize="small"
    )
    bottom.set_yscale("log")
    bottom.set_ylabel("I(W), log scale\n(eigenvector signs as Rajaee & Pilehvar)", fontsize=9)
    for ax in (top, bottom):
        ax.grid(axis="y", alpha=0.3)
    bottom.set_xticks(x, methods, rotation=20, ha="right")
    return figure
