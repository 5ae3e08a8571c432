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

import pandas as pd

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_ENV = "ISOTROPY_UPDATE_GOLDEN"
# Floats may move in their last bits (another BLAS, another thread count); nothing else may.
FLOAT_RTOL = 1e-6
FLOAT_ATOL = 1e-9
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


def differences(name: str, expected: pd.DataFrame, actual: pd.DataFrame) -> list[str]:
    """What differs between a golden table and the run's (empty when they agree)."""
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
            try:
                pd.testing.assert_series_equal(
                    got.astype(float),
                    want.astype(float),
                    check_exact=False,
                    rtol=FLOAT_RTOL,
                    atol=FLOAT_ATOL,
                    check_names=False,
                )
            except (AssertionError, ValueError) as error:
                problems.append(f"{name}, column {column!r}: {str(error).splitlines()[-3:]}")
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
