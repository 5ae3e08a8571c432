"""Our numbers beside the papers': ``results/paper_comparison.{csv,md}``.

A generic join of the published table (:func:`read_published`, below) with this run's
measurements (:mod:`isotropy.verdicts.measurements`): a published row matches every
measurement of its study and quantity whose ``paper_setup`` fits its ``setup`` pattern, and
each match is one row judged by the published row's tolerance
(:func:`isotropy.verdicts.tolerances.judge`). A published number that no measurement matches
keeps its row, ``not run``, with the reason. No value and no paper lives in this code.

The numbers the seed papers print, as data: ``config/published_values.csv``.

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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.published import matches
from isotropy.verdicts import declarations
from isotropy.verdicts.equivalence import Equivalence, holm
from isotropy.verdicts.tolerances import (
    ALPHA,
    CONSISTENT,
    EQUIVALENCE_RULES,
    NOT_COMPARABLE,
    NOT_CONSISTENT,
    NOT_LEARNED,
    NOT_RUN,
    STAND_IN,
    VERDICTS,
    holds_bound,
    judge_equivalence,
    judge_measurement,
    judge_seed_test,
    parse_tolerance,
    settle,
)

COLUMNS = [
    "paper",
    "source",
    "study",
    "quantity",
    "setup",
    "paper_value",
    "printed",
    "our_value",
    "our_n",
    "k",
    "per_type_cap",
    "paper_n",
    "paper_k",
    "seeds",
    "unit",
    "convention",
    "stand_in",
    "tolerance",
    "verdict",
    "why",
    "note",
    "estimand",
    "m",
    "margin",
    "margin_reason",
    "declared",
    "p_agree",
    "p_differ",
]
STUDY_NAMES = {"main": "main", "glue": "GLUE", "geometry": "geometry", "istar": "I-STAR"}


def _not_run_reason(published: pd.Series, measured: pd.DataFrame, studies: set[str]) -> str:
    study, quantity = published["study"], published["quantity"]
    if study not in studies:
        reason = f"the {STUDY_NAMES[study]} study is not part of this run"
    else:
        same = (measured["study"] == study) & (measured["quantity"] == quantity)
        found = sorted(set(measured.loc[same, "paper_setup"]))
        reason = (
            f"this run measures {quantity} for {', '.join(found)} only"
            if found
            else f"this run measures no {quantity}"
        )
    return "; ".join(s for s in (reason, published["availability"]) if s)


def _paper_k(spec: str) -> float:
    """The paper's k where the rule names one (``lid:k``), else NaN."""
    kind, argument = parse_tolerance(spec)
    return argument if kind == "lid" else math.nan


def _row(published: pd.Series, **ours: Any) -> dict[str, Any]:
    row = {
        "paper": published["paper"],
        "source": published["source"],
        "study": published["study"],
        "quantity": published["quantity"],
        "setup": published["setup"],
        "paper_value": published["paper_value"],
        "printed": published["value"],
        "paper_n": published["paper_n"],
        "unit": published["unit"],
        "convention": published["convention"],
        "why": published["why"],
        "our_value": math.nan,
        "our_n": math.nan,
        "k": math.nan,
        "per_type_cap": "",
        "stand_in": "",
        "tolerance": "",
        "note": "",
        "seeds": math.nan,
        "paper_k": _paper_k(published["tolerance"]),
        "estimand": published["estimand"],
        "m": published["m"],
        "margin": published["margin"],
        "margin_reason": published["margin_reason"],
        "declared": published["declared"],
        "p_agree": math.nan,
        "p_differ": math.nan,
    }
    row.update(ours)
    return row


