"""I-STAR figures: the paper's Figures 5-7, from results/istar/runs.csv only (never retraining),
and the poster's estimator figures (Rudman & Eickhoff 2024), from the tables of
:mod:`isotropy.istar.estimator`.

Figure 5: IsoScore* of validation sentence embeddings against task performance (mean ± std
over seeds), one panel per task. Figure 6: average performance over tasks of I-STAR with
negative λ, no regularisation and CosReg, per model. Figure 7: TwoNN intrinsic dimension of the
last layer's SST-2 validation sentence embeddings per λ. The poster's Figure 4 (IsoScore*
against ζ, and IsoScore vs IsoScore* against the mini-batch size), Figures 2-3 (average cosine is
not isotropy), Figure 1 (average activation per dimension) and the line, circle and sphere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from isotropy.plots.checks import DECORATION, panel_grid, plt, save_figure, seed_means


def seed_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std over seeds per model, task, regulariser and λ (:func:`seed_means`)."""
    keys, columns = ["model", "task", "regulariser", "lambda"], ["metric", "isoscore_star", "twonn"]
    return seed_means(runs, keys, columns)


def figure5_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The points of Figure 5: I-STAR runs at every λ and the unregularised baseline (λ = 0)."""
    summary = seed_summary(runs)
    return summary[summary["regulariser"].isin(["istar", "none"])].reset_index(drop=True)


def figure6_table(runs: pd.DataFrame, selection: str = "best") -> pd.DataFrame:
    """Average performance over tasks per model and method: ``istar<0`` (I-STAR, λ < 0), ``none``,
    ``cosreg``.

    Per model × task, a method's performance is the seed-mean metric at its best λ
    (``selection="best"``: negative λ for I-STAR, any λ for CosReg) or averaged over those λ
    (``"mean"``). The table then averages over the tasks every method has; ``tasks`` counts them.
    """
    summary = seed_summary(runs)
    methods = {
        "istar<0": summary[(summary["regulariser"] == "istar") & (summary["lambda"] < 0)],
        "none": summary[summary["regulariser"] == "none"],
        "cosreg": summary[summary["regulariser"] == "cosreg"],
    }
    per_task = []
    for method, rows in methods.items():
        if rows.empty:
            continue
        reduce = "max" if selection == "best" else "mean"
        values = (
            rows.groupby(["model", "task"])["metric_mean"]
            .agg(reduce)
            .rename("metric")
            .reset_index()
        )
        per_task.append(values.assign(method=method))
    per_task = pd.concat(per_task, ignore_index=True)
    # Compare on the same tasks only: a task missing for one method would bias its average.
    methods_present = per_task["method"].nunique()
    complete = per_task.groupby(["model", "task"])["method"].transform("nunique") == methods_present
    per_task = per_task[complete]
    table = (
        per_task.groupby(["model", "method"])["metric"]
        .agg(metric="mean", tasks="size")
        .reset_index()
    )
    order = {m: i for i, m in enumerate(methods)}
    return table.sort_values(
        ["model", "method"], key=lambda c: c.map(order) if c.name == "method" else c
    ).reset_index(drop=True)


def figure7_table(runs: pd.DataFrame, task: str = "sst2") -> pd.DataFrame:
    """TwoNN mean ± std over seeds per model and λ on ``task``: I-STAR λ and the baseline at λ =
    0."""
    summary = figure5_table(runs)
    table = summary[summary["task"] == task]  # the study plans it for a task of its grid only
    return table[
        ["model", "regulariser", "lambda", "twonn_mean", "twonn_std", "seeds"]
    ].reset_index(drop=True)


def _model_styles(models) -> dict[str, tuple[str, tuple[float, ...]]]:
    """Each model's marker and colour (tab10's), by its place in sorted order."""
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    return {
        m: (markers[i % len(markers)], plt.cm.tab10(i % 10)) for i, m in enumerate(sorted(models))
    }


def figure5(runs: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """IsoScore* against performance, one panel per task; colour = λ, marker = model (named in
    the legend above the panels, clear of the panel titles)."""
    table = figure5_table(runs)
    tasks = sorted(table["task"].unique())
    figure, axes = panel_grid(len(tasks), 3, panel=(4.2, 3.4), margin=(1.0, 0.4))
    lams = sorted(table["lambda"].unique())
    cmap = plt.get_cmap("coolwarm")
    norm = plt.Normalize(min(lams + [-1.0]), max(lams + [1.0]))
    styles = _model_styles(table["model"].unique())
    metric_names = runs.groupby("task")["metric_name"].first() if "metric_name" in runs else {}
    for ax, task in zip(axes.flat, tasks):
        part = table[table["task"] == task]
        for _, row in part.iterrows():
            marker, _ = styles[row["model"]]
            ax.errorbar(
                row["isoscore_star_mean"],
                row["metric_mean"],
                xerr=row["isoscore_star_std"],
                yerr=row["metric_std"],
                fmt=marker,
                color=cmap(norm(row["lambda"])),
                ecolor="0.6",
                elinewidth=0.8,
                capsize=2,
                markersize=5,
                label=row["model"],
            )
        ax.set_title(task)
        ax.set_xlabel("IsoScore* (ζ = 0.75)")
        ax.set_ylabel(f"validation {metric_names.get(task, 'metric')}")
    handles = [
        plt.Line2D([], [], ls="", marker=m, color="0.3", label=name)
        for name, (m, _) in styles.items()
    ]
    figure.legend(handles=handles, loc="outside upper center", ncol=len(handles), frameon=False)
    scalar = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    visible = [ax for ax in axes.flat if ax.get_visible()]
    figure.colorbar(scalar, ax=visible, label="λ (0 = no regulariser)", pad=0.02)
    return figure, table


def figure6(runs: pd.DataFrame, selection: str = "best") -> tuple[plt.Figure, pd.DataFrame]:
    """Grouped bars: average performance per model for I-STAR (λ < 0), no regulariser, CosReg
    (legend beside the axes, never on a bar)."""
    table = figure6_table(runs, selection)
    models = sorted(table["model"].unique())
    methods = list(dict.fromkeys(table["method"]))
    width = 0.8 / len(methods)
    figure, ax = plt.subplots(figsize=(3.4 + 1.6 * len(models), 3.4), layout="constrained")
    labels = {"istar<0": "I-STAR (λ < 0)", "none": "no regulariser", "cosreg": "CosReg"}
    for i, method in enumerate(methods):
        part = table[table["method"] == method].set_index("model").reindex(models)
        x = np.arange(len(models)) + (i - (len(methods) - 1) / 2) * width
        ax.bar(x, part["metric"], width, label=labels.get(method, method))
        for xi, value in zip(x, part["metric"]):
            if np.isfinite(value):
                ax.annotate(f"{value:.3g}", (xi, value), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(np.arange(len(models)), models)
    ax.set_ylabel(f"mean task metric over {int(table['tasks'].max())} task(s)")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figure, table


def figure7(runs: pd.DataFrame, task: str = "sst2") -> tuple[plt.Figure, pd.DataFrame]:
    """TwoNN intrinsic dimension against λ (I-STAR; the baseline at λ = 0), one line per model
    (legend beside the axes)."""
    table = figure7_table(runs, task)
    styles = _model_styles(table["model"].unique())
    figure, ax = plt.subplots(figsize=(5.8, 3.4), layout="constrained")
    for model, part in table.groupby("model"):
        part = part.sort_values("lambda")
        marker, colour = styles[model]
        ax.errorbar(
            part["lambda"],
            part["twonn_mean"],
            yerr=part["twonn_std"],
            marker=marker,
            color=colour,
            capsize=3,
            label=model,
        )
    ax.axvline(0, color="0.8", lw=0.8, zorder=0, gid=DECORATION)
    ax.set_xlabel("λ (I-STAR; 0 = no regulariser)")
    ax.set_ylabel(f"TwoNN ID, {task} validation")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figure, table


FIGURES = {"figure5": figure5, "figure6": figure6, "figure7": figure7}


def plot_figure(
    name: str, runs: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, **options
) -> pd.DataFrame:
    """Figure ``name`` of :data:`FIGURES` (``options``: figure 6's ``selection``, figure 7's
    ``task``), saved as PDF and PNG (checked, :func:`save_figure`); returns the table it plots."""
    figure, table = FIGURES[name](runs, **options)
    save_figure(figure, pdf_path, png_path)
    return table


# ---------------------------------------------------------------------------------------------
# The poster's estimator figures


def plot_figure4(
    curves: pd.DataFrame, stability: pd.DataFrame, pdf_path: str | Path, png_path: str | Path
) -> None:
    """Left: IsoScore*(ζ) per sample size n, the dashed line the cloud's true isotropy. Right: mean
    ± std over draws of IsoScore and IsoScore* against the mini-batch size."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    cmap = plt.get_cmap("viridis")
    sizes = sorted(curves["n"].unique())
    for i, n in enumerate(sizes):
        part = curves[curves["n"] == n].sort_values("zeta")
        left.plot(
            part["zeta"],
            part["isoscore_star"],
            marker="o",
            ms=3,
            color=cmap(i / max(1, len(sizes) - 1)),
            label=f"n = {n}",
        )
    truth = float(curves["true_isoscore"].iloc[0])
    left.axhline(truth, ls="--", color="black", lw=1, label=f"true isotropy {truth:.3f}")
    left.set_xlabel("shrinkage ζ (0 = IsoScore)")
    left.set_ylabel("IsoScore*")
    left.set_title("IsoScore* against ζ")
    left.legend(fontsize=7, loc="lower right")
    for name, colour in zip(sorted(stability["estimator"].unique()), ("tab:red", "tab:blue")):
        part = stability[stability["estimator"] == name].sort_values("batch_size")
        right.errorbar(
            part["batch_size"],
            part["mean"],
            yerr=part["std"],
            marker="o",
            ms=3,
            capsize=2,
            color=colour,
            label=name,
        )
    right.axhline(truth, ls="--", color="black", lw=1, label="true isotropy")
    right.set_xscale("log", base=2)
    right.set_xlabel("mini-batch size")
    right.set_ylabel("score (mean ± std over draws)")
    right.set_title(f"stability over {int(stability['draws'].iloc[0])} draws")
    right.legend(fontsize=7, loc="lower right")
    save_figure(figure, pdf_path, png_path)


