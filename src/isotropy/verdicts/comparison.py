"""Our numbers beside the papers': the published table joined with this run's measurements."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import statistics as st
from isotropy.verdicts import declarations
from isotropy.verdicts import equivalence as eq
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.families import (
    STUDIES,
    family_name,
    family_sizes,
    flagged,
    holm_said,
    settle_rows,
    verdict_page,
)

# The columns that name a published number: the published table's first, and the comparison's.
ROW_KEYS = ["paper", "source", "study", "quantity", "setup"]
# d_low … band_high: D = paper − ours, its 95% interval and the region the verdict accepts
COLUMNS = ROW_KEYS + str.split(
    "paper_value printed our_value our_n k per_type_cap paper_n paper_k seeds unit "
    "convention stand_in tolerance verdict why note estimand m margin margin_reason "
    "p_agree p_differ d_low d_high band_low band_high"
)


def _not_run_reason(published: pd.Series, candidates: pd.DataFrame, studies: set[str]) -> str:
    """Why no measurement matches ``published`` (``candidates``: ours of its study and quantity)."""
    study, quantity = published["study"], published["quantity"]
    found = ", ".join(sorted(set(candidates["paper_setup"])))
    reason = "this run measures " + (f"{quantity} for {found} only" if found else f"no {quantity}")
    if study not in studies:
        reason = f"the {STUDIES.get(study, (study,))[0]} study is not part of this run"
    return "; ".join(s for s in (reason, published["availability"]) if s)


def _row(published: pd.Series, **ours: Any) -> dict[str, Any]:
    """One row of :data:`COLUMNS`: the published row's columns, ``ours`` over them."""
    row = {c: published[c] if c in published.index else math.nan for c in COLUMNS}
    row.update(dict.fromkeys(("per_type_cap", "stand_in", "tolerance", "note"), ""))
    kind, argument = T.parse_tolerance(published["tolerance"])
    row.update(printed=published["value"], paper_k=argument if kind == "lid" else math.nan)
    return row | ours


def margin_band(paper: pd.Series) -> tuple[float, float]:
    """The region a verdict accepts, as D = paper − ours in printed units (NaN where none)."""
    kind, argument = T.parse_tolerance(paper["tolerance"])
    value = float(paper["paper_value"])
    if not math.isfinite(value):
        return math.nan, math.nan
    if kind in T.EQUIVALENCE_RULES:
        scale, declared = T.scale_of(paper["unit"], kind), declarations.declared(paper)
        low, high = eq.printed_region(scale, value, declared.margin, declared.half)
        return value - float(high), value - float(low)
    if kind == "exact":
        return 0.0, 0.0
    if kind == "relative":
        return -argument * abs(value), argument * abs(value)
    return math.nan, math.nan


def judge_row(paper: pd.Series, ours: pd.Series) -> T.Judged:
    """One published row against one measurement, before the page's Holm."""
    kind, bound = T.parse_tolerance(paper["tolerance"])
    value = float(ours["value"])
    gate = declarations.protocol_gate(
        paper["quantity"], paper["protocol"], ours.get("protocol", ""), kind in T.EQUIVALENCE_RULES
    )
    if unjudged := not_judged(ours, T.states_a_number(kind, bound), gate.refusal):
        return T.Judged(*unjudged, value)
    if kind in T.EQUIVALENCE_RULES:  # paper_k=bound: the lid rule's k, read by no other rule
        declared = declarations.declared(paper, gate)
        on = dict(unit=paper["unit"], paper_n=paper["paper_n"], paper_k=bound)
        return T.judge_equivalence(kind, ours, paper["paper_value"], declared, **on)
    seeds = T.finite(ours["per_seed"])
    if kind in ("below", "above", "at_least") and paper["estimand"] == "every_run" and seeds:
        held, text = every_seed(kind, bound, seeds)
        return T.Judged(st.CONSISTENT if held else st.NOT_CONSISTENT, text, value)
    return T.Judged(*T.judge(paper["tolerance"], ours, paper["paper_value"]), value)


def not_judged(ours: pd.Series, on_number: bool, refusal: str, *after) -> tuple[str, str] | None:
    """(verdict, why) of a published or claimed row no rule judges (``after``: more words)."""
    stand_in = "; ".join(s for s in (f"not judged: {ours['stand_in']}", *after) if s)
    reasons = {
        st.NOT_RUN: ours.get("missing"),
        st.NOT_LEARNED: ours.get("not_learned"),
        st.STAND_IN: stand_in if ours["stand_in"] and on_number else "",
        st.NOT_COMPARABLE: refusal,
    }
    return next(((verdict, why) for verdict, why in reasons.items() if why), None)