def judge_row(
    paper: pd.Series, ours: pd.Series
) -> tuple[str | None, str, float, Equivalence | None]:
    """(verdict or None when the page's adjustment decides, the rule as applied, our value of the
    declared statistic, the equivalence test) of one published row against one measurement."""
    kind, bound = parse_tolerance(paper["tolerance"])
    value = float(ours["value"])
    if ours.get("not_learned"):  # a fine-tuned model not above its majority baseline
        return NOT_LEARNED, ours["not_learned"], value, None
    numeric = kind in EQUIVALENCE_RULES or kind in ("exact", "relative", "factor")
    if numeric and ours["stand_in"]:
        return STAND_IN, f"not judged: {ours['stand_in']}", value, None
    if paper["protocol"] and (
        differences := declarations.protocol_differences(
            paper["protocol"], ours.get("protocol", "")
        )
    ):
        return NOT_COMPARABLE, "protocol differs: " + "; ".join(differences), value, None
    if kind in EQUIVALENCE_RULES:
        judged = judge_equivalence(
            kind,
            ours,
            paper["paper_value"],
            declarations.declared(paper),
            unit=paper["unit"],
            paper_n=paper["paper_n"],
            paper_k=_paper_k(paper["tolerance"]),
        )
        return judged.verdict, judged.text, judged.ours, judged.test
    seeds = [float(v) for v in (ours["per_seed"] or ()) if math.isfinite(float(v))]
    if kind in ("below", "above", "at_least") and paper["estimand"] == "every_run" and seeds:
        failing = [v for v in seeds if not holds_bound(kind, bound, v)]
        text = (
            f"{kind} {bound:g} in every one of {len(seeds)} seeds (a bound the paper states "
            "for every run)"
        )
        if failing:
            listed = ", ".join(f"{v:+.4g}" for v in failing)
            return NOT_CONSISTENT, f"{text}: {len(failing)} fail ({listed})", value, None
        return CONSISTENT, text, value, None
    verdict, text = judge_measurement(
        paper["tolerance"],
        ours,
        paper["paper_value"],
        precision=paper["precision_value"],
        paper_n=paper["paper_n"],
        unit=paper["unit"],
    )
    return verdict, text, value, None


def compare(published: pd.DataFrame, measured: pd.DataFrame, studies: set[str]) -> pd.DataFrame:
    """Every published row beside each matching measurement (``studies``: those of this run).
    The equivalence rows are settled together: their p-values Holm-adjusted over the rows the
    page judges (one family for *agrees*, one for *differs*)."""
    if "declared" not in published:
        published = declarations.fill_declarations(published)
    rows, tests, seed_tests = [], [], []
    for _, paper in published.iterrows():
        candidates = measured[
            (measured["study"] == paper["study"]) & (measured["quantity"] == paper["quantity"])
        ]
        hits = candidates[[matches(paper["setup"], s) for s in candidates["paper_setup"]]]
        if hits.empty:
            rows.append(
                _row(paper, verdict=NOT_RUN, note=_not_run_reason(paper, measured, studies))
            )
            continue
        for _, ours in hits.iterrows():
            details = dict(
                setup=ours["setup"],
                our_n=ours["n"],
                k=ours["k"],
                per_type_cap=ours["per_type_cap"],
                seeds=ours["seeds"],
                stand_in=ours["stand_in"],
                convention=ours["convention"] or paper["convention"],
            )
            if ours["missing"]:
                rows.append(_row(paper, verdict=NOT_RUN, note=ours["missing"], **details))
                continue
            verdict, tolerance, value, test = judge_row(paper, ours)
            if str(paper["tolerance"]).startswith("seeds_") and verdict not in (
                NOT_COMPARABLE,
                NOT_LEARNED,
            ):
                seed_tests.append((len(rows), paper["tolerance"], ours))
            if test is not None:
                tests.append((len(rows), test))
                details.update(p_agree=test.p_agree, p_differ=test.p_differ)
            rows.append(
                _row(
                    paper,
                    our_value=value,
                    tolerance=tolerance,
                    verdict=verdict,
                    note=ours["note"],
                    **details,
                )
            )
    _settle_page(rows, tests, seed_tests)
    table = pd.DataFrame(rows, columns=COLUMNS)
    if bad := set(table["verdict"]) - set(VERDICTS):
        raise ValueError(f"unknown verdicts {sorted(bad)}")
    return table


def _settle_page(rows: list[dict], tests: list, seed_tests: list) -> None:
    """Settle the page's equivalence rows (Holm over them, one family for *agrees* and one for
    *differs*) and its I-STAR seed tests (Holm over the whole grid: every model × task × λ)."""
    adjusted = zip(holm([t.p_agree for _, t in tests]), holm([t.p_differ for _, t in tests]))
    for (index, test), (p_agree, p_differ) in zip(tests, adjusted):
        rows[index]["verdict"] = settle(Equivalence(test.low, test.high, p_agree, p_differ))
        rows[index]["tolerance"] += (
            f"; Holm over {len(tests)} rows: p(agrees) {p_agree:.2g}, p(differs) {p_differ:.2g}"
        )
    adjusted = zip(
        holm([float(o["p_less"]) for *_, o in seed_tests]),
        holm([float(o["p_greater"]) for *_, o in seed_tests]),
    )
    for (index, spec, ours), (p_less, p_greater) in zip(seed_tests, adjusted):
        kind, bound = parse_tolerance(spec)
        rows[index]["verdict"], rows[index]["tolerance"] = judge_seed_test(
            kind, bound, seeds=float(ours["seeds"]), p_less=p_less, p_greater=p_greater
        )


