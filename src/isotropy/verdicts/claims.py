"""The papers' claims judged per claim × setup on each seed (docs/verdicts.md, "Claims")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import product

import numpy as np
import pandas as pd
from scipy import stats

from isotropy import statistics as st
from isotropy.statistics import Claim, fisher_z
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.comparison import every_seed, not_judged, protocol_refusal
from isotropy.verdicts.families import (
    SEED_TEST_QUANTITIES,
    family_of_claim,
    family_sizes,
    flagged,
    holm_said,
    settle_rows,
    verdict_page,
)
from isotropy.verdicts.measurements import measurement, one_sided

COLUMNS = "claim study setup statement measured threshold verdict paper evidence note".split()
UNJUDGED = (st.ONE_SEED, st.NOT_COMPARABLE, st.NOT_LEARNED, st.STAND_IN, st.NOT_RUN)
# Every verdict of the claims page, in the page's order, with its mark.
CLAIM_MARKS = {
    st.SUPPORTED: "✅",
    st.NOT_SUPPORTED: "❌",
    st.UNTESTED_HOLDS: "☑️",
    st.UNTESTED_FAILS: "✖️",
    st.INCONSISTENT_SEEDS: "⚠️",
    **dict.fromkeys((st.INCONCLUSIVE, st.NOT_DECIDED), "❔"),
    **dict.fromkeys(UNJUDGED, "➖"),
}
MARKS = {verdict: f"{mark} {verdict}" for verdict, mark in CLAIM_MARKS.items()}
STAND_IN_NOTE = "judged on a stand-in"
_HOLM = "Holm over the study's family"


def _row(
    claim: Claim, setup: str, measured: float, threshold: str, verdict: str, evidence="", note=""
) -> dict:
    values = (claim.name, claim.study, setup, claim.statement, measured, threshold, verdict)
    return dict(zip(COLUMNS, (*values, claim.paper, evidence, note), strict=True))


def sesoi_of(claim: Claim) -> float:
    """The claim's smallest effect of interest; a claim without one is refused."""
    if not (math.isfinite(claim.sesoi) and claim.sesoi >= 0 and claim.sesoi_source):
        raise ValueError(f"claim {claim.name} declares no smallest effect of interest and source")
    return claim.sesoi


def direction_test(claim: Claim, values: list[float]) -> tuple[float, float, int, int]:
    """A claim's test before its family's Holm (p beyond its smallest effect of interest the
    claimed way, p short of it) by a one-sided t over seeds (r on Fisher's z), or with no spread
    the sign test's 0.5 ** seeds; then the seeds going the claimed way and the seeds counted."""
    kind, bound = T.parse_tolerance(claim.bound)
    on_z = claim.quantity in st.CORRELATIONS  # a correlation: tested on Fisher z
    y = fisher_z(values) if on_z else np.asarray(values, dtype=np.float64)
    centre = fisher_z([bound])[0] if on_z else bound
    beyond = (centre - y if kind == "below" else y - centre) - sesoi_of(claim)
    along = int(sum(T.holds_bound(kind, bound, v) for v in values))
    if len(y) < 2:
        return math.nan, math.nan, along, len(y)
    if np.ptp(beyond) == 0:  # no spread: the sign test, neither way exactly at the SESOI
        sign = 0.5 ** len(y)
        past, short = (sign, 1.0) if beyond[0] > 0 else (1.0, sign if beyond[0] < 0 else 1.0)
    else:
        short, past = one_sided(stats.ttest_1samp, beyond, 0.0)
    return past, short, along, len(y)


def _judge_claim(claim: Claim, m: pd.Series) -> tuple[str, str, tuple[float, float] | None]:
    """(verdict, inconclusive until its family's Holm decides; the rule in words; its test)."""
    kind, bound = T.parse_tolerance(claim.bound)
    values = T.finite(m["per_seed"])
    if claim.rule == "direction":
        p_claim, p_other, along, n = direction_test(claim, values)
        text = f"{along} of {n} seeds {kind} {bound:g}; {_beyond(claim)}"
        return (st.ONE_SEED, text, None) if n < 2 else (st.INCONCLUSIVE, text, (p_claim, p_other))
    if claim.rule == "every_run":
        if not values:
            return st.NOT_SUPPORTED, "no seed with a defined value", None
        held, text = every_seed(kind, bound, values)
        return (st.SUPPORTED if held else st.NOT_SUPPORTED), text, None
    if claim.rule == "seeds":
        sign, seeds, p_claim, p_other, along, valued = T.seed_test(kind, bound, m)
        if seeds < 2:
            return st.ONE_SEED, "one seed: no spread to test with", None
        test = claim.test.format(seeds=seeds) if claim.test else f"one-sided t over {seeds} seeds"
        counted = f"{along} of {valued} seeds, " if claim.quantity in SEED_TEST_QUANTITIES else ""
        return st.INCONCLUSIVE, f"{sign} {bound:g}: {counted}{test}, {_HOLM}", (p_claim, p_other)
    shift = sesoi_of(claim) * (-1 if kind == "below" else 1)
    verdict, text = T.judge(f"{kind}:{bound + shift:g}", m)
    untested = {st.CONSISTENT: st.UNTESTED_HOLDS, st.NOT_CONSISTENT: st.UNTESTED_FAILS}
    return untested.get(verdict, verdict), f"{text}: a point comparison, no test", None


