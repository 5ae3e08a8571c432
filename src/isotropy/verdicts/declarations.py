"""What each published number is (docs/verdicts.md, "What each printed number is"), and the
measured effects of protocol settings (config/protocol_effects.csv)."""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isotropy.verdicts import equivalence as eq
from isotropy.verdicts import tolerances as T

DECLARED_COLUMNS = ["estimand", "m", "margin", "margin_reason", "protocol"]
# The printed numbers of a published row, and the columns that hold them as numbers
NUMBERS = (("value", "paper_value"), ("sample_size", "paper_n"), ("precision", "precision_value"))
PROTOCOL_EFFECTS = Path(__file__).resolve().parents[3] / "config" / "protocol_effects.csv"


def parse_protocol(text: str) -> dict[str, str]:
    """``'metric_stride=1; updates=1000'`` → ``{'metric_stride': '1', 'updates': '1000'}``."""
    settings = {}
    for part in filter(str.strip, str(text).split(";")):
        key, sep, value = (word.strip() for word in part.partition("="))
        if not (sep and key and value):
            raise ValueError(f"protocol {text!r}: {part.strip()!r} is not key=value")
        settings[key] = value
    return settings


def _check_declared(row: pd.Series, kind: str) -> None:
    """Refuse a declaration that cannot mean what the page says of it."""
    if row["estimand"] not in T.ESTIMANDS + T.READINGS:
        raise ValueError(f"estimand {row['estimand']!r} is not one of {T.ESTIMANDS + T.READINGS}")
    m = pd.to_numeric(row["m"], errors="coerce")
    if not (m >= 1 and (math.isinf(m) or m == int(m))):
        raise ValueError(f"m {row['m']!r} is not a whole number of runs ≥ 1 (or inf)")
    parse_protocol(row["protocol"])
    if kind not in T.EQUIVALENCE_RULES:
        return
    if str(row.get("why", "")).strip():
        raise ValueError(
            "the why of an equivalence row is written from its rule (leave it empty; the reason "
            "for δ goes in margin_reason)"
        )
    if not row["margin_reason"]:
        raise ValueError(f"margin {row['margin']!r} has no margin_reason")
    if row["margin"].startswith("relative:") and row["estimand"] != "fixed":
        raise ValueError(
            f"margin {row['margin']!r} is a share of the paper's value, whose edges move with its "
            f"draw; estimand {row['estimand']!r} has one: declare δ on the judging scale"
        )
    paper = float(row.get("paper_value", math.nan))  # the margin is checked with or without one
    T.scale_of(row["unit"], kind).region(paper if math.isfinite(paper) else 0.0, row["margin"])


def printed_number(text: str) -> float:
    """'4,094,976' → 4094976, '−0.808' → -0.808, '1.19 M' → 1190000; '' → NaN (no number)."""
    text = str(text).strip()
    if not text or text.lower() == "nan":
        return math.nan
    scale, text = (1e6 if text.endswith("M") else 1.0), text.removesuffix("M").strip()
    try:
        return float(text.replace(",", "").replace("−", "-")) * scale
    except ValueError:
        raise ValueError(f"published value {text!r} is not a number as printed") from None


def fill_declarations(
    table: pd.DataFrame,
    where: str = "config/published_values.csv",
    studies: Collection[str] | None = None,
) -> pd.DataFrame:
    """The published table checked row by row (an error names the row), numbers parsed."""
    words = table.reindex(columns=DECLARED_COLUMNS).astype(object).fillna("").astype(str)
    table = table.assign(**{column: words[column].str.strip() for column in DECLARED_COLUMNS})
    table = table.assign(**{n: math.nan for _, n in NUMBERS if n not in table})
    for index in table.index:
        row = table.loc[index]
        at = f"{where}, row {index + 2} ({row['paper']}, {row['source']})"
        try:
            if studies is not None and row["study"] not in studies:
                raise ValueError(f"study {row['study']!r} is not one of {tuple(studies)}")
            if not row["quantity"] or not row["setup"] or not row["source"]:
                raise ValueError("quantity, setup and source must be filled in")
            kind, _ = T.parse_tolerance(row["tolerance"])
            for printed, number in NUMBERS:
                table.at[index, number] = printed_number(row.get(printed, ""))
            _check_declared(table.loc[index], kind)
        except ValueError as error:
            raise ValueError(f"{at}: {error}") from None
        if kind in T.EQUIVALENCE_RULES:
            table.at[index, "why"] = rule_text(table.loc[index])
    return table


