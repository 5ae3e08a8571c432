"""The numbers the seed papers print, as data: ``config/published_values.csv``.

One row per printed number (or, for a statement without a number, per statement): the paper;
``source``, its table or figure, row and column; ``study`` and ``quantity``, the measurement
of this workflow it is compared with; ``setup``, the paper's setup as a pattern over our
measurements' paper setups (``fnmatch``; alternatives separated by ``|``; ``*`` = every one);
``value`` as printed (thousands separators, a unicode minus, ``M`` for millions kept); unit,
precision, model and data; ``sample_size`` (points the number was measured on, as printed);
the convention; ``tolerance``, the rule of the verdict (see :mod:`isotropy.verdicts.tolerances`)
and ``why``; ``availability``, why a run may be unable to produce the number.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from isotropy.verdicts.tolerances import parse_tolerance

PUBLISHED_VALUES = Path(__file__).resolve().parents[3] / "config" / "published_values.csv"
COLUMNS = [
    "paper", "source", "study", "quantity", "setup", "value", "unit", "precision", "model",
    "data", "sample_size", "convention", "tolerance", "why", "availability",
]  # fmt: skip
STUDIES = ("main", "glue", "geometry", "istar")


def printed_number(text: str) -> float:
    """The number a printed value means: '4,094,976' → 4094976, '−0.808' → -0.808,
    '1.19 M' → 1190000, '3.36e-5' → 3.36e-05; '' → NaN (a statement without a number)."""
    text = str(text).strip()
    if not text or text.lower() == "nan":
        return math.nan
    scale = 1.0
    if text.endswith("M"):
        text, scale = text[:-1].strip(), 1e6
    try:
        return float(text.replace(",", "").replace("−", "-")) * scale
    except ValueError:
        raise ValueError(f"published value {text!r} is not a number as printed") from None


def read_published(path: str | os.PathLike = PUBLISHED_VALUES) -> pd.DataFrame:
    """The published table, checked: known columns and studies, parseable values and tolerances.
    Adds ``paper_value`` and ``paper_n`` (the printed value and sample size as numbers)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if missing := [c for c in COLUMNS if c not in table.columns]:
        raise ValueError(f"{path}: columns {missing} are missing; expected {COLUMNS}")
    for index, row in table.iterrows():
        where = f"{path}, row {index + 2} ({row['paper']}, {row['source']})"
        if row["study"] not in STUDIES:
            raise ValueError(f"{where}: study {row['study']!r} is not one of {STUDIES}")
        if not row["quantity"] or not row["setup"] or not row["source"]:
            raise ValueError(f"{where}: quantity, setup and source must be filled in")
        try:
            parse_tolerance(row["tolerance"])
            printed_number(row["value"])
            printed_number(row["sample_size"])
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    table["paper_value"] = table["value"].map(printed_number)
    table["paper_n"] = table["sample_size"].map(printed_number)
    table["precision_value"] = table["precision"].map(printed_number)
    return table
