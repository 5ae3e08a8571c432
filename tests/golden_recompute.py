"""Columns that amplify last-bit noise, checked by recomputing them from the run's own data.

tests/golden/precision.yaml marks them ``recomputed:NAME``: a rank correlation (and what is
computed from one) moves by far more than its inputs' last bits (another thread count or BLAS),
so no golden value guards it across machines. The checker NAME below recomputes each such column
from the run's primary data (its traces, compared at float32 themselves) independently of the
package, to ``TOLERANCE``. A checker is ``f(workdir, name, table, columns, config) -> problems``
and raises for a column it cannot recompute, so a newly declared one cannot pass unchecked."""

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


def _spearman(trace: pd.DataFrame) -> float:
    """scipy's Spearman rho of IsoScore and silhouette (NaN where undefined: < 3 points or
    constant)."""
    x, y = (trace[metric].to_numpy(np.float64) for metric in ("isoscore", "silhouette"))
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def _unit(value: float) -> float:
    """±1 where a correlation is ±1 up to rounding (1e-12), as the tables write it."""
    if math.isfinite(value) and abs(abs(value) - 1) < 1e-12:
        return math.copysign(1.0, value)
    return value


def _spearman_over_seeds(values: list[float]) -> dict[str, float]:
    """Spearman's rho over seeds, computed here without the package: the median seed and the
    lowest and highest seed (isotropy.summaries.spearman_summary)."""
    finite = sorted(v for v in values if math.isfinite(v))
    median = _unit(float(np.median(finite))) if finite else math.nan
    low, high = (_unit(finite[0]), _unit(finite[-1])) if len(finite) >= 2 else (math.nan,) * 2
    return {
        "spearman_rho_seed_mean": median,
        "spearman_rho_seed_low": low,
        "spearman_rho_seed_high": high,
    }


def _seed_interval(name: str, values: list[float], limit: float, level: float) -> dict[str, float]:
    """A correlation over seeds: mean Fisher z and scipy's one-sample t confidence interval of
    the per-seed z (clipped to ±``limit``), mapped back with tanh."""
    finite = np.array([v for v in values if math.isfinite(v)], dtype=np.float64)
    z = np.arctanh(np.clip(finite, -limit, limit))
    out = {f"{name}_seed_{end}": math.nan for end in ("mean", "low", "high")}
    if len(z):
        out[f"{name}_seed_mean"] = _unit(float(np.tanh(z.mean())))
    if len(z) >= 2:
        ci = stats.ttest_1samp(z, 0.0).confidence_interval(level)
        out[f"{name}_seed_low"] = _unit(float(np.tanh(ci.low)))
        out[f"{name}_seed_high"] = _unit(float(np.tanh(ci.high)))
    return out


def correlations(
    workdir: Path, name: str, table: pd.DataFrame, columns: list[str], config: dict
) -> list[str]:
    """Spearman rho, and both correlations' intervals over seeds, of a correlation table, per row.

    With 2 seeds the t-quantile (12.7) multiplies the seeds' difference: Pearson's interval moves
    by more than float32 noise of its traces allows (1.9e-5 across thread counts), so it is
    recomputed, from the per-seed r the table holds (float32 traces: scipy's Pearson of them as
    float64 differs from the package's in the 8th digit, which the interval would amplify)."""
    known = {"spearman_rho"} | {
        f"{name}_seed_{end}"
        for name in ("spearman_rho", "pearson_r")
        for end in ("mean", "low", "high")
    }
    unknown = sorted(set(columns) - known)
    if unknown or name not in CORRELATION_TABLES:
        raise ValueError(f"golden_recompute.correlations cannot recompute {name} {unknown}")
    problems = []
    for row in table.to_dict("records"):
        runs = _traces(workdir, CORRELATION_TABLES[name], row["encoder"], row["dataset"])
        if row["scope"] != "all":
            runs = [run for run in runs if f"seed{int(run['seed'].iloc[0])}" == row["scope"]]
        want = {"spearman_rho": _unit(_spearman(pd.concat(runs)))}
        if row["scope"] == "all":
            per_seed = [_unit(_spearman(run)) for run in runs]
            want.update(_spearman_over_seeds(per_seed))
            # Pearson's per-seed r as the table writes them (its seed<k> rows, or with one seed
            # the pooled row), themselves compared with their golden values at float32.
            same = table[
                (table["encoder"] == row["encoder"]) & (table["dataset"] == row["dataset"])
            ]
            seeds = same[same["scope"] != "all"]["pearson_r"].tolist() or [row["pearson_r"]]
            want.update(_seed_interval("pearson_r", seeds, 1 - 1e-12, 0.95))
        for column in columns:
            got, expected = float(row[column]), want.get(column, math.nan)
            if not ((math.isnan(got) and math.isnan(expected)) or abs(got - expected) <= TOLERANCE):
                problems.append(
                    f"{name}, {row['encoder']}/{row['dataset']} {row['scope']}, column {column!r}: "
                    f"{got!r}, recomputed from the run's traces {expected!r}"
                )
    return problems


