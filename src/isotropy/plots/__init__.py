"""Figures: one function per figure, each reading stored results only (never retraining).

Submodules by study: ``main`` (Figures 2-4), ``istar`` (Figures 5-7), ``geometry``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files, never windows
import matplotlib.pyplot as plt

from isotropy.io import atomic_path


def stamp(figure: plt.Figure, text: str) -> None:
    """Write ``text`` (a preview's settings) above the figure, in red; nothing when empty."""
    if text:
        figure.text(
            0.5,
            1.0,
            text,
            ha="center",
            va="bottom",
            color="firebrick",
            fontsize=11,
            fontweight="bold",
        )


def save_figure(
    figure: plt.Figure, pdf_path: str | Path, png_path: str | Path, dpi: int = 200
) -> None:
    """Save one figure as PDF and PNG, each atomically, then close it."""
    with atomic_path(pdf_path) as tmp:
        figure.savefig(tmp, format="pdf", bbox_inches="tight")
    with atomic_path(png_path) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)