def plot_figures2_3(
    points: pd.DataFrame, summary: pd.DataFrame, pdf_path: str | Path, png_path: str | Path
) -> None:
    """The two clouds, each titled with its average cosine and IsoScore."""
    figure, axes = plt.subplots(1, 2, figsize=(8, 4), layout="constrained")
    for ax, (_, row), colour in zip(axes, summary.iterrows(), ("tab:blue", "tab:orange")):
        part = points[points["cloud"] == row["cloud"]]
        ax.scatter(part["x"], part["y"], s=4, alpha=0.6, color=colour, label="points")
        ax.scatter([0], [0], marker="+", s=80, color="black", label="origin")
        ax.legend(fontsize=7, loc="upper left")
        ax.set_title(
            f"{row['cloud']}\naverage cosine {row['average_cosine']:.3f}, IsoScore "
            f"{row['isoscore']:.3f}",
            fontsize=9,
        )
        ax.set_xlabel("dimension 1")
        ax.set_ylabel("dimension 2")
        ax.set_aspect("equal", adjustable="datalim")
    save_figure(figure, pdf_path, png_path)


def plot_shapes(
    points: pd.DataFrame, summary: pd.DataFrame, pdf_path: str | Path, png_path: str | Path
) -> None:
    """The poster's line, circle and sphere in 3-D axes, each titled with its IsoScore and the
    (k - 1)/(d - 1) it should be."""
    figure = plt.figure(figsize=(10, 3.8), layout="constrained")
    for i, (_, row) in enumerate(summary.iterrows()):
        ax = figure.add_subplot(1, len(summary), i + 1, projection="3d")
        part = points[points["shape"] == row["shape"]]
        ax.scatter(part["x"], part["y"], part["z"], s=3, alpha=0.6, color=f"C{i}")
        ticks = [-1, 0, 1]
        ax.set(xticks=ticks, yticks=ticks, zticks=ticks, xlabel="x", ylabel="y", zlabel="z")
        ax.set_box_aspect((1, 1, 1), zoom=0.85)
        ax.set_title(
            f"{row['shape']}: {int(row['dimensions_used'])} of {int(row['d'])} dimensions\n"
            f"IsoScore {row['isoscore']:.3f} (expected {row['expected']:g})",
            fontsize=9,
        )
    save_figure(figure, pdf_path, png_path)


def plot_figure1(activations: pd.DataFrame, pdf_path: str | Path, png_path: str | Path) -> None:
    """Mean activation per dimension, one panel per encoder (column ``encoder``)."""
    encoders = list(dict.fromkeys(activations["encoder"]))
    figure, axes = panel_grid(len(encoders), 1, (9, 2.6))
    for ax, name in zip(axes[:, 0], encoders):
        part = activations[activations["encoder"] == name]
        ax.bar(
            part["dimension"],
            part["mean_activation"],
            width=1.0,
            color="tab:blue",
            label="mean over sentences",
        )
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("dimension")
        ax.set_ylabel("average activation")
        ax.legend(fontsize=7, loc="upper right")
    save_figure(figure, pdf_path, png_path)
