"""The verdict engine: one function judges our value against a published one by the row's rule.

Rules (the ``tolerance`` column of ``config/published_values.csv``; claims use the bounds):

* ``exact`` – counts: equal, else ``differs``.
* ``printed`` – correlations: within half a unit of the printed last digit (the printed value
  is a rounding) or our seeds' standard deviation, whichever is larger.
* ``relative:r`` / ``factor:f`` – within r × the paper's value / within a factor f.
* ``lid_n:r`` – LID, relative to the n used: within r when our n is within a factor 2 of the
  paper's; otherwise LID falls as n grows, so ours must be above the paper's when our n is
  smaller (below when larger) – the direction is what is tested.
* ``below:x`` / ``above:x`` / ``at_least:x`` – a bound (printed, or our reading of a statement).
* ``none`` – stated beside ours, not judged (e.g. a sample size).
"""

from __future__ import annotations

import math

AGREES, DIFFERS, CONSISTENT, NOT_CONSISTENT, STATED, NOT_RUN = (
    "agrees",
    "differs",
    "consistent",
    "not consistent",
    "stated",
    "not run",
)
VERDICTS = (AGREES, DIFFERS, CONSISTENT, NOT_CONSISTENT, STATED, NOT_RUN)
_WITH_ARGUMENT = ("relative", "factor", "lid_n", "below", "above", "at_least")
_BOUNDS = {"below": "<", "above": ">", "at_least": ">="}


def parse_tolerance(spec: str) -> tuple[str, float]:
    """``'below:-0.998'`` → ``('below', -0.998)``; ``'exact'`` → ``('exact', nan)``."""
    kind, _, argument = str(spec).partition(":")
    if kind in ("exact", "printed", "none") and not argument:
        return kind, math.nan
    if kind in _WITH_ARGUMENT and argument:
        try:
            return kind, float(argument)
        except ValueError:
            pass
    raise ValueError(
        f"tolerance {spec!r} is not one of exact, printed, none, or relative/factor/lid_n/below/above/at_least:<number>"
    )


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    if value == int(value) and abs(value) >= 1000:
        return f"{int(value):,}"
    return f"{value:.4g}"


def holds_bound(kind: str, bound: float, ours: float) -> bool:
    return {"below": ours < bound, "above": ours > bound, "at_least": ours >= bound}[kind]


def judge(
    spec: str,
    ours: float,
    paper: float = math.nan,
    *,
    precision: float = math.nan,
    spread: float = math.nan,
    our_n: float = math.nan,
    paper_n: float = math.nan,
) -> tuple[str, str]:
    """(verdict, the tolerance as applied, in words) of ``ours`` against ``paper`` by ``spec``.
    An undefined value of ours (NaN) ``differs`` / is ``not consistent``."""
    kind, argument = parse_tolerance(spec)
    defined = ours is not None and math.isfinite(ours)
    if kind == "none":
        return STATED, "not judged"
    if kind in _BOUNDS:
        text = f"{_BOUNDS[kind]} {argument:g}"
        return (
            CONSISTENT if defined and holds_bound(kind, argument, ours) else NOT_CONSISTENT
        ), text
    if kind == "exact":
        return (AGREES if defined and ours == paper else DIFFERS), "exact"
    if kind == "printed":
        half = precision / 2 if math.isfinite(precision) else 0.0
        seeds = spread if math.isfinite(spread) else 0.0
        width = max(half, seeds)
        text = f"±{width:.3g} (half the printed last digit {half:.3g}; seeds' std {_fmt(spread)})"
        return (AGREES if defined and abs(ours - paper) <= width + 1e-12 else DIFFERS), text
    if kind == "relative":
        close = defined and abs(ours - paper) <= argument * abs(paper)
        return (AGREES if close else DIFFERS), f"±{argument:.0%}"
    if kind == "factor":
        close = defined and ours > 0 and 1 / argument <= ours / paper <= argument
        return (AGREES if close else DIFFERS), f"within a factor {argument:g}"
    # lid_n: relative within a factor 2 of their n, else the direction n implies
    if math.isfinite(our_n) and math.isfinite(paper_n) and paper_n / 2 <= our_n <= 2 * paper_n:
        close = defined and abs(ours - paper) <= argument * abs(paper)
        return (AGREES if close else DIFFERS), f"±{argument:.0%} (n within a factor 2 of theirs)"
    if not (math.isfinite(our_n) and math.isfinite(paper_n)):
        return DIFFERS, "n unknown: cannot judge"
    smaller = our_n < paper_n
    text = (
        f"our n {_fmt(our_n)} vs theirs {_fmt(paper_n)}: LID falls as n grows, so ours must be "
        f"{'above' if smaller else 'below'} {paper:g}"
    )
    direction = defined and (ours > paper if smaller else ours < paper)
    return (CONSISTENT if direction else NOT_CONSISTENT), text
