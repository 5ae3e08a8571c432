"""Figures: one function per figure, each reading stored results only (never retraining).

Submodules by study: ``main`` (Figures 2-4), ``istar`` (Figures 5-7), ``geometry``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files, never windows
import matplotlib.pyplot as plt

from isotropy.io import atomic_path

log = logging.getLogger(__name__)


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


class FigureCheckError(ValueError):
    """A figure with overlapping text boxes or an unlabelled curve (:mod:`isotropy.plots.check`)."""


def check_figure(figure: plt.Figure, name: str = "figure") -> list[str]:
    """The problems :func:`isotropy.plots.check.figure_problems` finds, each logged as a warning;
    raised as :class:`FigureCheckError` when $ISOTROPY_FIGURE_CHECK is ``strict`` (the tests)."""
    from isotropy.plots.check import figure_problems

    problems = figure_problems(figure)
    for problem in problems:
        log.warning("%s: %s", name, problem)
    if problems and os.environ.get("ISOTROPY_FIGURE_CHECK") == "strict":
        raise FigureCheckError(f"{name} does not read at a glance: " + "; ".join(problems))
    return problems


def save_figure(
    figure: plt.Figure, pdf_path: str | Path, png_path: str | Path, dpi: int = 200
) -> None:
    """Check one figure (:func:`check_figure`), save it as PDF and PNG, each atomically, then close it."""
    check_figure(figure, Path(pdf_path).name)
    with atomic_path(pdf_path) as tmp:
        figure.savefig(tmp, format="pdf", bbox_inches="tight")
    with atomic_path(png_path) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)
