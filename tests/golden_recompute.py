"""Columns that amplify last-bit noise, checked by recomputing them from the run's own data.

tests/golden/precision.yaml marks such columns ``recomputed:NAME``: a percentile of 1,000
resampled correlations, or a rank correlation, moves by far more than its inputs when they move
in their last bits (another thread count, another BLAS), so a golden value cannot guard it
across machines. Instead the checker NAME below recomputes every such column from the run's
primary data (its traces, which are themselves compared with golden files at float32 precision)
with an implementation independent of the package's, and requires agreement to ``TOLERANCE``.

A checker is ``f(workdir, name, table, columns, config) -> list of problems``; it must raise for
a column it does not know how to recompute, so a newly declared column cannot pass unchecked.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

TOLERANCE = 1e-12
# The study folder of each correlation table (its traces: <study>/<encoder>/<dataset>/seed<k>/).
CORRELATION_TABLES = {
    "results/main/correlations.csv": "results/main",
    "results/glue/table3.csv": "results/glue",
}


def _traces(workdir: Path, study: str, encoder: str, dataset: str) -> list[pd.DataFrame]:
    """The setup's traces, one per seed in seed order, each in step order, metrics defined."""
    runs = []
    for path in (workdir / study / encoder / dataset).glob("seed*/trace.parquet"):
        trace = pd.read_parquet(path).dropna(subset=["isoscore", "silhouette"])
        runs.append(trace.sort_values("step"))
    return sorted(runs, key=lambda trace: int(trace["seed"].iloc[0]))


def _pearson_spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """scipy's Pearson r and Spearman rho (NaN where undefined: < 3 points or constant)."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    return float(stats.pearsonr(x, y).statistic), float(stats.spearmanr(x, y).statistic)


def _resampled(runs: list[pd.DataFrame], bootstrap: dict) -> np.ndarray:
    """(resamples, 2) Pearson and Spearman of each two-stage resample: seeds with replacement
    when there are several, then moving blocks of recorded steps within each drawn seed, drawn
    from numpy's generator seeded with ``bootstrap.seed`` in the documented order (config
    ``bootstrap``, README "Confidence intervals")."""
    rng = np.random.default_rng(int(bootstrap.get("seed", 0)))
    x = [run["isoscore"].to_numpy(dtype=np.float64) for run in runs]
    y = [run["silhouette"].to_numpy(dtype=np.float64) for run in runs]
    values = []
    for _ in range(int(bootstrap.get("resamples", 1000))):
        seeds = rng.integers(0, len(runs), size=len(runs)) if len(runs) > 1 else [0]
        xs, ys = [], []
        for seed in seeds:
            n = len(x[seed])
            block = max(1, min(bootstrap.get("block_length") or math.ceil(n ** (1 / 3)), n))
            starts = rng.integers(0, n - block + 1, size=-(-n // block))
            steps = np.concatenate([np.arange(s, s + block) for s in starts])[:n]
            xs.append(x[seed][steps])
            ys.append(y[seed][steps])
        values.append(_pearson_spearman(np.concatenate(xs), np.concatenate(ys)))
    return np.array(values)


def _intervals(runs: list[pd.DataFrame], bootstrap: dict) -> dict[str, float]:
    values = _resampled(runs, bootstrap)
    level = float(bootstrap.get("level", 0.95))
    bounds = {}
    for i, name in enumerate(("pearson_r", "spearman_rho")):
        finite = np.sort(values[np.isfinite(values[:, i]), i])
        if 2 * len(finite) < len(values):
            low = high = math.nan
        else:  # numpy's default (linear) percentile, written out
            low, high = (_linear_quantile(finite, q) for q in ((1 - level) / 2, (1 + level) / 2))
        bounds[f"{name}_ci_low"], bounds[f"{name}_ci_high"] = low, high
    return bounds


def _linear_quantile(ordered: np.ndarray, q: float) -> float:
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return float(ordered[below] + (position - below) * (ordered[above] - ordered[below]))


def correlations(
    workdir: Path, name: str, table: pd.DataFrame, columns: list[str], config: dict
) -> list[str]:
    """Pearson r, Spearman rho and their bootstrap bounds of a correlation table, per row."""
    known = {"pearson_r", "spearman_rho"} | {
        f"{s}_ci_{end}" for s in ("pearson_r", "spearman_rho") for end in ("low", "high")
    }
    unknown = sorted(set(columns) - known)
    if unknown or name not in CORRELATION_TABLES:
        raise ValueError(f"golden_recompute.correlations cannot recompute {name} {unknown}")
    problems = []
    for row in table.to_dict("records"):
        runs = _traces(workdir, CORRELATION_TABLES[name], row["encoder"], row["dataset"])
        if row["scope"] != "all":
            runs = [run for run in runs if f"seed{int(run['seed'].iloc[0])}" == row["scope"]]
        pooled = pd.concat(runs)
        want = dict(
            zip(("pearson_r", "spearman_rho"), _pearson_spearman(*_xy(pooled)), strict=True)
        )
        if any(column.endswith(("_low", "_high")) for column in columns):
            want.update(_intervals(runs, config.get("bootstrap") or {}))
        for column in columns:
            got, expected = float(row[column]), want[column]
            if not ((math.isnan(got) and math.isnan(expected)) or abs(got - expected) <= TOLERANCE):
                problems.append(
                    f"{name}, {row['encoder']}/{row['dataset']} {row['scope']}, column {column!r}: "
                    f"{got!r}, recomputed from the run's traces {expected!r}"
                )
    return problems


def _xy(trace: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return trace["isoscore"].to_numpy(np.float64), trace["silhouette"].to_numpy(np.float64)


CHECKERS: dict[str, Callable[..., list[str]]] = {"correlations": correlations}
