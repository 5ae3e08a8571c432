"""Every quantity the claims page and the paper comparison judge, measured once: one row per
quantity × setup (:data:`COLUMNS`), and the tests over seeds the studies' measurements share."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from isotropy import paths
from isotropy.standins import StandIns
from isotropy.traces import read_result_table, read_traces
from isotropy.verdicts.learning import not_learned_note

COLUMNS = (
    "study quantity setup paper_setup value seeds n k per_type_cap convention stand_in evidence "
    "note missing not_learned per_seed seed_free p_less p_greater moments protocol"
).split()
_NUMBERS = ("value", "seeds", "n", "k", "p_less", "p_greater")
Row = dict[str, Any]  # one measurement: :data:`COLUMNS`
Config = Mapping[str, Any]
Measures = Mapping[str | tuple[str, ...], Callable[..., list[Row]]]
_EMPTY: Row = {c: math.nan if c in _NUMBERS else "" for c in COLUMNS}
_EMPTY.update(per_seed=(), seed_free=False, moments=None)


def measurement(study: str, quantity: str, setup: str, paper_setup: str, value=None, **rest) -> Row:
    """One measurement row (:data:`COLUMNS`); a number given as None is NaN."""
    if unknown := set(rest) - set(COLUMNS):
        raise KeyError(f"unknown measurement columns {sorted(unknown)}")
    given = dict(rest, study=study, quantity=quantity, setup=setup, paper_setup=paper_setup)
    row = _EMPTY | {k: math.nan if v is None and k in _NUMBERS else v for k, v in given.items()}
    row["value"] = math.nan if value is None else float(value)
    row["per_seed"] = tuple(float(v) for v in row["per_seed"])
    return row


def at_setup(study: str, setup: str, paper_setup: str = "", **fields: Any) -> Callable[..., Row]:
    """:func:`measurement` with one setup's fields bound (the paper's setup: ours unless named)."""
    return partial(measurement, study, setup=setup, paper_setup=paper_setup or setup, **fields)


def over_seeds(runs: pd.DataFrame, column: str, scale: float = 1) -> Row:
    """The mean of ``column`` × ``scale`` over one setup's ``runs``, per seed and over all."""
    values = scale * runs[column]
    if "seed" not in runs:
        return {"value": values.mean(), "per_seed": (values.mean(),), "seeds": None}
    per_seed = tuple(values.groupby(runs["seed"]).mean())
    return {"value": values.mean(), "per_seed": per_seed, "seeds": len(per_seed)}


SEED_SPREAD_LIMIT = 0.05  # "negligible": the seeds' std below 5% of the mean change
# The one-sided levels a at which the spread test's bounds are evaluated: log-spaced, so the
# smallest a at which a bound holds is found to 1% (rounded up: the p-value errs large)
_LEVELS = np.geomspace(1e-12, 0.5, 2600)


def _p_value(holds: np.ndarray) -> float:
    """Twice the smallest level at which a bound holds (it holds from there on); 1 if never."""
    found = np.flatnonzero(holds)
    return min(1.0, 2 * float(_LEVELS[found[0]])) if found.size else 1.0


def spread_test(final, change, limit: float = SEED_SPREAD_LIMIT) -> tuple[float, float]:
    """(p that the seeds' std of the final value is below ``limit`` × |mean change|, p above),
    from the std's (chi-square) and the change's (t) bounds at each level a: p = 2a (union)."""
    final, change = np.asarray(final, np.float64), np.asarray(change, np.float64)
    n, a = final.size, _LEVELS
    if n < 2:
        return math.nan, math.nan
    half = stats.t.ppf(1 - a / 2, n - 1) * change.std(ddof=1) / math.sqrt(n)
    lower_s, upper_s = final.std(ddof=1) * np.sqrt((n - 1) / stats.chi2.ppf([1 - a, a], n - 1))
    low_mean, high_mean = np.maximum(0.0, abs(change.mean()) - half), abs(change.mean()) + half
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.where(upper_s == 0, 0.0, upper_s / low_mean)
        lower = lower_s / high_mean
    return _p_value(upper < limit), _p_value(lower > limit)


