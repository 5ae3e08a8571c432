"""Agreement with a printed number as equivalence: a prediction of the paper's draw from our
seeds against a margin ±δ declared on a near-normal scale (docs/verdicts.md, "The rules")."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from isotropy.statistics import fisher_z

ALPHA = 0.05
POOLED_DRAWS = 2000


class Scale(NamedTuple):
    """The scale a quantity is judged on: forward and back, and the margin's region on it (δ
    declared on it, so the region's width does not move with the paper's draw)."""

    name: str
    forward: Callable[[ArrayLike], np.ndarray]
    back: Callable[[ArrayLike], np.ndarray]
    margins: tuple[str, ...] = ()  # the margin kinds declared on this scale
    bound: float = math.inf  # |printed value| at which the scale ends (±1 for r: z = ±∞)

    def region(self, paper, margin: str) -> tuple[np.ndarray, np.ndarray]:
        """[paper − δ, paper + δ] on this scale, of a printed value or of each of an array."""
        kind, value = parse_margin(margin)
        if kind not in self.margins:
            raise ValueError(
                f"margin {margin!r} is not declared on {self.name} (kinds there: "
                f"{', '.join(self.margins)}): a margin in printed units moves with the paper's draw"
            )
        if np.any(np.abs(paper) >= self.bound):
            raise ValueError(
                f"a printed value at ±{self.bound:g} has no place on {self.name}: state it as a "
                "bound (below:/above:), not as a value to agree with"
            )
        if kind == "relative":
            ends = paper * (1 - value), paper * (1 + value)
            return self.forward(np.minimum(*ends)), self.forward(np.maximum(*ends))
        centre = self.forward(paper)
        return centre - value, centre + value


def _logit(values: ArrayLike) -> np.ndarray:
    return special.logit(np.clip(np.asarray(values, dtype=np.float64), 1e-300, 1 - 1e-16))


def _hundredths(scale: Scale, name: str) -> Scale:
    """``scale`` for a value printed ×100."""
    forward, back = (lambda v: scale.forward(np.asarray(v) / 100)), (lambda v: 100 * scale.back(v))
    return scale._replace(name=name, forward=forward, back=back, bound=100 * scale.bound)


Z = Scale("Fisher z", fisher_z, np.tanh, ("z",), 1.0)
LOGIT = Scale("logit", _logit, special.expit, ("logit",))
SCALES = {
    "z": Z,
    "z100": _hundredths(Z, "Fisher z of r/100"),
    "logit": LOGIT,
    "logit100": _hundredths(LOGIT, "logit of I(W) (the printed value /100)"),
    "identity": Scale(
        "natural units", lambda v: np.asarray(v, dtype=np.float64), np.asarray, ("relative",)
    ),
}
MARGIN_KINDS = ("z", "logit", "relative")


def parse_margin(spec: str) -> tuple[str, float]:
    """``'z:0.1'`` → ``('z', 0.1)``; a clear error on anything else."""
    kind, _, value = str(spec).partition(":")
    with contextlib.suppress(ValueError):
        if kind in MARGIN_KINDS and 0 < (number := float(value)) < math.inf:
            return kind, number
    raise ValueError(
        f"margin {spec!r} is not <kind>:<positive number> with kind one of {MARGIN_KINDS}"
    )


def describe_margin(spec: str) -> str:
    kind, value = parse_margin(spec)
    return {
        "z": f"{value:g} on Fisher z",
        "relative": f"{value:.0%} of the paper's value",
        "logit": f"{value:.3g} on the logit (odds ×{math.exp(value):.3g})",
    }[kind]


class Prediction(NamedTuple):
    """Where the paper's statistic should fall were its runs ours, on the judging scale."""

    centre: float
    se: float  # 0: exact (a seed-free value)
    df: int
    what: str  # in words, for the row


def mean_se(y: np.ndarray, m: float) -> np.ndarray:
    """s · √(1/n + 1/m), the standard error of (paper's draw − our mean), per row of ``y``."""
    return y.std(axis=1, ddof=1) * math.sqrt(1 / y.shape[1] + (1 / m if math.isfinite(m) else 0.0))


def mean_prediction(values: Sequence[float], m: float) -> Prediction | None:
    """The paper's mean over m runs from our seeds on the judging scale (None under 2 seeds)."""
    y = np.asarray([v for v in values if math.isfinite(v)], dtype=np.float64)
    if y.size < 2:
        return None
    se = float(mean_se(y[None, :], m)[0])
    runs = "no seed noise" if not math.isfinite(m) else f"m = {m:g}"
    return Prediction(float(y.mean()), se, y.size - 1, f"t over {y.size} seeds, paper's {runs}")