ERROR_CONTROL = (
    "How the verdicts are made (docs/verdicts.md): each printed number is declared as one "
    "statistic "
    "(one run, a mean or a pooled value over the paper's m runs, a bound for every run, a fixed "
    "value) with an equivalence margin δ. For a correlation, LID or I(W), D = paper − ours "
    "gets a 95% "
    "interval that includes the paper's own seed noise; *agrees* when it lies within ±δ, *differs* "
    "when wholly outside, else *inconclusive*. Per row: a faithful replication reads *differs* "
    "with "
    f"probability ≤ {ALPHA:g}, and a true gap of δ or more reads *agrees* with probability ≤ "
    f"{ALPHA / 2:g}. "
    "On this page the p-values of the {n} rows so judged are Holm-adjusted (one family for "
    "*agrees*, "
    f"one for *differs*), so {ALPHA:g} bounds the chance of any false *differs* and of any false "
    "*agrees* among them. Counts are exact; bounds stated for every run are checked in every seed. "
    "A row whose model or data is a stand-in is *stand-in: not judged*; a run whose protocol "
    "differs "
    "where the number depends on it is *not comparable*."
)


def _number(value: Any) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value):
        return ""
    if value == int(value) and abs(value) >= 100:
        return f"{int(value):,}"
    return f"{value:.3g}" if abs(value) < 0.01 else f"{value:.4g}"


def comparison_markdown(table: pd.DataFrame) -> str:
    """The comparison as a markdown document: counts of verdicts, then one table per paper."""
    counts = table["verdict"].value_counts()
    judged = int(table["p_agree"].notna().sum()) if "p_agree" in table else 0
    lines = [
        "# Our numbers beside the papers'",
        "",
        ERROR_CONTROL.replace("{n}", str(judged)),
        "",
        "Every number the seed papers print (config/published_values.csv, each with its paper, "
        "table, row "
        "and column), beside the value this run measured. Verdicts: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)
        + ".",
        "A *stand-in* names what we used where the paper used something else: its row shows "
        "our value beside the paper's and is not judged. "
        "LID rows give our n, k and per-type cap beside the paper's n and k. "
        "What each verdict means: docs/verdicts.md.",
        "",
    ]
    for paper in dict.fromkeys(table["paper"]):
        part = table[table["paper"] == paper]
        lines += [
            f"## {paper}",
            "",
            "| source | setup | printed | statistic (m, δ) | ours | n (ours / paper) | unit | "
            "tolerance | verdict | stand-in | note |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _, r in part.iterrows():
            n = " / ".join(s for s in (_number(r["our_n"]), _number(r["paper_n"])) if s)
            if isinstance(r["per_type_cap"], str) and r["per_type_cap"]:
                k = " / ".join(s for s in (_number(r["k"]), _number(r["paper_k"])) if s)
                n += f" (k {k}, cap {r['per_type_cap']})"
            statistic = f"{r['estimand']} (m {r['m']}{', δ ' + r['margin'] if r['margin'] else ''})"
            if str(r["declared"]).startswith("default"):
                statistic += f"; {r['declared']}"
            cells = [
                r["source"],
                r["setup"],
                r["printed"],
                statistic,
                _number(r["our_value"]),
                n,
                r["unit"],
                r["tolerance"],
                f"**{r['verdict']}**",
                r["stand_in"],
                r["note"],
            ]
            lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def compare_results(
    tables: Mapping[str, pd.DataFrame | None],
    config: Mapping[str, Any],
    stand: Any,
    published: pd.DataFrame | None = None,
    studies: set[str] | None = None,
) -> pd.DataFrame:
    """Measure this run's tables once and set every published number beside them."""
    from isotropy.verdicts.measurements import measure

    measured = measure(tables, config, stand)
    if studies is None:
        studies = {name.split("_")[0] for name, table in tables.items() if table is not None}
    return compare(read_published() if published is None else published, measured, studies)


PUBLISHED_VALUES = Path(__file__).resolve().parents[3] / "config" / "published_values.csv"
PUBLISHED_COLUMNS = [
    "paper",
    "source",
    "study",
    "quantity",
    "setup",
    "value",
    "unit",
    "precision",
    "model",
    "data",
    "sample_size",
    "convention",
    "tolerance",
    "why",
    "availability",
]
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
    if missing := [c for c in PUBLISHED_COLUMNS if c not in table.columns]:
        raise ValueError(f"{path}: columns {missing} are missing; expected {PUBLISHED_COLUMNS}")
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
    return declarations.fill_declarations(table, str(path))