def every_seed(kind: str, bound: float, values: list[float]) -> tuple[bool, str]:
    """The every-run rule, for a claim and a published bound alike: (every seed holds, words)."""
    failing = [v for v in values if not T.holds_bound(kind, bound, v)]
    text = f"{kind} {bound:g} in every one of {len(values)} seeds (each checked, no test)"
    if failing:
        text += f": {len(failing)} fail (" + ", ".join(f"{v:+.4g}" for v in failing) + ")"
    return not failing, text


def compare(published: pd.DataFrame, measured: pd.DataFrame, studies: set[str]) -> pd.DataFrame:
    """Every published row beside each matching measurement (``studies``: this run's)."""
    rows: list[dict[str, Any]] = []  # a tested row also holds its family and p-values, for Holm
    for _, paper in published.iterrows():
        candidates = measured[
            (measured["study"] == paper["study"]) & (measured["quantity"] == paper["quantity"])
        ]
        hits = candidates[[st.matches(paper["setup"], s) for s in candidates["paper_setup"]]]
        if hits.empty:
            reason = _not_run_reason(paper, candidates, studies)
            rows.append(_row(paper, verdict=st.NOT_RUN, note=reason))
        for _, ours in hits.iterrows():
            details = {c: ours[c] for c in ("setup", "k", "per_type_cap", "seeds", "stand_in")}
            details.update(our_n=ours["n"], convention=ours["convention"] or paper["convention"])
            if ours["missing"]:
                rows.append(_row(paper, verdict=st.NOT_RUN, note=ours["missing"], **details))
                continue
            verdict, tolerance, value, test = judge_row(paper, ours)
            kind = T.parse_tolerance(paper["tolerance"])[0]
            if test is not None:
                details.update(d_low=test.low, d_high=test.high, p_agree=test.p_agree)
                details.update(p_differ=test.p_differ, p_for=test.p_agree, p_against=test.p_differ)
            if test is not None and (bool(ours["seed_free"]) or test.low == test.high):
                verdict = T.settle(test.p_agree, test.p_differ)
                tolerance += "; seed-free: an exact comparison, in no Holm family"
            elif test is not None:
                details.update(family=family_name(paper["paper"], paper["study"]))
            elif kind.startswith("seeds_") and verdict not in (st.NOT_COMPARABLE, st.NOT_LEARNED):
                family = family_name(paper["paper"], paper["study"], paper["quantity"])
                p = T.claimed_first(kind, ours["p_less"], ours["p_greater"])
                details.update(family=family, p_for=p[0], p_against=p[1], ours=ours, kind=kind)
                details.update(spec=paper["tolerance"])
            if verdict != st.STAND_IN:
                details.update(zip(("band_low", "band_high"), margin_band(paper)))
            note = "; ".join(s for s in (T.simpson_flag(ours), ours["note"]) if s)
            row = dict(our_value=value, tolerance=tolerance, verdict=verdict, note=note)
            rows.append(_row(paper, **row, **details))
    for tested in settle_rows(rows):
        if "ours" in tested:  # a test over seeds (the I-STAR grid): judged again on its Holm p
            less, greater = T.claimed_first(tested["kind"], tested["p_for"], tested["p_against"])
            adjusted = dict(tested["ours"], p_less=less, p_greater=greater)
            tested["verdict"], tested["tolerance"] = T.judge(tested["spec"], adjusted)
            tested["tolerance"] += holm_said(tested, "tests") if tested["size"] else ""
        else:  # an equivalence test
            tested.update(p_agree=tested["p_for"], p_differ=tested["p_against"])
            words = "p(agrees) {p_for:.2g}, p(differs) {p_against:.2g}"
            tested["tolerance"] += holm_said(tested, "rows", words)
    table = pd.DataFrame(rows, columns=COLUMNS)
    if bad := set(table["verdict"]) - set(st.VERDICTS):
        raise ValueError(f"unknown verdicts {sorted(bad)}")
    return table


ERROR_CONTROL = (
    "How the verdicts are made: docs/verdicts.md. *agrees* when the 95% interval of D = paper − "
    "ours lies within ±δ, *differs* when wholly outside (a faithful replication: probability ≤ "
    f"{T.ALPHA:g}), else *inconclusive*. The verdict's p-values, Holm-adjusted within declared "
    f"families (paper × study), bound any false *differs* or *agrees* at {T.ALPHA:g}: {{families}}."
)


