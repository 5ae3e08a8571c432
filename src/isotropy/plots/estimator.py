"""The I-STAR poster's estimator figures (Rudman & Eickhoff 2024), from the tables of
:mod:`isotropy.istar.estimator`: Figure 4 (IsoScore* against ζ, and IsoScore vs IsoScore* against
the mini-batch size), Figures 2-3 (average cosine is not isotropy) and Figure 1 (average
activation per dimension)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from isotropy.plots.checks import plt, save_figure


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


def plot_figure1(activations: pd.DataFrame, pdf_path: str | Path, png_path: str | Path) -> None:
    """Mean activation per dimension, one panel per encoder (column ``encoder``)."""
    encoders = list(dict.fromkeys(activations["encoder"]))
    figure, axes = plt.subplots(
        len(encoders), 1, figsize=(9, 2.6 * len(encoders)), layout="constrained", squeeze=False
    )
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