def _beyond(claim: Claim) -> str:
    return f"one-sided t over seeds beyond SESOI {sesoi_of(claim):g} ({claim.sesoi_source})"


def _threshold(claim: Claim) -> str:
    kind, bound = T.parse_tolerance(claim.bound)
    beyond = f" by more than {sesoi_of(claim):g}" if sesoi_of(claim) else ""
    if claim.rule == "seeds":
        return f"{'<' if kind == 'seeds_below' else '>'} {bound:g}{beyond}, tested over seeds"
    return T.judge(claim.bound, {"value": 0.0})[1] + beyond


def check_claims(
    values: pd.DataFrame,
    studies: set[str] | None,
    claims: Mapping[str, tuple[str, Sequence[Claim]]] | Sequence[Claim],
) -> pd.DataFrame:
    """Every claim judged, each family settled by Holm: on a run's measurements (``claims``: study
    -> (why not run without it, its claims)) or on per-seed values (claims: a sequence)."""
    rows: list[dict] = []  # a tested row also holds its family and p-values, for Holm
    if isinstance(claims, Mapping):
        _measured_rows(values, studies or set(), claims, rows)
    else:
        _seed_claim_rows(values, claims, rows)
    for row in settle_rows(rows, (st.SUPPORTED, st.NOT_SUPPORTED)):
        # two digits: a p-value's third digit is float32 noise of the traces, not evidence
        row["note"] += holm_said(row, "tests", "p {p_for:.2g} (other way {p_against:.2g})")
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table if isinstance(claims, Mapping) else _collapse_any_setup(table, claims)


def _measured_rows(measured, studies: set[str], claims, rows: list) -> None:
    for study, (not_run, judged) in claims.items():
        ours = measured[measured["study"] == study]
        setups = sorted(set(ours.loc[ours["quantity"].isin([c.quantity for c in judged]), "setup"]))
        absent = not_run if study not in studies else ""
        note = absent or ("" if setups else f"no results of the {study} study to measure")
        for setup, claim in product(["all"] if note else setups, judged):
            found = ours[(ours["setup"] == setup) & (ours["quantity"] == claim.quantity)]
            if note or found.empty:
                why = note or f"no {claim.quantity} measured for this setup"
                rows.append(_row(claim, setup, math.nan, _threshold(claim), st.NOT_RUN, "", why))
            else:
                _claim_row(claim, setup, _threshold(claim), found.iloc[0], rows)


def _claim_row(claim: Claim, setup: str, threshold: str, m: pd.Series, rows: list) -> None:
    """The one row writer: ``claim`` at ``setup`` judged on the measurement ``m``."""
    value, flag = (math.nan if m["missing"] else float(m["value"])), T.simpson_flag(m)
    on_number = T.states_a_number(*T.parse_tolerance(claim.bound), claim.neutral)
    refusal = protocol_refusal(claim.study, claim.quantity, m)
    if unjudged := not_judged(m, on_number, refusal, m["note"], flag):
        rows.append(_row(claim, setup, value, threshold, unjudged[0], m["evidence"], unjudged[1]))
        return
    after = [m["note"] or ("" if math.isfinite(m["value"]) else "measurement undefined")]
    if claim.quantity in st.CORRELATIONS and math.isfinite(m["n"]):
        after.insert(0, f"{int(m['n'])} points pooled")
    if m["stand_in"]:
        after.append(f"{STAND_IN_NOTE} (a direction, not a number): {m['stand_in']}")
    verdict, rule, p = _judge_claim(claim, m)
    note = "; ".join(s for s in (flag, rule, *after) if s)
    rows.append(_row(claim, setup, value, threshold, verdict, m["evidence"], note))
    if p is not None:
        family = family_of_claim(claim.study, claim.rule, claim.quantity)
        rows[-1].update(family=family, p_for=p[0], p_against=p[1])


def judge_any_setup(verdicts: list[str]) -> str:
    """The verdict of an existence claim ("in at least one setup") from its setups' verdicts."""
    judged = {v for v in verdicts if v != st.NOT_RUN}
    if not judged or st.SUPPORTED in judged:
        return st.SUPPORTED if judged else st.NOT_RUN
    return judged.pop() if judged in ({st.NOT_SUPPORTED}, {st.ONE_SEED}) else st.INCONSISTENT_SEEDS