def one_sided(test: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, float]:
    """(p below, p above) of a scipy test that takes ``alternative`` (a t-test over seeds)."""
    less, greater = (test(*args, alternative=a, **kwargs).pvalue for a in ("less", "greater"))
    return float(less), float(greater)


def seed_test(
    treated: pd.DataFrame, baseline: pd.DataFrame, column: str, centre: float = 0.0
) -> Row:
    """A row's mean difference treated − baseline and one-sided p below / above ``centre``: a
    paired t-test over the seeds both have, else Welch's over the two groups; NaN with one seed."""
    means = [runs.groupby("seed")[column].mean() for runs in (treated, baseline)]
    both = means[0].to_frame("t").join(means[1].rename("b"), how="inner")
    d = (both["t"] - both["b"]).to_numpy(dtype=np.float64)
    if len(d) >= 2:
        value, seeds, p = float(d.mean()), len(d), one_sided(stats.ttest_1samp, d, centre)
    else:
        t, b = treated[column].dropna().to_numpy(), baseline[column].dropna().to_numpy()
        value, seeds, p = float(t.mean() - b.mean()), min(len(t), len(b)), (math.nan, math.nan)
        if seeds >= 2:
            p = one_sided(stats.ttest_ind, t - centre, b, equal_var=False)
    return {"value": value, "seeds": seeds, "p_less": p[0], "p_greater": p[1], "per_seed": d}


def fine_tuned_not_learned(*groups: pd.DataFrame, column: str = "accuracy") -> str:
    """The learning guard's note on groups of fine-tuning runs ('' when each learned)."""
    keys = ("majority_baseline", "eval_sentences")
    notes = (
        not_learned_note(r[column], *(r.get(k, []) for k in keys)) for r in groups if column in r
    )
    return joined(*notes)


def measure(
    tables: Mapping[str, pd.DataFrame | None], config: Config, stand: StandIns, measures: Measures
) -> pd.DataFrame:
    """Every measurement of this run (``measures``: input name(s) -> their tables -> rows)."""
    rows: list[Row] = []
    for names, measure_tables in measures.items():
        read = [tables.get(name) for name in ((names,) if isinstance(names, str) else names)]
        if any(table is not None for table in read):
            rows += measure_tables(*read, config, stand)
    return pd.DataFrame(rows, columns=COLUMNS)


def load_tables(
    inputs: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]],
    run_keys: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, pd.DataFrame]:
    """The result tables of ``inputs``, read (traces tagged with their keys)."""
    tables = {}
    for name, value in inputs.items():
        if name.endswith("_traces"):
            study = name.removesuffix("_traces")
            keys = run_keys[study]
            files = [str(value)] if isinstance(value, (str, os.PathLike)) else list(map(str, value))
            if len(keys) != len(files):
                raise ValueError(f"{study}: {len(keys)} run keys for {len(files)} traces")
            tables[name] = read_traces(
                files, [{k: v for k, v in key.items() if k != "seed"} for key in keys]
            )
        elif name not in ("published", "protocol_effects"):  # configuration, not results
            tables[name] = read_result_table(Path(str(value)))
    return tables


def as_preview(table: pd.DataFrame, stamp: str) -> pd.DataFrame:
    """A preview's verdict table: main's rows, evidence in the preview's folder, ``stamp`` first."""
    rows = table[table["study"] == "main"].reset_index(drop=True)
    if "evidence" in rows:
        main, preview = paths.study_file("", "main"), paths.study_file("", "preview")
        rows["evidence"] = rows["evidence"].astype(str).str.replace(main, preview, regex=False)
    rows.insert(0, "preview", stamp)
    return rows


def joined(*parts: str) -> str:
    """The non-empty ``parts``, '; '-separated (a row's note, its stand-ins)."""
    return "; ".join(part for part in parts if part)
