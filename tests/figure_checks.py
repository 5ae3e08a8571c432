"""The figure checks: every saved figure reads at a glance. tests/conftest.py registers
:func:`check_figure` in :data:`isotropy.plots.checks.FIGURE_CHECKS`, so a problem fails the test
that saves the figure; tests/test_figures.py shows each check failing on a figure built to fail.
The checks measure the layout of the saved file (PNG, ``bbox_inches="tight"``, laid out again when
cropped), where a draw-time check missed a legend drawn over a stamp.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from isotropy.plots.checks import DECORATION

# The smallest text that reads at a paper's width (isotropy.plots.checks.PAPER_TEXT_WIDTH).
MIN_POINTS = 6.0


def figure_problems(figure: Figure, dpi: float = 200, page_width: float | None = None) -> list[str]:
    """Every overlap and unlabelled curve of ``figure`` as saved (and, with ``page_width``, every
    text too small at that width), one sentence each (empty: it passes)."""
    found: list[list[str]] = []
    failures: list[BaseException] = []

    def on_draw(event) -> None:  # the last draw of a savefig is the saved layout
        try:
            found.append(_problems(figure, event.renderer, page_width))
        except Exception as error:  # re-raised below, not lost in the callback
            failures.append(error)

    connection = figure.canvas.mpl_connect("draw_event", on_draw)
    try:
        figure.savefig(io.BytesIO(), format="png", dpi=dpi, bbox_inches="tight")
    finally:
        figure.canvas.mpl_disconnect(connection)
    if failures:
        raise failures[-1]
    return found[-1]


def _problems(figure: Figure, renderer, page_width: float | None) -> list[str]:
    problems = (
        _overlaps(figure, renderer)
        + _tick_label_overlaps(figure, renderer)
        + _legend_covers_data(figure, renderer)
        + _unlabelled(figure)
    )
    return problems + (_small_text(figure, renderer, page_width) if page_width else [])


def _small_text(figure: Figure, renderer, page_width: float) -> list[str]:
    """Texts smaller than MIN_POINTS once the saved figure is scaled down to ``page_width``."""
    width = figure.get_tightbbox(renderer).width  # inches, as saved with bbox_inches="tight"
    scale = min(1.0, page_width / width)
    drawn = [
        text
        for text in figure.findobj(Text)
        if text.get_visible()
        and text.get_text().strip()
        and (text.axes is None or text.axes.get_visible())  # a hidden panel's labels are not drawn
    ]
    sizes = [float(text.get_fontsize()) for text in drawn]
    small = sorted({round(size, 1) for size in sizes if size * scale < MIN_POINTS})
    if not small:
        return []
    return [
        f"small text: {', '.join(f'{size:g}' for size in small)} pt on a {width:.1f}-inch figure "
        f"reads below {MIN_POINTS:g} pt at a {page_width:g}-inch page width"
    ]


def _is_colorbar(ax: object) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _text_boxes(figure: Figure, renderer) -> list[tuple[str, Bbox]]:
    """(description, window extent) of every non-empty text box; a colour bar is one box."""
    boxes = []

    def add(name, artist):
        if artist is None or not artist.get_visible():
            return
        if hasattr(artist, "get_text") and not artist.get_text().strip():
            return
        extent = artist.get_window_extent(renderer)
        if extent.width > 0 and extent.height > 0:
            boxes.append((name, extent))

    add("figure title", getattr(figure, "_suptitle", None))
    for i, text in enumerate(figure.texts):
        if text is not getattr(figure, "_suptitle", None):  # suptitle may sit in texts too
            add(f"figure text {i} {text.get_text()[:30]!r}", text)
    for i, legend in enumerate(figure.legends):
        add(f"figure legend {i}", legend)
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        name = _axes_name(ax)
        if _is_colorbar(ax):
            extent = ax.get_tightbbox(renderer)
            if extent is not None:
                boxes.append((f"colour bar {name}", extent))
            continue
        for title in (ax.title, ax._left_title, ax._right_title):
            add(f"title of {name}", title)
        for letter in "xyz":
            if (axis := getattr(ax, f"{letter}axis", None)) is not None:
                add(f"{letter} label of {name}", axis.label)
        add(f"legend of {name}", ax.get_legend())
    return boxes


def _axes_name(ax: Axes) -> str:
    title = ax.get_title() or ax.get_ylabel() or str(ax.get_label() or "") or "untitled"
    return f"panel {title.splitlines()[0][:40]!r}"


def _overlaps(figure: Figure, renderer) -> list[str]:
    pairs = itertools.combinations(_text_boxes(figure, renderer), 2)
    return [
        f"overlap: {a} and {b} intersect"
        for (a, box_a), (b, box_b) in pairs
        if box_a.overlaps(box_b)
    ]


def _tick_label_overlaps(figure: Figure, renderer) -> list[str]:
    """Neighbouring tick labels of one axis must not run into each other (e.g. a log axis over
    less than a decade labels every minor tick)."""
    problems = []
    for ax in figure.axes:
        if not ax.get_visible() or _is_colorbar(ax):
            continue
        for axis in (ax.xaxis, ax.yaxis):
            ticks = axis._update_ticks() if hasattr(axis, "_update_ticks") else []
            boxes = [
                label.get_window_extent(renderer)
                for tick in ticks
                for label in (tick.label1, tick.label2)
                if label.get_visible()
                and label.get_text().strip()
                and label.get_rotation() % 90 == 0  # a slanted label's box is no outline
            ]
            if any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2)):
                problems.append(f"overlap: tick labels of {_axes_name(ax)} run into each other")
    return problems


def _legend_covers_data(figure: Figure, renderer) -> list[str]:
    """A legend drawn inside a panel must not cover that panel's bars, line vertices or points."""
    problems = []
    for ax in figure.axes:
        legend = ax.get_legend()
        if _is_colorbar(ax) or legend is None or not legend.get_visible():
            continue
        box, twins = legend.get_window_extent(renderer), _twins(ax, figure)
        bars = [patch for other in twins for patch in other.patches if patch.get_visible()]
        if any(box.overlaps(bar.get_window_extent(renderer)) for bar in bars):
            problems.append(f"overlap: legend of {_axes_name(ax)} covers a bar")
        shown = [
            a for other in twins for a in (*other.lines, *other.collections) if a.get_visible()
        ]
        lines = [a for a in shown if isinstance(a, Line2D) and a.get_gid() != DECORATION]
        dots = [a for a in shown if isinstance(a, PathCollection)]
        points = [line.get_transform().transform(line.get_xydata()) for line in lines]
        points += [dot.get_offset_transform().transform(dot.get_offsets()) for dot in dots]
        if any(box.contains(x, y) for xy in points for x, y in xy):
            problems.append(f"overlap: legend of {_axes_name(ax)} covers data points")
    return problems


