"""Every quantity the two pages judge, measured once from this run's result tables: one long
table, one row per quantity × setup (:data:`COLUMNS`; :func:`measurement` builds a row, NaN and
'' for what is absent), which both the claims page and the comparison with the papers read:
``value`` (NaN, ``missing`` saying why, when it cannot be measured), ``per_seed`` (where the
verdict needs them), ``seed_free``, ``p_less`` / ``p_greater`` (raw one-sided p-values: the pages
adjust them), ``moments`` (each seed's sums for a pooled r), ``protocol``, ``paper_setup`` (what
:mod:`isotropy.verdicts.comparison` joins on).
Here too what the studies' measurements share: the tests over seeds (the seeds' spread against
the mean change, a difference between two groups of runs, the learning guard's note)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.verdicts.learning import not_learned_note

COLUMNS = [
    "study",
    "quantity",
    "setup",
    "paper_setup",
    "value",
    "seeds",
    "n",
    "k",
    "per_type_cap",
    "convention",
    "stand_in",
    "evidence",
    "note",
    "missing",
    "not_learned",
    "per_seed",
    "seed_free",
    "p_less",
    "p_greater",
    "moments",
    "protocol",
]
_NUMBERS = ("value", "seeds", "n", "k", "p_less", "p_greater")


def measurement(
    study: str, quantity: str, setup: str, paper_setup: str, value: Any = None, **rest: Any
) -> dict[str, Any]:
    """One measurement row; absent numbers are NaN, absent text ''."""
    if unknown := set(rest) - set(COLUMNS):
        raise KeyError(f"unknown measurement columns {sorted(unknown)}")
    row: dict[str, Any] = {c: math.nan if c in _NUMBERS else "" for c in COLUMNS}
    row.update(per_seed=(), seed_free=False, moments=None)
    row.update(study=study, quantity=quantity, setup=setup, paper_setup=paper_setup, value=value)
    row.update(
        {key: math.nan if item is None and key in _NUMBERS else item for key, item in rest.items()}
    )
    row["value"] = math.nan if value is None else float(value)
    row["per_seed"] = tuple(float(v) for v in row["per_seed"])
    return row


def over_seeds(runs: pd.DataFrame, column: str) -> dict[str, Any]:
    """A seeded quantity over ``runs`` (rows of one setup) as :func:`measurement` takes it: the
    mean (``value``) and each seed's mean
    (``per_seed``; the one mean when ``runs`` has no seed column)."""
    per_seed = runs.groupby("seed")[column].mean() if "seed" in runs else [runs[column].mean()]
    return {"value": runs[column].mean(), "per_seed": tuple(per_seed)}


SEED_SPREAD_LIMIT = 0.05  # "negligible": the seeds' std below 5% of the mean change


# The one-sided levels a at which the spread test's bounds are evaluated: log-spaced, so the
# smallest a at which a bound holds is found to 1% (rounded up: the p-value errs large)
_LEVELS = np.geomspace(1e-12, 0.5, 2600)


def _ratio_bounds(final: np.ndarray, change: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) confidence bounds of std(final) / |mean(change)| at each level a of
    :data:`_LEVELS`: the std's at one-sided a (chi-square) over |mean|'s at a (t, two-sided, so
    either sign of the mean)."""
    n, a = final.size, _LEVELS
    s = final.std(ddof=1)
    half = stats.t.ppf(1 - a / 2, n - 1) * change.std(ddof=1) / math.sqrt(n)
    upper_s = s * np.sqrt((n - 1) / stats.chi2.ppf(a, n - 1))
    lower_s = s * np.sqrt((n - 1) / stats.chi2.ppf(1 - a, n - 1))
    low_mean, high_mean = np.maximum(0.0, abs(change.mean()) - half), abs(change.mean()) + half
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.where(upper_s == 0, 0.0, upper_s / low_mean)
        lower = lower_s / high_mean
    return upper, lower


def _p_value(holds: np.ndarray) -> float:
    """Twice the smallest level at which a bound holds (it holds from there on); 1 if never."""
    found = np.flatnonzero(holds)
    return min(1.0, 2 * float(_LEVELS[found[0]])) if found.size else 1.0


def spread_test(final, change, limit: float = SEED_SPREAD_LIMIT) -> tuple[float, float]:
    """(p that the seeds' std of the final value is below ``limit`` × |mean change|, p that it
    is above) over one metric's seeds: the ratio's confidence bounds, the std's (chi-square) and
    the mean change's (t) each at level a, so each p = 2a bounds its error (a union bound).
    NaN with fewer than two seeds. A test of spread against the effect, not a point ratio."""
    final = np.asarray(final, dtype=np.float64)
    change = np.asarray(change, dtype=np.float64)
    if final.size < 2:
        return math.nan, math.nan
    upper, lower = _ratio_bounds(final, change)
    return _p_value(upper < limit), _p_value(lower > limit)


def one_sided(test: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, float]:
    """(p below, p above) of a scipy test that takes ``alternative`` (a t-test over seeds)."""
    less, greater = (
        float(test(*args, alternative=a, **kwargs).pvalue) for a in ("less", "greater")
    )
    return less, greater


def paired_differences(
    treated: pd.DataFrame, baseline: pd.DataFrame, column: str
) -> tuple[float, ...]:
    """Each seed's treated − baseline (the seeds both have, in seed order): the direction each
    seed goes, which the claims' rule counts."""
    means = [runs.groupby("seed")[column].mean() for runs in (treated, baseline)]
    both = means[0].to_frame("t").join(means[1].rename("b"), how="inner")
    return tuple(float(d) for d in both["t"] - both["b"])


def seed_test(
    treated: pd.DataFrame, baseline: pd.DataFrame, column: str
) -> tuple[float, int, float, float]:
    """(mean difference treated − baseline, seeds, one-sided p below 0, p above 0): a paired
    t-test over the seeds both have, else Welch's over the two groups; p NaN with one seed."""
    d = np.asarray(paired_differences(treated, baseline, column))
    if len(d) >= 2:
        return float(d.mean()), len(d), *one_sided(stats.ttest_1samp, d, 0.0)
    t, b = treated[column].dropna().to_numpy(), baseline[column].dropna().to_numpy()
    diff = float(t.mean() - b.mean())
    if min(len(t), len(b)) < 2:
        return diff, min(len(t), len(b)), math.nan, math.nan
    return diff, min(len(t), len(b)), *one_sided(stats.ttest_ind, t, b, equal_var=False)


def fine_tuned_not_learned(*groups: pd.DataFrame, column: str = "accuracy") -> str:
    """The guard's note when a group of fine-tuning runs (one setup's seeds; columns ``column``,
    majority_baseline, eval_sentences) is not above its majority baseline
    (:func:`isotropy.verdicts.learning.learning_test`) or has none recorded (missing or NaN: the
    guard cannot tell), '' when every group learned or lacks ``column`` (a metric other than
    accuracy)."""
    notes = [
        not_learned_note(
            runs[column], runs.get("majority_baseline", []), runs.get("eval_sentences", [])
        )
        for runs in groups
        if column in runs  # another metric than accuracy: no majority baseline to beat
    ]
    return "; ".join(note for note in notes if note)
