"""Figures: one function per figure, each reading stored results only (never retraining).

Submodules by study: ``main`` (Figures 2-4 and the sensitivity study), ``istar`` (Figures 5-7),
``geometry``.
"""

from __future__ import annotations

import logging
import os
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures are files, never windows
import matplotlib.pyplot as plt

from isotropy.io import atomic_path

log = logging.getLogger(__name__)


def stamp(figure: plt.Figure, text: str) -> None:
    """Write ``text`` (a preview's settings) above the figure, in red; nothing when empty.

    The stamp is the figure's suptitle (before any title it has), wrapped to the figure's width, so
    the layout engine makes room for it and it never widens the saved file.
    """
    if not text:
        return
    title = getattr(figure, "_suptitle", None)
    rest = f"\n{title.get_text()}" if title is not None and title.get_text() else ""
    fits = int(figure.get_figwidth() * 72 / (0.65 * 11))  # characters of 11-pt bold in its width
    lines = "\n".join(textwrap.wrap(text, fits, break_long_words=False))
    figure.suptitle(lines + rest, color="firebrick", fontsize=11, fontweight="bold")


class FigureCheckError(ValueError):
    """A figure with overlapping text boxes or an unlabelled curve (:mod:`isotropy.plots.check`)."""


def check_figure(
    figure: plt.Figure, name: str = "figure", dpi: float = 200, page_width: float | None = None
) -> list[str]:
    """The problems :func:`isotropy.plots.check.figure_problems` finds in the saved layout (and,
    with ``page_width``, text too small at that width), each logged as a warning; raised as
    :class:`FigureCheckError` when $ISOTROPY_FIGURE_CHECK is ``strict`` (the tests)."""
    from isotropy.plots.check import figure_problems

    problems = figure_problems(figure, dpi=dpi, page_width=page_width)
    for problem in problems:
        log.warning("%s: %s", name, problem)
    if problems and os.environ.get("ISOTROPY_FIGURE_CHECK") == "strict":
        raise FigureCheckError(f"{name} does not read at a glance: " + "; ".join(problems))
    return problems


def save_figure(
    figure: plt.Figure,
    pdf_path: str | Path,
    png_path: str | Path,
    dpi: int = 200,
    page_width: float | None = None,
) -> None:
    """Check one figure (:func:`check_figure`, ``page_width`` in inches for a figure meant to read
    at a paper's width), save it as PDF and PNG, each atomically, then close it."""
    check_figure(figure, Path(pdf_path).name, dpi=dpi, page_width=page_width)
    with atomic_path(pdf_path) as tmp:
        figure.savefig(tmp, format="pdf", bbox_inches="tight")
    with atomic_path(png_path) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)
