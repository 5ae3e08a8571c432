"""I-STAR figures (Rudman & Eickhoff): the paper's Figures 5-7 from results/istar/runs.csv only,
and the poster's estimator figures from the tables of :mod:`isotropy.istar.estimator`."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.container import BarContainer

from isotropy.plots.checks import DECORATION, panel_grid, plt, seed_means

METHOD_LABELS = {"istar<0": "I-STAR (λ < 0)", "none": "no regulariser", "cosreg": "CosReg"}
ERRORBARS = {"ecolor": "0.6", "elinewidth": 0.8, "capsize": 2, "markersize": 5}


def seed_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over seeds per model, task, regulariser and λ (:func:`seed_means`)."""
    keys, columns = ["model", "task", "regulariser", "lambda"], ["metric", "isoscore_star", "twonn"]
    return seed_means(runs, keys, columns)


def figure5_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The points of Figure 5: I-STAR runs at every λ and the unregularised baseline (λ = 0)."""
    summary = seed_summary(runs)
    return summary[summary["regulariser"].isin(["istar", "none"])].reset_index(drop=True)


def figure6_table(runs: pd.DataFrame, selection: str = "best") -> pd.DataFrame:
    """Per model and method, the mean over the tasks every method has (``tasks``) of the seed-mean
    metric at the method's best λ (``selection="best"``) or averaged over its λ (``"mean"``)."""
    summary = seed_summary(runs)
    regulariser = summary["regulariser"]
    methods = {
        "istar<0": (regulariser == "istar") & (summary["lambda"] < 0),
        "none": regulariser == "none",
        "cosreg": regulariser == "cosreg",
    }
    reduce = "max" if selection == "best" else "mean"
    chosen = pd.concat(summary[rows].assign(method=method) for method, rows in methods.items())
    per_task = chosen.groupby(["model", "task", "method"])["metric_mean"].agg(reduce)
    per_task = per_task.reset_index(name="metric")
    # Compare on the same tasks only: a task missing for one method would bias its average.
    methods_present = per_task["method"].nunique()
    complete = per_task.groupby(["model", "task"])["method"].transform("nunique") == methods_present
    table = per_task[complete].groupby(["model", "method"])["metric"]
    table = table.agg(metric="mean", tasks="size").reset_index()
    order = list(methods).index
    return table.sort_values(
        ["model", "method"], key=lambda c: c.map(order) if c.name == "method" else c
    ).reset_index(drop=True)


def _model_styles(models) -> dict[str, tuple[str, tuple[float, ...]]]:
    """Each model's marker and colour (tab10's), by its place in sorted order."""
    return {m: ("os^DvPX"[i % 7], plt.cm.tab10(i % 10)) for i, m in enumerate(sorted(models))}