def declared(row: Mapping[str, Any], gate: T.Declared | None = None) -> T.Declared:
    """The :class:`Declared` of one filled-in published row, with ``gate``'s protocol effect."""
    estimand = str(row["estimand"])
    m = math.inf if estimand == "fixed" else float(str(row["m"]))
    precision = float(row.get("precision_value", math.nan))
    half = precision / 2 if math.isfinite(precision) else 0.0
    base = gate or T.Declared()
    return base._replace(estimand=estimand, m=m, margin=str(row["margin"]), half=half)


def rule_text(row: Mapping[str, Any]) -> str:
    """The rule an equivalence row is judged by, in words."""
    kind, argument = T.parse_tolerance(str(row["tolerance"]))
    scale, this = T.scale_of(str(row["unit"]), kind), declared(row)
    text = (
        f"equivalence on {scale.name}: the 95% interval for D = paper − ours, which includes the "
        f"paper's draw of its statistic ({this.words()}), must lie within "
        f"±{eq.describe_margin(this.margin)} for *agrees*, wholly outside for *differs*"
    )
    paper, half = float(row.get("paper_value", math.nan)), this.half
    if math.isfinite(paper):
        low, high = eq.printed_region(scale, paper, this.margin, half)
        text += f" (in printed units, {low:.4g} to {high:.4g} around the printed {paper:g}"
        text += f", within ±δ of every value it stands for, ±{half:g})" if half else ")"
    if kind == "printed" and scale.margins == ("z",):
        text += "; per-seed signs must agree"
    if kind == "lid":
        text += f"; only at the paper's n (±{T.LID_N_TOLERANCE:.1%}) and k = {argument:g}"
    return text + "; one seed of a seeded quantity: not judged; a seed-free value: exact"


@functools.lru_cache(maxsize=4)
def read_effects(path: str = str(PROTOCOL_EFFECTS)) -> pd.DataFrame:
    """config/protocol_effects.csv (written by ``benchmarks/stride_effect.py --write``)."""
    return pd.read_csv(path, keep_default_na=False)


def protocol_gate(quantity: str, declared: str, ours: str, can_widen: bool = True) -> T.Declared:
    """Our run's protocol against the row's: a differing setting is allowed (an ``allowance``)
    only within a measured effect, else a ``refusal``; one our run does not report is not."""
    effects, theirs, mine = read_effects(), parse_protocol(declared), parse_protocol(ours)
    low, high, used, refused = 0.0, 0.0, [], []
    for key, value in theirs.items():
        if key not in mine:
            continue
        paper_at, ours_at = pd.to_numeric(pd.Series([value, mine[key]]), errors="coerce")
        if math.isclose(paper_at, ours_at) or value.lower() == mine[key].lower():
            continue  # the same setting, as a number or as a word
        where = f"{key} {mine[key]}, the paper's {value}"
        measured = effects[(effects["quantity"] == quantity) & (effects["setting"] == key)]
        # the measured effect at the nearest setting covering ours against the paper's
        reach = (paper_at <= ours_at) & (ours_at <= measured["ours_at_most"])
        covering = measured[np.isclose(measured["paper"], paper_at) & reach]
        if covering.empty or not can_widen:
            reach = f"measured only up to {key} {measured['ours_at_most'].max():g}"
            why = f"its effect on {quantity} is " + ("not measured" if measured.empty else reach)
            why = why if can_widen else "the row's rule has no interval to widen by its effect"
            refused.append(f"{where}: {why}")
            continue
        effect = covering.loc[covering["ours_at_most"].idxmin()]
        low, high = low + effect["low"], high + effect["high"]
        used.append(f"{where}: {effect['low']:+g} to {effect['high']:+g} on {effect['scale']}")
    if refused:
        why = "protocol differs: " + "; ".join(refused) + " (config/protocol_effects.csv)"
        return T.Declared(refusal=why)
    text = (
        "protocol differs within its measured effect on ours (config/protocol_effects.csv), "
        "which widens the interval: " + "; ".join(used)
    )
    return T.Declared(allowance=(low, high), allowance_text=text if used else "")