def _seed_claim_rows(per_seed: pd.DataFrame, claims: Sequence[Claim], rows) -> None:
    for claim in claims:
        kind, bound = T.parse_tolerance(claim.bound)
        threshold = f"{kind} {bound:g}; {_beyond(claim)}, {_HOLM}"
        threshold += ", in at least one setup" if claim.scope == "any setup" else ""
        ours = per_seed[per_seed["claim"] == claim.name]
        if ours.empty:
            note = "no run of this question in the results"
            rows.append(_row(claim, "all", math.nan, threshold, st.NOT_RUN, "", note))
        for setup, group in ours.groupby("setup", sort=False):
            ordered = group.sort_values("seed")["value"].astype(float)
            values = T.finite(ordered)
            none = "" if values else "no seed with a defined value"
            evidence = "per seed: " + ", ".join(f"{v:.3g}" for v in ordered)
            mean = np.mean(values) if values else None
            at = dict(per_seed=values, evidence=evidence, missing=none)
            m = measurement(claim.study, claim.quantity, setup, setup, mean, **at)
            _claim_row(claim, setup, threshold, pd.Series(m), rows)


def _collapse_any_setup(table: pd.DataFrame, claims: Sequence[Claim]) -> pd.DataFrame:
    """Each ``any setup`` claim's settled rows as one, where its first setup stood, at the mean
    furthest the claimed way."""
    for claim in (c for c in claims if c.scope == "any setup"):
        each = table[(table["claim"] == claim.name) & (table["setup"] != "all")]
        if each.empty:
            continue
        pick = max if claim.bound.startswith("above") else min
        table.loc[each.index[0], ["setup", "measured", "verdict", "evidence", "note"]] = [
            "any setup",
            pick(each["measured"].astype(float)),
            judge_any_setup(list(each["verdict"])),
            "; ".join(each["setup"] + ": " + each["evidence"]),
            "; ".join(each["setup"] + ": " + each["verdict"] + " (" + each["note"] + ")"),
        ]
        table = table.drop(index=each.index[1:])
    return table.reset_index(drop=True)


def mark_undecided(table: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    """``table`` with a row whose seeds are all undecided read *not decided*."""
    counts = values.groupby(["claim", "setup"])["undecided"].agg(["sum", "size"])
    table = table.join(counts, on=["claim", "setup"])
    for index, row in table[table["sum"] > 0].iterrows():
        said = (
            f"{int(row['sum'])} of {int(row['size'])} seeds: the criterion and the silhouette both"
            " best at the same end of the run (its first or last recorded update), so the run"
            " cannot tell whether their optima differ"
        )
        if row["sum"] == row["size"]:
            table.loc[index, ["verdict", "measured", "note"]] = [st.NOT_DECIDED, math.nan, said]
        else:
            table.loc[index, "note"] = f"{row['note']}; {said} (left out of the test)"
    return table.drop(columns=["sum", "size"])


ERROR_CONTROL = (
    "How the claims are tested: docs/verdicts.md. A direction is *supported* when every seed goes "
    f"that way and a one-sided t over seeds is significant at {T.ALPHA:g}, Holm-adjusted within "
    "declared families (paper × study; the same families on the extension and CLS pages): "
    f"{T.ALPHA:g} bounds the chance of any false *supported* in a family. Families: {{families}}."
)


def verdict_cells(table: pd.DataFrame) -> list[str]:
    """Each row's verdict as the pages print it (on a stand-in, near-guaranteed)."""
    return [
        MARKS[row["verdict"]] + T.said(STAND_IN_NOTE in str(row["note"]), row)
        for row in table.to_dict("records")
    ]


def claims_markdown(table: pd.DataFrame, title: str = "Claims check") -> str:
    """The claims page: the tally of verdicts, then every row."""
    counts = T.counted(table).value_counts()
    notes = table["note"].astype(str)
    shown = table[["study", "setup", "claim", "measured", "threshold", "verdict"]].assign(
        measured=[flagged(T.fmt(v), n) for v, n in zip(table["measured"], notes)],
        verdict=verdict_cells(table),
        note=notes,
    )
    paragraphs = [
        "Each claim of the replicated papers, checked on this run's results "
        "(`results/claims.csv` holds the same rows).",
        ERROR_CONTROL.replace("{families}", family_sizes(notes, "tests")),
        " · ".join(f"{MARKS[v]}: {int(counts.get(v, 0))}" for v in CLAIM_MARKS)
        + f" · not counted ({T.WHY_NEAR_GUARANTEED}): {int(counts.get(T.NEAR_GUARANTEED, 0))}",
    ]
    return verdict_page(title, paragraphs, {"Every check": shown})