def layer_isotropy_signs(
    workdir: Path, name: str, table: pd.DataFrame, columns: list[str], config: dict
) -> list[str]:
    """I(W) with numpy's eigenvector signs is min/max of Z(c) over one sign of each eigenvector c;
    the sign-free I(W) (compared with its golden value) is min/max over both signs, a superset.
    So whatever signs the BLAS picks, sign-free <= I(W) <= 1: the part of the column that is
    reproducible, checked row by row."""
    if set(columns) != {"isotropy"}:
        raise ValueError(f"golden_recompute.layer_isotropy_signs cannot recompute {name} {columns}")
    problems = []
    for row in table.to_dict("records"):
        value, low = float(row["isotropy"]), float(row["isotropy_sign_free"])
        if not (low * (1 - 1e-6) <= value <= 1 + 1e-12):
            problems.append(
                f"{name}, {row['model']} layer {row['layer']}: I(W) with numpy's signs {value!r} "
                f"is outside [sign-free {low!r}, 1]"
            )
    return problems


def condition_numbers(
    workdir: Path, name: str, table: pd.DataFrame, columns: list[str], config: dict
) -> list[str]:
    """The centred condition number: its smallest kept singular value is a small difference of
    float32 states, so it moves with their last bits (another thread count). Recomputed with
    numpy (``matrix_rank`` with float32's tolerance, then ``cond`` of the centred states on
    their numerical range) from the run's own token states, row by row; a static row (one
    sampled vector per word, not stored) must equal its own table's, compared at float32."""
    if set(columns) != {"condition_number", "numerical_rank"}:
        raise ValueError(f"golden_recompute.condition_numbers cannot recompute {name} {columns}")
    problems = []
    for row in table.to_dict("records"):
        if row["kind"] == "static":
            own = workdir / f"results/geometry/static/{row['model']}/seed{row['seed']}/cosine.csv"
            expected = pd.read_csv(own).iloc[0]
            got = (row["condition_number"], row["numerical_rank"])
            if got != (expected["condition_number"], expected["numerical_rank"]):
                problems.append(f"{name}, static {row['model']}: {got!r} is not {own}'s")
            continue
        states = workdir / f"resources/geometry/{row['model']}/{row['corpus']}/token_embeddings.npz"
        layer = np.load(states)["layers"][int(row["layer"])]
        x = layer.astype(np.float64) - layer.astype(np.float64).mean(axis=0)
        tolerance = np.linalg.norm(x, 2) * max(x.shape) * np.finfo(np.float32).eps
        rank = int(np.linalg.matrix_rank(x, tol=tolerance))
        _, _, vt = np.linalg.svd(x, full_matrices=False)
        value = float(np.linalg.cond(x @ vt[:rank].T))
        if rank != row["numerical_rank"] or not math.isclose(
            value, row["condition_number"], rel_tol=TOLERANCE
        ):
            problems.append(
                f"{name}, {row['model']} layer {row['layer']}: condition number "
                f"{row['condition_number']!r} (rank {row['numerical_rank']}), recomputed from "
                f"the run's token states {value!r} (rank {rank})"
            )
    return problems


CHECKERS: dict[str, Callable[..., list[str]]] = {
    "correlations": correlations,
    "layer_isotropy_signs": layer_isotropy_signs,
    "condition_numbers": condition_numbers,
}
