"""The helpers every figure module shares, the headless ``plt``, and the one saver,
:func:`save_figure`, which first runs the checks the tests register (tests/figure_checks.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")  # headless: figures are files, never windows
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from isotropy.io import atomic_path

# Lines drawn as a reference (a zero line, a threshold) carry this gid and need no label.
DECORATION = "decoration"
# A paper's text width (ACL: 455 pt = 6.3 in, a figure* across both columns).
PAPER_TEXT_WIDTH = 6.3
# check(figure, file name, dpi, page width in inches or None), raising on a problem: empty in a
# workflow run, the tests register theirs.
FIGURE_CHECKS: list[Callable[[Figure, str, float, float | None], None]] = []


def seed_means(table: pd.DataFrame, keys: list[str], columns: list[str]) -> pd.DataFrame:
    """``<column>_mean`` and ``<column>_std`` over seeds (ddof = 1; 0 for one seed) per ``keys``,
    and ``seeds``, the runs in each group."""
    grouped = table.groupby(keys, sort=True)
    summary = grouped[columns].agg(["mean", "std"])
    summary.columns = [f"{a}_{b}" for a, b in summary.columns]
    summary = summary.fillna({c: 0.0 for c in summary.columns if c.endswith("_std")})
    summary["seeds"] = grouped.size()
    return summary.reset_index()


def band(ax, frame: pd.DataFrame, x: str, column: str, label: str, colour, style="-", **fill):
    """The mean of ``column`` over seeds against ``x`` in a band of ± one standard deviation
    (``fill``: the band's options; ``alpha=0`` draws none)."""
    stats = frame.groupby(x)[column].agg(["mean", "std"]).fillna(0.0)
    mean, std = stats["mean"], stats["std"]
    (line,) = ax.plot(stats.index, mean, style, color=colour, label=label)
    if fill.setdefault("alpha", 0.2):
        ax.fill_between(stats.index, mean - std, mean + std, color=colour, linewidth=0, **fill)
    return line


def panel_grid(
    panels: int,
    max_columns: int,
    panel: tuple[float, float],
    margin: tuple[float, float] = (0.0, 0.0),
) -> tuple[Figure, np.ndarray]:
    """(figure, 2-d array of axes): ``panels`` cells of ``panel`` inches in rows of at most
    ``max_columns``, plus ``margin`` inches, constrained layout; cells past the last hidden."""
    columns = min(max_columns, panels)
    rows = -(-panels // columns)
    size = (panel[0] * columns + margin[0], panel[1] * rows + margin[1])
    figure, axes = plt.subplots(rows, columns, figsize=size, squeeze=False, layout="constrained")
    for ax in axes.flat[panels:]:
        ax.set_visible(False)
    return figure, axes


def wrapped(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, words kept whole."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) or text


def fitted(figure: Figure, text: str, points: float, em: float = 0.5) -> str:
    """``text`` wrapped to the figure's width, in characters of ``points`` size ``em`` wide."""
    return wrapped(text, int(figure.get_figwidth() * 72 / (em * points)))


def caption(figure: Figure, text: str, points: float = 8) -> None:
    """``text`` (what the marks mean, the settings that made the figure) under the panels: the
    supxlabel, so the constrained layout makes room for it."""
    figure.supxlabel(fitted(figure, text, points), fontsize=points)


def stamp(figure: Figure, text: str) -> None:
    """``text`` (a preview's settings) in red above the figure, before any title; nothing when
    empty. The suptitle, so the layout makes room for it and it never widens the saved file."""
    if not text:
        return
    title = figure.get_suptitle()
    rest = f"\n{title}" if title else ""
    lines = fitted(figure, text, 11, em=0.65)  # 11-pt bold
    figure.suptitle(lines + rest, color="firebrick", fontsize=11, fontweight="bold")


def save_figure(
    figure: Figure,
    pdf_path: str | Path,
    png_path: str | Path,
    dpi: int = 200,
    page_width: float | None = None,
) -> None:
    """Run :data:`FIGURE_CHECKS` (``page_width``: inches at which it must read), save the figure
    as PDF and PNG, each atomically, and close it."""
    for check in FIGURE_CHECKS:
        check(figure, Path(pdf_path).name, dpi, page_width)
    for path, options in ((pdf_path, {"format": "pdf"}), (png_path, {"format": "png", "dpi": dpi})):
        with atomic_path(path) as tmp:
            figure.savefig(tmp, bbox_inches="tight", **options)
    plt.close(figure)
