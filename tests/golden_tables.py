"""The tables of the tiny end-to-end run, as stored golden files (tests/golden/).

Every CSV a study writes under ``results/`` and every optimisation trace (the data figures 2-4
are drawn from; the other figures are drawn from CSVs that are compared themselves) is kept
as a small CSV, so a refactor that changes a number, a count or a label is caught.

Regenerate the golden files on purpose, in the same commit as a change that is meant to move
numbers (a corrected metric, an author's convention adopted, another model), and review the
diff before committing it:

    ISOTROPY_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_tables.py -q
    git diff --stat tests/golden/
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_ENV = "ISOTROPY_UPDATE_GOLDEN"
# Floats may move in their last bits (another BLAS, another thread count); nothing else may.
# How far depends on the column's precision, and near zero on its scale: a value may move by
# SLACK x (|value| + the column's largest |value|). Float32 columns (PCA projections, trace
# columns kept as float32) get 64 float32 epsilons, 7.6e-6: the thread-count noise measured
# in pca_view.csv was up to 10 epsilons of the column's largest value (issue 21), and a real
# change of 1e-4 relative is 840 epsilons. Float64 columns, computed from float32 model
# outputs, keep 1e-6. Counts, strings and labels must be equal.
FLOAT32_SLACK = 64 * float(np.finfo(np.float32).eps)
FLOAT64_SLACK = 1e-6
# Files under results/ that are not tables of the science: the audit and what only names files.
IGNORED = ("results/audit.tsv",)


def result_tables(workdir: Path) -> dict[str, pd.DataFrame]:
    """Golden name (path under ``results/``, .csv) → table, for every CSV and trace of a run."""
    tables: dict[str, pd.DataFrame] = {}
    results = workdir / "results"
    for path in sorted(results.rglob("*.csv")):
        name = path.relative_to(workdir).as_posix()
        if name not in IGNORED:
            tables[name] = pd.read_csv(path)
    for path in sorted(results.rglob("trace.parquet")):
        name = path.relative_to(workdir).with_suffix(".csv").as_posix()
        tables[name] = pd.read_parquet(path)
    return tables


def write_golden(tables: dict[str, pd.DataFrame], root: Path = GOLDEN) -> None:
    """Replace the golden files by ``tables`` (stale ones removed)."""
    for old in root.rglob("*.csv"):
        old.unlink()
    for name, table in tables.items():
        dest = root / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(dest, index=False)


def golden_tables(root: Path = GOLDEN) -> dict[str, pd.DataFrame]:
    return {
        path.relative_to(root).as_posix(): pd.read_csv(path) for path in sorted(root.rglob("*.csv"))
    }


def is_float32(column: pd.Series) -> bool:
    """A float column stored as float32: by its dtype, or (a CSV has none) by its text, which
    pandas writes as the shortest digits that give back the float32 value."""
    if column.dtype == np.float32:
        return True
    if not pd.api.types.is_float_dtype(column):
        return False
    values = column.dropna().to_numpy(dtype=float)
    return len(values) > 0 and all(float(str(np.float32(v))) == v for v in values)


def float_differences(want: pd.Series, got: pd.Series, slack: float) -> str | None:
    """What is wrong with a float column (None: within ``slack`` of the column, see above)."""
    try:
        expected, actual = want.to_numpy(dtype=float), got.to_numpy(dtype=float)
    except ValueError as error:
        return str(error)
    # NaN and ±inf must match exactly; the slack applies to finite values only.
    special = ~np.isfinite(expected) | ~np.isfinite(actual)
    unequal = special & ~((expected == actual) | (np.isnan(expected) & np.isnan(actual)))
    if unequal.any():
        i = int(np.argmax(unequal))
        return f"{int(unequal.sum())} rows not finite on one side or unequal; first row {i}: {actual[i]!r}, golden {expected[i]!r}"
    both = ~special
    if not both.any():
        return None
    scale = float(np.max(np.abs(expected[both])))
    expected, actual = np.where(both, expected, 0.0), np.where(both, actual, 0.0)
    error = np.abs(actual - expected)
    allowed = slack * (np.abs(expected) + scale)
    outside = error > allowed
    if not outside.any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        i = int(np.argmax(np.where(outside, error / allowed, 0.0)))
    return (
        f"{int(outside.sum())} of {len(expected)} rows beyond {slack:.1e} x (|value| + {scale:.4g}); "
        f"worst row {i}: {actual[i]!r}, golden {expected[i]!r}"
    )


def differences(name: str, expected: pd.DataFrame, actual: pd.DataFrame) -> list[str]:
    """What differs between a golden table and the run's (empty when they agree)."""
    float32 = {column for column in actual.columns if actual[column].dtype == np.float32}
    # A round trip through CSV gives both sides the same dtypes (lists become their repr).
    actual = pd.read_csv(pd.io.common.StringIO(actual.to_csv(index=False)))
    if list(expected.columns) != list(actual.columns):
        return [f"{name}: columns {list(actual.columns)}, golden {list(expected.columns)}"]
    if len(expected) != len(actual):
        return [f"{name}: {len(actual)} rows, golden {len(expected)}"]
    problems = []
    for column in expected.columns:
        want, got = expected[column], actual[column]
        if pd.api.types.is_float_dtype(want) or pd.api.types.is_float_dtype(got):
            single = column in float32 or is_float32(want)
            problem = float_differences(want, got, FLOAT32_SLACK if single else FLOAT64_SLACK)
            if problem:
                precision = "float32" if single else "float64"
                problems.append(f"{name}, column {column!r} ({precision}): {problem}")
        elif not want.equals(got):
            rows = [
                i
                for i in range(len(want))
                if not (
                    want.iloc[i] == got.iloc[i] or (pd.isna(want.iloc[i]) and pd.isna(got.iloc[i]))
                )
            ]
            if rows:
                i = rows[0]
                problems.append(
                    f"{name}, column {column!r}, row {i}: {got.iloc[i]!r}, golden {want.iloc[i]!r} ({len(rows)} rows differ)"
                )
    return problems
