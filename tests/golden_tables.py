"""The tables of the tiny end-to-end run, as stored golden files (tests/golden/).

Every CSV a study writes under ``results/`` and every optimisation trace (the data figures 2-4
are drawn from; the other figures are drawn from CSVs that are compared themselves) is kept
as a small CSV, so a refactor that changes a number, a count or a label is caught.

Each column is compared as tests/golden/precision.yaml declares it, by where its numbers come
from: exact, float32 or float64 tolerance, or, for statistics that amplify last-bit noise
(percentiles of resamples, rank orders), recomputed from the run's own primary data by
tests/golden_recompute.py instead of compared. A column the declaration lacks is an error.

Regenerate the golden files on purpose, in the same commit as a change that is meant to move
numbers (a corrected metric, an author's convention adopted, another model), and review the
diff before committing it:

    ISOTROPY_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_tables.py -q
    git diff --stat tests/golden/
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

GOLDEN = Path(__file__).resolve().parent / "golden"
PRECISION = GOLDEN / "precision.yaml"
# How the golden files were written (ISOTROPY_TINY_RUN_CORES / _THREADS): tests compare runs made
# otherwise against them (docs/testing.md, "Golden tables").
WRITTEN_WITH = GOLDEN / "written_with.yaml"
UPDATE_ENV = "ISOTROPY_UPDATE_GOLDEN"
KINDS = ("exact", "float32", "float64")
RECOMPUTED = "recomputed:"
# Files under results/ that are not tables of rule all's science: the audit, and a preview (not
# part of rule all) that a kept run folder (ISOTROPY_TINY_RUN_DIR) may hold.
IGNORED = ("results/audit.tsv", "results/preview/")


@dataclass(frozen=True)
class Precision:
    """The declaration (tests/golden/precision.yaml): table glob → column glob → kind."""

    tables: dict[str, dict[str, str]]
    tolerances: dict[str, float]

    @classmethod
    def load(cls, path: Path = PRECISION) -> Precision:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        tolerances = {kind: float(data["tolerances"][kind]) for kind in ("float32", "float64")}
        tables = {
            str(t): {str(c): str(k) for c, k in cols.items()} for t, cols in data["tables"].items()
        }
        for table, columns in tables.items():
            for column, kind in columns.items():
                if kind not in KINDS and not (
                    kind.startswith(RECOMPUTED) and kind[len(RECOMPUTED) :]
                ):
                    raise ValueError(
                        f"{path}: table {table!r}, column {column!r}: unknown kind {kind!r} "
                        f"(one of {', '.join(KINDS)}, {RECOMPUTED}NAME)"
                    )
        return cls(tables, tolerances)

    def kinds(self, name: str, columns: list[str]) -> dict[str, str]:
        """Column → kind for the golden table ``name``; a ValueError naming what is undeclared."""
        entry = next((cols for glob, cols in self.tables.items() if fnmatch(name, glob)), None)
        if entry is None:
            raise ValueError(f"{PRECISION}: no entry under `tables` matches {name}: declare it")
        kinds, undeclared = {}, []
        for column in columns:
            kind = next((k for glob, k in entry.items() if fnmatch(column, glob)), None)
            if kind is None:
                undeclared.append(column)
            kinds[column] = kind
        if undeclared:
            raise ValueError(
                f"{PRECISION}: {name}: columns {undeclared} are not declared: add them with their "
                "kind"
            )
        return kinds


def result_tables(workdir: Path) -> dict[str, pd.DataFrame]:
    """Golden name (path under ``results/``, .csv) → table, for every CSV and trace of a run."""
    found = [*(workdir / "results").rglob("*.csv"), *(workdir / "results").rglob("trace.parquet")]
    tables = {}
    for path in sorted(found):
        name = path.relative_to(workdir).with_suffix(".csv").as_posix()
        if not name.startswith(IGNORED):
            tables[name] = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    return tables


def write_golden(tables: dict[str, pd.DataFrame], root: Path = GOLDEN) -> None:
    """Replace the golden files by ``tables`` (stale ones removed)."""
    for old in root.rglob("*.csv"):
        old.unlink()
    for name, table in tables.items():
        dest = root / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(dest, index=False)
    state = "\n".join(f"{k}: {v!r}" for k, v in machine_state().items())
    (root / WRITTEN_WITH.name).write_text(
        "# The environment of the tiny run that wrote these golden files "
        "(tests/golden_tables.py).\n" + state + "\n",
        encoding="utf-8",
    )


def golden_tables(root: Path = GOLDEN) -> dict[str, pd.DataFrame]:
    return {
        path.relative_to(root).as_posix(): pd.read_csv(path) for path in sorted(root.rglob("*.csv"))
    }


def float_differences(want: pd.Series, got: pd.Series, slack: float) -> str | None:
    """What is wrong with a float column (None: within ``slack`` of the column, see above)."""
    try:
        expected, actual = want.to_numpy(dtype=float), got.to_numpy(dtype=float)
    except ValueError as error:
        return str(error)
    # |actual - expected| <= slack x (|expected| + the column's largest finite |value|); NaN
    # and ±inf must match exactly
    scale = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0))
    close = np.isclose(actual, expected, rtol=slack, atol=slack * scale, equal_nan=True)
    if close.all():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.abs(actual - expected) / (slack * (np.abs(expected) + scale))
    i = int(np.argmax(np.where(close, 0.0, np.nan_to_num(error, nan=np.inf))))
    return (
        f"{int((~close).sum())} of {len(expected)} rows beyond {slack:.1e} x (|value| + "
        f"{scale:.4g}); worst row {i}: {actual[i]!r}, golden {expected[i]!r}"
    )


def differences(
    name: str, expected: pd.DataFrame, actual: pd.DataFrame, precision: Precision | None = None
) -> list[str]:
    """What differs between a golden table and the run's (empty when they agree), each column
    compared as ``precision`` declares it (recomputed columns are left to
    tests/golden_recompute.py).
    A ValueError where the declaration misses the table or one of its columns."""
    precision = precision or Precision.load()
    # A round trip through CSV gives both sides the same dtypes (lists become their repr).
    actual = pd.read_csv(pd.io.common.StringIO(actual.to_csv(index=False)))
    if list(expected.columns) != list(actual.columns):
        return [f"{name}: columns {list(actual.columns)}, golden {list(expected.columns)}"]
    kinds = precision.kinds(name, list(expected.columns))
    if len(expected) != len(actual):
        return [f"{name}: {len(actual)} rows, golden {len(expected)}"]
    problems = []
    for column, kind in kinds.items():
        want, got = expected[column], actual[column]
        if kind.startswith(RECOMPUTED):
            continue
        if kind in precision.tolerances:
            problem = float_differences(want, got, precision.tolerances[kind])
            if problem:
                problems.append(f"{name}, column {column!r} ({kind}): {problem}")
            continue
        rows = np.flatnonzero(~((want == got) | (want.isna() & got.isna())))
        if len(rows):
            i = rows[0]
            problems.append(
                f"{name}, column {column!r}, row {i}: {got.iloc[i]!r}, golden {want.iloc[i]!r} "
                f"({len(rows)} rows differ)"
            )
    return problems


def recomputed_columns(
    name: str, columns: list[str], precision: Precision | None = None
) -> dict[str, list[str]]:
    """Checker name → the columns of table ``name`` it must recompute."""
    kinds = (precision or Precision.load()).kinds(name, columns)
    checkers: dict[str, list[str]] = {}
    for column, kind in kinds.items():
        if kind.startswith(RECOMPUTED):
            checkers.setdefault(kind[len(RECOMPUTED) :], []).append(column)
    return checkers


def machine_state() -> dict[str, str]:
    """What the tiny run's thread count depends on (tests/conftest.py)."""
    return {
        name: os.environ.get(name, "")
        for name in ("ISOTROPY_TINY_RUN_CORES", "ISOTROPY_TINY_RUN_THREADS")
    }
