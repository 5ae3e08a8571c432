"""What each published number is, declared beside it (config/published_values.csv, issue 47).

Five columns after ``availability``; a row may leave any of them empty (rows added before
they existed, or by someone who did not know): it then gets the conservative default below,
and the comparison's ``declared`` column says "default".

``estimand``
    what the paper's number is: ``single`` (one run's value), ``mean`` (the mean over the
    paper's ``m`` runs of a per-run value), ``pooled`` (one statistic over the pooled series
    of ``m`` runs), ``every_run`` (a bound the paper states for every run: checked per seed),
    ``fixed`` (no seed noise: a count, or a value computed on every point).
    Default: ``fixed`` for counts and statements, ``every_run`` for bounds, ``single`` for the
    equivalence rules (one run has the most noise, so it calls the fewest rows *differs*).
``m``
    the paper's runs behind the number (``single``: 1). Default 1.
``margin``
    the equivalence margin δ, ``kind:value``: ``r:0.05`` (Δr), ``points:2`` (STS ×100),
    ``relative:0.1`` (a share of the paper's value), ``logit:0.693`` (I(W) odds within a
    factor 2). Default by unit (:data:`isotropy.verdicts.tolerances.DEFAULT_MARGINS`).
``margin_reason``
    why δ is that size, fixed before looking at our results.
``protocol``
    the settings the number depends on, ``key=value; key=value`` (e.g. ``metric_stride=1;
    updates=1000``): a run whose setting differs is *not comparable*, naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from isotropy.verdicts import equivalence as eq
from isotropy.verdicts.tolerances import ESTIMANDS, Declared, default_margin, parse_tolerance

DECLARED_COLUMNS = ["estimand", "m", "margin", "margin_reason", "protocol"]
_DEFAULT_ESTIMAND = {
    "exact": "fixed",
    "none": "fixed",
    "below": "every_run",
    "above": "every_run",
    "at_least": "every_run",
    "seeds_below": "mean",
    "seeds_above": "mean",
}


def parse_protocol(text: str) -> dict[str, str]:
    """``'metric_stride=1; updates=1000'`` → ``{'metric_stride': '1', 'updates': '1000'}``."""
    settings = {}
    for part in str(text).split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"protocol {text!r}: {part.strip()!r} is not key=value")
        settings[key.strip()] = value.strip()
    return settings


def _same(a: str, b: str) -> bool:
    try:
        return math.isclose(float(a), float(b))
    except ValueError:
        return a.strip().lower() == b.strip().lower()


def protocol_differences(declared: str, ours: str) -> list[str]:
    """The declared settings our run set otherwise ('metric_stride 10, the paper's 1'); a
    setting our run does not report is not held against it."""
    theirs, mine = parse_protocol(declared), parse_protocol(ours)
    return [
        f"{key} {mine[key]}, the paper's {value}"
        for key, value in theirs.items()
        if key in mine and not _same(mine[key], value)
    ]


def fill_declarations(
    table: pd.DataFrame, where: str = "config/published_values.csv"
) -> pd.DataFrame:
    """The published table with its declarations checked and the defaults filled in; adds
    ``declared`` ('row' or which columns were defaulted). A clear error on a bad value."""
    table = table.copy()
    for column in DECLARED_COLUMNS:
        if column not in table:
            table[column] = ""
        table[column] = table[column].fillna("").astype(str).str.strip()
    declared_by = []
    for index, row in table.iterrows():
        at = f"{where}, row {index + 2} ({row['paper']}, {row['source']})"
        kind, _ = parse_tolerance(row["tolerance"])
        defaulted = []
        if not row["estimand"]:
            table.at[index, "estimand"] = _DEFAULT_ESTIMAND.get(kind, "single")
            defaulted.append("estimand")
        elif row["estimand"] not in ESTIMANDS:
            raise ValueError(f"{at}: estimand {row['estimand']!r} is not one of {ESTIMANDS}")
        if not row["m"]:
            table.at[index, "m"] = "1"
            defaulted.append("m")
        else:
            try:
                m = float(row["m"])
            except ValueError:
                m = math.nan
            if not (m >= 1 and (math.isinf(m) or m == int(m))):
                raise ValueError(f"{at}: m {row['m']!r} is not a whole number of runs ≥ 1 (or inf)")
        if not row["margin"]:
            table.at[index, "margin"] = default_margin(row["tolerance"], row["unit"])
            defaulted.append("margin") if table.at[index, "margin"] else None
        else:
            try:
                eq.parse_margin(row["margin"])
            except ValueError as error:
                raise ValueError(f"{at}: {error}") from None
        try:
            parse_protocol(row["protocol"])
        except ValueError as error:
            raise ValueError(f"{at}: {error}") from None
        declared_by.append("default " + ", ".join(defaulted) if defaulted else "row")
    table["declared"] = declared_by
    return table


def declared(row: Mapping[str, object]) -> Declared:
    """The :class:`Declared` of one filled-in published row."""
    estimand = str(row["estimand"])
    m = math.inf if estimand == "fixed" else float(str(row["m"]))  # a fixed value has no seed noise
    return Declared(estimand, m, str(row["margin"]))