def figure5(runs: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """IsoScore* against performance, one panel per task; colour = λ, marker = model (named in
    the legend above the panels)."""
    table = figure5_table(runs)
    tasks = sorted(table["task"].unique())
    figure, axes = panel_grid(len(tasks), 3, panel=(4.2, 3.4), margin=(1.0, 0.4))
    lams = sorted(table["lambda"].unique())
    scalar = plt.cm.ScalarMappable(plt.Normalize(min(lams + [-1.0]), max(lams + [1.0])), "coolwarm")
    styles = _model_styles(table["model"].unique())
    metric_names = runs.groupby("task")["metric_name"].first() if "metric_name" in runs else {}
    for ax, task in zip(axes.flat, tasks):
        for _, row in table[table["task"] == task].iterrows():
            x, y = row["isoscore_star_mean"], row["metric_mean"]
            spread = {"xerr": row["isoscore_star_std"], "yerr": row["metric_std"]}
            style = {"fmt": styles[row["model"]][0], "color": scalar.to_rgba(row["lambda"])}
            ax.errorbar(x, y, **spread, **style, **ERRORBARS, label=row["model"])
        ax.set(title=task, xlabel="IsoScore* (ζ = 0.75)")
        ax.set_ylabel(f"validation {metric_names.get(task, 'metric')}")
    handles = [
        plt.Line2D([], [], ls="", marker=m, color="0.3", label=name)
        for name, (m, _) in styles.items()
    ]
    figure.legend(handles=handles, loc="outside upper center", ncol=len(handles), frameon=False)
    visible = [ax for ax in axes.flat if ax.get_visible()]
    figure.colorbar(scalar, ax=visible, label="λ (0 = no regulariser)", pad=0.02)
    return figure, table


def figure6(runs: pd.DataFrame, selection: str = "best") -> tuple[plt.Figure, pd.DataFrame]:
    """Grouped bars with values: mean performance per model and method (legend never on a bar)."""
    table = figure6_table(runs, selection)
    bars = table.pivot(index="model", columns="method", values="metric")
    bars = bars[list(dict.fromkeys(table["method"]))].rename(columns=METHOD_LABELS)
    figure, ax = plt.subplots(figsize=(3.4 + 1.6 * len(bars), 3.4), layout="constrained")
    bars.plot.bar(ax=ax, rot=0, width=0.8)
    for bars in ax.containers:
        if isinstance(bars, BarContainer):
            ax.bar_label(bars, fmt="%.3g", fontsize=7)
    ax.set_ylabel(f"mean task metric over {int(table['tasks'].max())} task(s)")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figure, table


def figure7(runs: pd.DataFrame, task: str = "sst2") -> tuple[plt.Figure, pd.DataFrame]:
    """TwoNN intrinsic dimension on ``task`` against λ (I-STAR; the baseline at λ = 0), mean ± std
    over seeds, one line per model (legend beside the axes)."""
    table = figure5_table(runs)
    columns = ["model", "regulariser", "lambda", "twonn_mean", "twonn_std", "seeds"]
    table = table.loc[table["task"] == task, columns].reset_index(drop=True)
    styles = _model_styles(table["model"].unique())
    figure, ax = plt.subplots(figsize=(5.8, 3.4), layout="constrained")
    for model, part in table.sort_values("lambda").groupby("model"):
        marker, colour = styles[model]
        x, y, std = part["lambda"], part["twonn_mean"], part["twonn_std"]
        ax.errorbar(x, y, yerr=std, marker=marker, color=colour, capsize=3, label=model)
    ax.axvline(0, color="0.8", lw=0.8, zorder=0, gid=DECORATION)
    ax.set(xlabel="λ (I-STAR; 0 = no regulariser)", ylabel=f"TwoNN ID, {task} validation")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figure, table


# name → (figure, the table it plots); options: figure 6's ``selection``, figure 7's ``task``
FIGURES = {"figure5": figure5, "figure6": figure6, "figure7": figure7}


# The poster's estimator figures


def plot_figure4(curves: pd.DataFrame, stability: pd.DataFrame) -> plt.Figure:
    """Left: IsoScore*(ζ) per sample size n, the dashed line the cloud's true isotropy. Right: mean
    ± std over draws of IsoScore and IsoScore* against the mini-batch size."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    sizes = sorted(curves["n"].unique())
    colours = plt.get_cmap("viridis")(np.linspace(0, 1, len(sizes)))
    for n, colour in zip(sizes, colours):
        part = curves[curves["n"] == n].sort_values("zeta")
        left.plot(part["zeta"], part["isoscore_star"], "o-", ms=3, color=colour, label=f"n = {n}")
    truth = float(curves["true_isoscore"].iloc[0])
    left.axhline(truth, ls="--", color="black", lw=1, label=f"true isotropy {truth:.3f}")
    left.set(xlabel="shrinkage ζ (0 = IsoScore)", ylabel="IsoScore*", title="IsoScore* against ζ")
    for name, colour in zip(sorted(stability["estimator"].unique()), ("tab:red", "tab:blue")):
        part = stability[stability["estimator"] == name].sort_values("batch_size")
        x, y, std = part["batch_size"], part["mean"], part["std"]
        right.errorbar(x, y, yerr=std, marker="o", ms=3, capsize=2, color=colour, label=name)
    right.axhline(truth, ls="--", color="black", lw=1, label="true isotropy")
    right.set_xscale("log", base=2)
    right.set(xlabel="mini-batch size", ylabel="score (mean ± std over draws)")
    right.set_title(f"stability over {int(stability['draws'].iloc[0])} draws")
    for ax in (left, right):
        ax.legend(fontsize=7, loc="lower right")
    return figure


def plot_figures2_3(points: pd.DataFrame, summary: pd.DataFrame) -> plt.Figure:
    """The two clouds, each titled with its average cosine and IsoScore."""
    figure, axes = plt.subplots(1, 2, figsize=(8, 4), layout="constrained")
    for ax, (_, row), colour in zip(axes, summary.iterrows(), ("tab:blue", "tab:orange")):
        part = points[points["cloud"] == row["cloud"]]
        ax.scatter(part["x"], part["y"], s=4, alpha=0.6, color=colour, label="points")
        ax.scatter([0], [0], marker="+", s=80, color="black", label="origin")
        ax.legend(fontsize=7, loc="upper left")
        scores = f"average cosine {row['average_cosine']:.3f}, IsoScore {row['isoscore']:.3f}"
        ax.set_title(f"{row['cloud']}\n{scores}", fontsize=9)
        ax.set(xlabel="dimension 1", ylabel="dimension 2")
        ax.set_aspect("equal", adjustable="datalim")
    return figure


def plot_shapes(points: pd.DataFrame, summary: pd.DataFrame) -> plt.Figure:
    """The poster's line, circle and sphere in 3-D, titled with IsoScore and its (k-1)/(d-1)."""
    figure = plt.figure(figsize=(10, 3.8), layout="constrained")
    for i, (_, row) in enumerate(summary.iterrows()):
        ax = figure.add_subplot(1, len(summary), i + 1, projection="3d")
        part = points[points["shape"] == row["shape"]]
        ax.scatter(part["x"], part["y"], part["z"], s=3, alpha=0.6, color=f"C{i}")
        ticks = [-1, 0, 1]
        ax.set(xticks=ticks, yticks=ticks, zticks=ticks, xlabel="x", ylabel="y", zlabel="z")
        ax.set_box_aspect((1, 1, 1), zoom=0.85)
        used = f"{int(row['dimensions_used'])} of {int(row['d'])} dimensions"
        score = f"IsoScore {row['isoscore']:.3f} (expected {row['expected']:g})"
        ax.set_title(f"{row['shape']}: {used}\n{score}", fontsize=9)
    return figure


def plot_figure1(activations: pd.DataFrame) -> plt.Figure:
    """Mean activation per dimension, one panel per encoder (column ``encoder``)."""
    encoders = list(dict.fromkeys(activations["encoder"]))
    figure, axes = panel_grid(len(encoders), 1, (9, 2.6))
    for ax, name in zip(axes[:, 0], encoders):
        part = activations[activations["encoder"] == name]
        x, height = part["dimension"], part["mean_activation"]
        ax.bar(x, height, width=1.0, color="tab:blue", label="mean over sentences")
        ax.set_title(name, fontsize=9)
        ax.set(xlabel="dimension", ylabel="average activation")
        ax.legend(fontsize=7, loc="upper right")
    return figure