def pooled_r(moments: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Pearson r of the pooled series of each row of ``counts`` (how often each seed is drawn),
    from per-seed sums (columns: points, Σx, Σy, Σx², Σy², Σxy)."""
    total = counts @ moments
    n, sx, sy, sxx, syy, sxy = total.T
    return (n * sxy - sx * sy) / np.sqrt((n * sxx - sx**2) * (n * syy - sy**2))


def series_moments(x: Sequence[float], y: Sequence[float]) -> tuple[float, ...]:
    """One seed's sums for :func:`pooled_r` (uncentred: the values are O(1))."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return (float(a.size), a.sum(), b.sum(), (a * a).sum(), (b * b).sum(), (a * b).sum())


def pooled_prediction(
    moments: np.ndarray, m: int, rng: np.random.Generator | None = None, draws: int = POOLED_DRAWS
) -> Prediction | None:
    """The paper's Pearson r pooled over m runs (it depends on m): simulated from m of our seeds
    drawn with replacement."""
    n = len(moments)  # at least 2 (the caller's check names the missing seeds)
    rng = rng or np.random.default_rng(0)
    counts = rng.multinomial(m, np.full(n, 1 / n), size=draws).astype(np.float64)
    z = fisher_z(pooled_r(moments, counts))
    z = z[np.isfinite(z)]
    if z.size < 2:
        return None
    se = float(z.std(ddof=1) * math.sqrt(n / (n - 1)) * math.sqrt(1 + m / n))
    what = f"pooled over m = {m} of our {n} seeds, {draws} draws"
    return Prediction(float(z.mean()), se, n - 1, what)


class Equivalence(NamedTuple):
    """D = paper − ours's interval and the p-values."""

    low: float
    high: float
    p_agree: float
    p_differ: float


def test_arrays(centre, se, df, low, high) -> tuple[np.ndarray, np.ndarray]:
    """(p of *agrees*, p of *differs*) for arrays of predictions against regions [low, high]
    on the judging scale: two one-sided tests each, doubled so that both compare with α."""
    inside = stats.t.sf((centre - low) / se, df), stats.t.sf((high - centre) / se, df)
    outside = stats.t.sf((low - centre) / se, df), stats.t.sf((centre - high) / se, df)
    return np.minimum(1.0, 2 * np.maximum(*inside)), np.minimum(1.0, 2 * np.minimum(*outside))


def tested_regions(
    scale: Scale, paper, margin: str, half: float = 0.0
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(the region *agrees* tests against, the one *differs* tests against) on the judging
    scale: the regions of every value within ±``half`` of the print, intersected and joined."""
    low_a, high_a = scale.region(paper - half, margin)
    low_b, high_b = scale.region(paper + half, margin)
    inner = np.maximum(low_a, low_b), np.minimum(high_a, high_b)
    return inner, (np.minimum(low_a, low_b), np.maximum(high_a, high_b))


def printed_region(scale: Scale, paper: float, margin: str, half: float = 0.0) -> np.ndarray:
    """The region *agrees* tests against, in the printed units."""
    return scale.back(np.ravel(tested_regions(scale, paper, margin, half)[0]))


def equivalence(
    prediction: Prediction,
    paper: float,
    margin: str,
    scale: Scale,
    allowance: tuple[float, float] = (0.0, 0.0),
    half: float = 0.0,
) -> Equivalence:
    """D's interval and the p-values of *agrees* (TOST) and *differs* (outside the margin);
    ``allowance``, a protocol setting's (low, high) measured effect on ours, widens it by that."""
    (low, high), (outer_low, outer_high) = tested_regions(scale, paper, margin, half)
    c, se, (b_low, b_high) = prediction.centre, prediction.se, map(float, allowance)
    # ours at the paper's protocol lies in [c − b_high, c − b_low]: each region shifts by that
    agree, differ = (low + b_high, high + b_low), (outer_low + b_low, outer_high + b_high)
    if se == 0 or not math.isfinite(se):  # exact: a seed-free value
        width, p_agree = 0.0, float(not agree[0] <= c <= agree[1])
        p_differ = float(differ[0] <= c <= differ[1])
    else:
        width = float(stats.t.ppf(1 - ALPHA / 2, prediction.df)) * se
        p_agree = float(test_arrays(c, se, prediction.df, *agree)[0])
        p_differ = float(test_arrays(c, se, prediction.df, *differ)[1])
    top, bottom = scale.back(np.array([c + width - b_low, c - width - b_high]))
    return Equivalence(paper - float(top), paper - float(bottom), p_agree, p_differ)