def _number(value: Any) -> str:
    """A number as the page prints it (`fmt`; under 0.01, to 3 digits); '' where none."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        return ""
    return f"{value:.3g}" if abs(value) < 0.01 else T.fmt(value)


def as_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The comparison as a page shows it: a stand-in's tolerance blank (its column names it)."""
    tolerance = table["tolerance"].astype(str)
    return table.assign(tolerance=tolerance.where(table["verdict"] != st.STAND_IN, ""))


COMPARISON_COLUMNS = (
    "source | setup | printed | statistic (m, δ) | ours | n (ours / paper) | unit | tolerance | "
    "verdict | stand-in | note"
).split(" | ")


def comparison_markdown(table: pd.DataFrame) -> str:
    """The comparison page: counts of verdicts, then one table per paper."""
    counts = T.counted(table).value_counts()
    paragraphs = [
        ERROR_CONTROL.replace("{families}", family_sizes(table["tolerance"], "rows")),
        "Every number the seed papers print (config/published_values.csv, each with its paper, "
        "table, row and column), beside the value this run measured. Verdicts: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in st.VERDICTS)
        + f"; {counts.get(T.NEAR_GUARANTEED, 0)} {T.NEAR_GUARANTEED} ({T.WHY_NEAR_GUARANTEED}).",
        "A *stand-in* names what we used where the paper used something else: its row shows "
        "our value beside the paper's and is not judged. "
        "LID rows give our n, k and per-type cap beside the paper's n and k.",
    ]
    tables = {paper: _shown(as_shown(part)) for paper, part in table.groupby("paper", sort=False)}
    return verdict_page("Our numbers beside the papers'", paragraphs, tables)


def _shown(part: pd.DataFrame) -> pd.DataFrame:
    """One paper's rows as its table on the page."""
    rows = []
    for _, r in part.iterrows():
        n = " / ".join(s for s in (_number(r["our_n"]), _number(r["paper_n"])) if s)
        if isinstance(r["per_type_cap"], str) and r["per_type_cap"]:
            k = " / ".join(s for s in (_number(r["k"]), _number(r["paper_k"])) if s)
            n += f" (k {k}, cap {r['per_type_cap']})"
        statistic = f"{r['estimand']} (m {r['m']}{', δ ' + r['margin'] if r['margin'] else ''})"
        ours = flagged(_number(r["our_value"]), r["note"])
        on_stand_in = bool(r["stand_in"]) and r["verdict"] in st.JUDGED
        verdict = f"**{r['verdict']}**" + T.said(on_stand_in, r)
        head, tail = r[["source", "setup", "printed"]].tolist(), r[["stand_in", "note"]].tolist()
        rows.append([*head, statistic, ours, n, r["unit"], r["tolerance"], verdict, *tail])
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


PUBLISHED_VALUES = Path(__file__).resolve().parents[3] / "config" / "published_values.csv"
PUBLISHED_COLUMNS = ROW_KEYS + (
    "value unit precision model data sample_size convention tolerance why availability".split()
)


def read_published(
    path: str | os.PathLike = PUBLISHED_VALUES, studies: Collection[str] | None = None
) -> pd.DataFrame:
    """The published table, its columns, rows and declarations checked."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if missing := [c for c in PUBLISHED_COLUMNS if c not in table.columns]:
        raise ValueError(f"{path}: columns {missing} are missing; expected {PUBLISHED_COLUMNS}")
    return declarations.fill_declarations(table, str(path), studies)


@functools.cache
def declared_protocols() -> tuple[tuple[str, str, str], ...]:
    """(study, setup pattern, protocol) of each published row declaring a protocol."""
    table = read_published()
    declared = table.loc[table["protocol"] != "", ["study", "setup", "protocol"]]
    return tuple(declared.drop_duplicates().itertuples(index=False, name=None))


def protocol_refusal(study: str, quantity: str, ours: pd.Series) -> str:
    """Why ``ours`` cannot judge ``quantity``: :func:`judge_row`'s gate against the protocol
    its study's published rows declare, with no interval to widen; '' when none refuses."""
    refusals = (
        declarations.protocol_gate(quantity, declared, ours.get("protocol", ""), False).refusal
        for row_study, setup, declared in declared_protocols()
        if row_study == study and st.matches(setup, ours["paper_setup"])
    )
    return next((r for r in refusals if r), "")
