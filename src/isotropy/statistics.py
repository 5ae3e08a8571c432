"""Neutral ground for the science (the main study's tables, the sensitivity and extension
studies) and the verdicts alike (science never imports the verdicts): intervals over seeds, the
form of a claim (:class:`Claim`), and which setup
pattern of a paper's printed row (``config/published_values.csv``) fits one of ours.

A run is deterministic given its seed, so the seeds are the replication unit: each seed's
correlation is mapped to Fisher's z = artanh(r) and the t-interval of the mean z with ``n - 1``
degrees of freedom, z̄ ± t_{(1 + level)/2, n-1} · s_z / √n, mapped back with tanh (the estimate:
tanh(z̄)). One seed: no interval; undefined correlations left out and counted; ±1 clipped to
±``limit`` (coverage: tests/test_seed_interval_coverage.py, docs/verdicts.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

R_LIMIT = 1 - 1e-12
# A trend's smallest effect of interest on IsoScore or the silhouette (the papers print none).
TREND_SESOI = 0.05
TREND_SOURCE = "a convention set after the runs"
# The correlations a table or claim reports, each judged on Fisher's z.
CORRELATIONS = ("pearson_r", "spearman_rho")
# Every verdict name, spelled here only (the verdicts, the report and the studies read them): a
# printed number (agrees ...), a bound or test on it (consistent ...), a claim, rows not judged.
AGREES, DIFFERS = "agrees", "differs"
CONSISTENT, NOT_CONSISTENT = "consistent", "not consistent"
SUPPORTED, NOT_SUPPORTED = "supported", "not supported"
UNTESTED_HOLDS, UNTESTED_FAILS = "untested: holds", "untested: fails"
STATED, NOT_RUN, NOT_DECIDED = "stated", "not run", "not decided"
INCONSISTENT_SEEDS = "inconsistent across seeds"
INCONCLUSIVE = "inconclusive"
NOT_COMPARABLE = "not comparable"
CANNOT_JUDGE = "cannot judge at this stride"
ONE_SEED = "1 seed: not judged"
STAND_IN = "stand-in: not judged"
NOT_LEARNED = "not judged: learning not shown"
# The verdicts that judge a row, then the rest, in the comparison page's order.
JUDGED = (AGREES, DIFFERS, CONSISTENT, NOT_CONSISTENT, INCONCLUSIVE, INCONSISTENT_SEEDS)
VERDICTS = (*JUDGED, NOT_COMPARABLE, ONE_SEED, STAND_IN, NOT_LEARNED, STATED, NOT_RUN)


@dataclass(frozen=True)
class SeedInterval:
    """A correlation's interval over seeds (see the module docstring)."""

    seeds: int  # seeds with a defined correlation
    undefined: int  # seeds left out: correlation undefined (constant series)
    estimate: float  # tanh(mean Fisher z); NaN with no defined seed
    low: float | None  # None: fewer than 2 seeds, no interval
    high: float | None
    level: float

    def describe(self) -> str:
        """One phrase naming the interval, for tables and captions."""
        if self.low is None:
            return f"{self.seeds} seed: no interval" if self.seeds == 1 else "no seed: no interval"
        level = f"{100 * self.level:g}%"
        return f"{level} t-interval over {self.seeds} seeds (Fisher z of per-seed values)"


def fisher_z(values: ArrayLike, limit: float = R_LIMIT) -> np.ndarray:
    """artanh of correlations, clipped to ±``limit`` so that ±1 stays finite."""
    r = np.asarray(values, dtype=np.float64)
    return np.arctanh(np.clip(r, -limit, limit))


def seed_interval(per_seed: Iterable[float], level: float = 0.95) -> SeedInterval:
    """The t-interval over seeds of per-seed correlations (module docstring)."""
    if not 0 < level < 1:
        raise ValueError(f"interval level must lie in (0, 1), got {level}")
    values = np.asarray(list(per_seed), dtype=np.float64)
    finite = values[np.isfinite(values)]
    undefined = int(values.size - finite.size)
    if finite.size == 0:
        return SeedInterval(0, undefined, math.nan, None, None, level)
    if finite.size < 2:  # the one seed's value itself (no round trip through z)
        return SeedInterval(1, undefined, float(finite[0]), None, None, level)
    on_z = cast("tuple[float, float, float]", mean_interval(fisher_z(finite), level)[:3])
    estimate, low, high = (float(np.tanh(v)) for v in on_z)
    return SeedInterval(int(finite.size), undefined, estimate, low, high, level)


class MeanInterval(NamedTuple):
    mean: float  # NaN with no finite value
    low: float | None  # None: fewer than 2 finite values, no interval
    high: float | None
    seeds: int  # the finite values


def mean_interval(values: Iterable[float], level: float = 0.95) -> MeanInterval:
    """Mean of the finite per-seed values and its t-interval, on the scale they are given in
    (:func:`seed_interval`'s on Fisher's z)."""
    x = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if x.size < 2:
        return MeanInterval(float(x[0]) if x.size else math.nan, None, None, x.size)
    half = stats.t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return MeanInterval(float(x.mean()), float(x.mean() - half), float(x.mean() + half), x.size)


def smallest_detectable_effect(sd: float, n: int, alpha: float, power: float = 0.8) -> float:
    """The smallest true mean difference a one-sided one-sample (paired) t-test over ``n`` seeds
    with spread ``sd`` detects at level ``alpha`` with probability ``power`` (the noncentral t;
    NaN under 2 seeds or without spread)."""
    if n < 2 or not sd > 0:
        return math.nan
    critical = stats.t.ppf(1 - alpha, n - 1)
    miss = lambda shift: stats.nct.sf(critical, n - 1, shift) - power  # noqa: E731
    shift = optimize.brentq(miss, 0.0, 100.0)
    return float(shift * sd / math.sqrt(n))


def signs_disagree(per_seed: Iterable[float], pooled: float | None = None) -> bool:
    """True when the seeds' correlations (and the pooled one) do not share one sign (zero and
    undefined values ignored)."""
    values = [v for v in [*per_seed, pooled] if v is not None and math.isfinite(v) and v != 0]
    return len({math.copysign(1, v) for v in values}) > 1


def matches(pattern: str, paper_setup: str) -> bool:
    """Whether a published setup pattern (fnmatch, alternatives joined by '|') fits a setup."""
    return any(fnmatchcase(paper_setup, part.strip()) for part in str(pattern).split("|"))


@dataclass(frozen=True)
class Claim:
    """One claim, as data: study, quantity, bound (a tolerance: below:x, seeds_above:x, ...),
    paper, the rule judging it (direction, every_run, seeds, value), its smallest effect of
    interest beyond the bound (Fisher z for r) and source, what its seeds vary, and its scope:
    each setup, or any setup (supported when some setup holds)."""

    name: str
    study: str
    quantity: str
    statement: str
    bound: str
    paper: str
    rule: str = "value"
    neutral: float = 0.0  # the quantity's no-change point (a bound there is a direction)
    test: str = ""  # the test over seeds in words (rule seeds)
    sesoi: float = math.nan
    sesoi_source: str = ""
    seeds_vary: str = ""
    scope: str = "each setup"
