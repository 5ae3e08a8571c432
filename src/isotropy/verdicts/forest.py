"""The report's opening figure: every judged row of ``results/paper_comparison.csv``, D = paper −
ours with its interval against its ±δ band, in units of its own margin (every band −1…+1)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from isotropy import paths
from isotropy import statistics as st
from isotropy.plots.checks import DECORATION, plt, save_figure, stamp
from isotropy.verdicts.families import family_name

GREEN, RED = "#1a7f37", "#cf222e"
COLOURS = {st.AGREES: GREEN, st.DIFFERS: RED, st.INCONCLUSIVE: "#9a6700"}
COLOURS |= {st.INCONSISTENT_SEEDS: "#8250df", st.CONSISTENT: GREEN, st.NOT_CONSISTENT: RED}
LABEL_POINTS = 8.5


def in_margins(d: Sequence[float], low: Sequence[float], high: Sequence[float]) -> np.ndarray:
    """D in units of the band [low, high] on D's side: the edges map to −1 and +1; ±inf where
    that side has no width."""
    values, lows, highs = (np.asarray(v, dtype=np.float64) for v in (d, low, high))
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(values >= 0, values / highs, values / -lows)
    return np.where(values == 0, 0.0, scaled)


def forest_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The judged rows that have a D and a band to draw, D and its interval in margins ``x``."""
    needed = ["paper_value", "our_value", "d_low", "d_high", "band_low", "band_high"]
    if missing := [c for c in needed + ["verdict"] if c not in table]:
        raise ValueError(f"the comparison table has no column {missing}: rerun compare_with_papers")
    numbers = table[needed].apply(pd.to_numeric, errors="coerce")
    d = numbers["paper_value"] - numbers["our_value"]
    drawn = table["verdict"].isin(st.JUDGED) & np.isfinite(d)
    drawn &= np.isfinite(numbers["band_low"]) & np.isfinite(numbers["band_high"])
    rows = table[drawn].assign(d=d[drawn], **numbers.loc[drawn, needed[2:]])
    rows["group"] = [f"{family_name(*pair)} study" for pair in zip(rows["paper"], rows["study"])]
    labels = rows["source"].astype(str) + " · " + rows["setup"].astype(str)
    rows["label"] = [textwrap.shorten(label, 68) for label in labels]
    # exact counts below the judged statistics, which a reader looks for first
    rows = rows.iloc[np.argsort(rows["tolerance"].eq("exact").to_numpy(), kind="stable")]
    bands = rows["band_low"], rows["band_high"]
    rows["x"] = in_margins(rows["d"], *bands)
    interval = np.isfinite(rows["d_low"]) & (rows["d_low"] < rows["d_high"])
    rows["x_low"] = np.where(interval, in_margins(rows["d_low"], *bands), np.nan)
    rows["x_high"] = np.where(interval, in_margins(rows["d_high"], *bands), np.nan)
    return rows


def undrawn_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Judged rows with no D or no band to draw, the rule as applied their ``reason``."""
    rows = table[table["verdict"].isin(st.JUDGED) & ~table.index.isin(forest_rows(table).index)]
    return rows.assign(reason=rows["tolerance"].fillna(""))


def listed_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Rows measured but not judged, each with its ``reason``."""
    rows = table[table["verdict"].isin((st.STAND_IN, st.NOT_COMPARABLE, st.ONE_SEED))]
    stand_in = rows["stand_in"].fillna("").astype(str)
    reason = np.where(rows["verdict"] == st.STAND_IN, stand_in, rows["tolerance"].fillna(""))
    return rows.assign(reason=reason)


def _number(value: float) -> str:
    if not math.isfinite(value) or value == 0:
        return "0" if value == 0 else "–"
    return f"{value:+,.0f}" if abs(value) >= 1000 else f"{value:+.3g}".replace("-", "−")


def summary(row: pd.Series) -> str:
    """The right-hand text of one row, in the row's units."""
    d = _number(row["d"])
    if math.isfinite(row["x_low"]):
        d += f" [{_number(row['d_low'])}, {_number(row['d_high'])}]"
    if row["band_low"] == row["band_high"] == 0:
        return f"{d}, exact: {row['verdict']}"
    return f"{d} in [{_number(row['band_low'])}, {_number(row['band_high'])}]: {row['verdict']}"


def _layout(rows: pd.DataFrame) -> tuple[list[tuple[float, str, str, bool]], np.ndarray]:
    """(y, left label, right label, is a header) of every line, and each row's y."""
    lines, ys, y = [], np.zeros(len(rows)), 0.0
    for group, part in rows.groupby("group", sort=False):
        lines.append((y, group, "", True))
        for position, (_, row) in zip(np.flatnonzero(rows["group"] == group), part.iterrows()):
            y += 1
            lines.append((y, row["label"], summary(row), False))
            ys[position] = y
        y += 1.5
    return lines, ys


