"""One measurement row: the long table's columns, a row built with NaN and '' for what is
absent, and the standard deviation across seeds."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

COLUMNS = [
    "study",
    "quantity",
    "setup",
    "paper_setup",
    "value",
    "spread",
    "seeds",
    "n",
    "k",
    "per_type_cap",
    "unit",
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
_NUMBERS = ("value", "spread", "seeds", "n", "k", "p_less", "p_greater")


def measurement(
    study: str, quantity: str, setup: str, paper_setup: str, value: Any = None, **rest: Any
) -> dict[str, Any]:
    """One measurement row; absent numbers are NaN, absent text ''."""
    row: dict[str, Any] = {column: "" for column in COLUMNS}
    row.update(study=study, quantity=quantity, setup=setup, paper_setup=paper_setup)
    for column in _NUMBERS:
        row[column] = math.nan
    row.update(per_seed=(), seed_free=False, moments=None)
    row["value"] = math.nan if value is None else float(value)
    for key, item in rest.items():
        if key not in row:
            raise KeyError(f"unknown measurement column {key!r}")
        row[key] = math.nan if item is None and key in _NUMBERS else item
    row["per_seed"] = tuple(float(v) for v in row["per_seed"])
    return row


def require_columns(table: pd.DataFrame, needed: set[str], what: str) -> None:
    """Refuse a result table (``what``, for the message) that lacks a column of ``needed``."""
    if missing := needed - set(table.columns):
        raise ValueError(f"{what} lacks columns {sorted(missing)}; found {list(table.columns)}")


def seed_std(values: pd.Series) -> float:
    """Standard deviation across seeds (ddof 1), NaN with fewer than two."""
    values = values.dropna()
    return float(values.std(ddof=1)) if len(values) >= 2 else math.nan


def over_seeds(runs: pd.DataFrame, column: str) -> dict[str, Any]:
    """A seeded quantity over ``runs`` (rows of one setup) as :func:`measurement` takes it: the
    mean (``value``), the standard deviation across rows (``spread``) and each seed's mean
    (``per_seed``; the one mean when ``runs`` has no seed column)."""
    per_seed = (runs[column].mean(),)
    if "seed" in runs:
        per_seed = tuple(runs.groupby("seed")[column].mean())
    return {"value": runs[column].mean(), "spread": seed_std(runs[column]), "per_seed": per_seed}