def _twins(ax: Axes, figure: Figure) -> list[Axes]:
    """``ax`` and every axes drawn in the same place (twinx/twiny)."""
    return [
        other
        for other in figure.axes
        if not _is_colorbar(other) and other.get_position().bounds == ax.get_position().bounds
    ]


def _curves(ax: Axes) -> list[tuple[str, object]]:
    """(label, artist) of every data series of one axes: containers, then loose lines and
    scatters."""
    curves: list[tuple[str, object]] = []
    inside: set[int] = set()
    for container in ax.containers:
        if isinstance(container, (BarContainer, ErrorbarContainer)):
            curves.append((container.get_label() or "", container))
            for child in container.get_children():
                inside.add(id(child))
    lines = [line for line in ax.lines if line.get_gid() != DECORATION]
    shown = [c for c in ax.collections if isinstance(c, PathCollection)]
    points = [c for c in shown if len(np.asarray(c.get_offsets()))]
    loose = [a for a in lines + points if a.get_visible() and id(a) not in inside]
    return curves + [(str(artist.get_label() or ""), artist) for artist in loose]


def _legend_texts(legend) -> set[str]:
    return {text.get_text() for text in legend.get_texts()} if legend is not None else set()


def _unlabelled(figure: Figure) -> list[str]:
    problems: list[str] = []
    seen: set[int] = set()
    figure_labels = set().union(*(_legend_texts(legend) for legend in figure.legends))
    for ax in figure.axes:
        if _is_colorbar(ax) or not ax.get_visible() or id(ax) in seen:
            continue
        group = _twins(ax, figure)
        seen.update(id(other) for other in group)
        curves = [curve for other in group for curve in _curves(other)]
        if not curves:
            continue
        name = _axes_name(group[0])
        legend_labels = figure_labels.union(*(_legend_texts(other.get_legend()) for other in group))
        if len(curves) == 1:
            holder = next(other for other in group if curves[0] in _curves(other))
            named = holder.get_xlabel().strip() and holder.get_ylabel().strip()
            if not named and curves[0][0] not in legend_labels:
                problems.append(
                    f"unlabelled curve: the one curve of {name} has neither both axis labels nor "
                    "a legend entry"
                )
            continue
        for label, _ in curves:
            if label.startswith("_") or label not in legend_labels:
                problems.append(
                    f"unlabelled curve: {name} has {len(curves)} curves and one "
                    f"({label or 'no label'!r}) is named in no legend of the panel or the figure"
                )
    return problems


class FigureCheckError(ValueError):
    """A figure with overlapping text boxes or an unlabelled curve (:func:`figure_problems`)."""


def check_figure(
    figure: Figure, name: str = "figure", dpi: float = 200, page_width: float | None = None
) -> None:
    """Raise :class:`FigureCheckError` naming every problem :func:`figure_problems` finds in the
    saved layout of ``figure`` (and, with ``page_width``, text too small at that width)."""
    problems = figure_problems(figure, dpi=dpi, page_width=page_width)
    if problems:
        raise FigureCheckError(f"{name} does not read at a glance: " + "; ".join(problems))