def _draw_rows(axis, rows: pd.DataFrame, ys: np.ndarray, limit: float) -> list:
    """Bands, intervals and points of every row; the legend's handles."""
    left = np.where(rows["band_low"] < 0, -1.0, 0.0)
    right = np.where(rows["band_high"] > 0, 1.0, 0.0)
    wide = right > left
    handles = []
    if wide.any():
        style = dict(height=0.7, color="0.85", label="±δ band: the region the verdict accepts")
        handles.append(axis.barh(ys[wide], (right - left)[wide], left=left[wide], **style))
    x = rows["x"].to_numpy(dtype=np.float64)
    inside = np.abs(x) <= limit
    # no interval: the dot alone
    low = np.clip(np.fmin(rows["x_low"].to_numpy(dtype=np.float64), x), -limit, limit)
    high = np.clip(np.fmax(rows["x_high"].to_numpy(dtype=np.float64), x), -limit, limit)
    for verdict, colour in COLOURS.items():
        mine = (rows["verdict"] == verdict).to_numpy() & inside
        if mine.any():
            error = [x[mine] - low[mine], high[mine] - x[mine]]
            style = dict(fmt="o", color=colour, markersize=4, capsize=2, label=verdict)
            handles.append(axis.errorbar(x[mine], ys[mine], xerr=error, **style))
    for side, marker, words in ((1, ">", "D beyond the axis →"), (-1, "<", "← D beyond the axis")):
        beyond = ~inside & (np.sign(x) == side)
        if beyond.any():
            colours = [COLOURS[v] for v in rows["verdict"][beyond]]
            style = dict(marker=marker, s=36, c=colours, label=f"{words} (value on the right)")
            handles.append(axis.scatter(np.full(beyond.sum(), side * limit), ys[beyond], **style))
    return handles


NOTHING_DRAWN = (
    "No judged row of this run has a paper value and a margin to draw (every measured row is "
    "listed below with its reason)."
)
X_LABEL = (
    "D = paper − ours, in units of the row's margin δ on D's side (the band's edges at −1 and +1)"
)


def forest_figure(rows: pd.DataFrame, preview: str = ""):
    """The forest plot of :func:`forest_rows` (a note where no row can be drawn)."""
    if rows.empty:
        figure = plt.figure(figsize=(9, 1.2))
        figure.text(0.01, 0.5, NOTHING_DRAWN, fontsize=10)
        stamp(figure, preview)
        return figure
    lines, ys = _layout(rows)
    # the report's page is about 11 inches across; 0.27 in a row leaves room between labels
    figure, axis = plt.subplots(figsize=(11.0, 1.8 + 0.27 * len(lines)), layout="constrained")
    # half the x-axis: every finite value, at least the band with room, at most 6 bands
    values = np.abs(rows[["x", "x_low", "x_high"]].to_numpy(dtype=np.float64).ravel())
    limit = float(min(6.0, max(1.5, 1.1 * values[np.isfinite(values)].max(initial=0.0))))
    handles = _draw_rows(axis, rows, ys, limit)
    axis.axvline(0, color="0.3", linewidth=0.8, gid=DECORATION)
    for edge in (-1, 1):
        axis.axvline(edge, color="0.55", linewidth=0.6, linestyle=":", gid=DECORATION)
    axis.set_xlim(-limit * 1.04, limit * 1.04)
    ticks, lefts, rights, headers = zip(*lines)
    for side, texts in ((axis, lefts), (axis.twinx(), rights)):
        side.set_ylim(max(ticks) + 1, -1)
        side.set_yticks(ticks, texts, fontsize=LABEL_POINTS)
        side.tick_params(axis="y", length=0)
    for label, header in zip(axis.get_yticklabels(), headers):
        label.set_fontweight("bold" if header else "normal")
    axis.set_xlabel(X_LABEL, fontsize=9)
    style = dict(ncols=4, fontsize=LABEL_POINTS, frameon=False)
    figure.legend(handles=handles, loc="outside lower center", **style)
    stamp(figure, preview)
    return figure


def plot_forest(
    table: pd.DataFrame, pdf_path: str | Path, png_path: str | Path, preview: str = ""
) -> pd.DataFrame:
    """The forest plot of the comparison ``table``, checked and saved; the rows drawn."""
    rows = forest_rows(table)
    save_figure(forest_figure(rows, preview), pdf_path, png_path)
    return rows


def forest_caption(
    table: pd.DataFrame,
    seeds: Mapping[str, Sequence[int]],
    recorded: Mapping[str, str],
    source: str = paths.PAPER_COMPARISON,
) -> str:
    """The figure's caption: what it draws and the settings that made it."""
    rows = forest_rows(table)
    named = table.loc[table["verdict"] == st.STAND_IN, "stand_in"].dropna().astype(str)
    names = [s for s in dict.fromkeys(p.strip() for t in named for p in t.split("; ")) if s]
    seed_text = "; ".join(f"{s} {', '.join(map(str, v))}" for s, v in seeds.items()) or "none"
    stride_text = "; ".join(f"{s} after {words}" for s, words in recorded.items()) or "none"
    return (
        f"Every judged row with a paper value and a margin ({len(rows)} of {len(table)} rows of "
        f"{source}, by paper and study): D = paper − ours, its 95% interval and its ±δ band in "
        "units of its margin (docs/verdicts.md); on the right, in the row's units, with the "
        "verdict settled over the page's rows together (an interval inside its band may read "
        f"inconclusive). Seeds: {seed_text}. Metrics recorded: {stride_text}. "
        f"Stand-ins (not judged, listed below): {'; '.join(names) or 'none'}."
    )
