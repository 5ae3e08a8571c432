"""The papers' claims as checks on our results: ``results/claims.{csv,md}``.

Each claim names a measured quantity (:mod:`isotropy.verdicts.measurements`, the same table
the comparison with the papers reads) and how it is tested over seeds; one row per claim × setup
with the measured value, the rule and a verdict: ``supported``, ``not supported``,
``inconclusive``, ``1 seed: not judged``, ``inconsistent across seeds`` or ``not run``.

Rules (issue 47): a claim is about every run, so it is judged on each seed, never on a pooled
number alone.

* ``direction`` (silhouette rises, IsoScore falls, Pearson r negative): *supported* when every
  seed goes the stated way **and** a one-sided t-test over the per-seed values (Fisher z for r)
  is significant after Holm's adjustment over every test row of the page; *not supported* when
  most seeds go the other way or the test the other way is significant; else *inconclusive*.
* ``every_run`` (Spearman ρ "always below −0.998", the paper's own bound): each seed's ρ against
  the bound; one seed failing makes it *not supported*.
* ``relative_spread`` (seeds agree): the largest std across seeds of the final IsoScore or
  silhouette, divided by the size of its mean change, below 0.05 (the spread negligible against
  the effect).
* ``seeds_below`` / ``seeds_above`` (I-STAR, one row per λ < 0): the one-sided t-test against no
  regulariser, Holm-adjusted over the whole page (every model × task × λ and the direction
  rows together), not per model × task.
* a bound on a single value (the cluster-based method's I(W) ratio > 1 and Spearman gain > 0).

A claim measured on a stand-in (GloVe for word2vec, WordNet labels) is judged (a direction or a
sign, not a number) and the note says which stand-in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.verdicts.equivalence import holm
from isotropy.verdicts.tolerances import (
    ALPHA,
    CONSISTENT,
    INCONCLUSIVE,
    INCONSISTENT_SEEDS,
    NOT_CONSISTENT,
    ONE_SEED,
    fisher_z,
    holds_bound,
    judge,
    judge_measurement,
    parse_tolerance,
)

COLUMNS = ["claim", "study", "setup", "statement", "measured", "threshold", "verdict", "paper", "evidence", "note"]  # fmt: skip
SUPPORTED, NOT_SUPPORTED, NOT_RUN = "supported", "not supported", "not run"
CLAIM_VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONSISTENT_SEEDS, INCONCLUSIVE, ONE_SEED, NOT_RUN)
SPEARMAN_LIMIT = -0.998  # Mickus et al. §3.2: ρ "always below −0.998"
GLUE_SPEARMAN_LIMIT = -0.5  # appendix A: "strongly negative", its bounds lost from our copy
SEED_SPREAD_LIMIT = 0.05  # std of the final value across seeds / |mean change|


@dataclass(frozen=True)
class Claim:
    """One claim: what it says, the measured quantity and its bound, where the paper states it."""

    name: str
    study: str
    quantity: str
    statement: str
    bound: str  # a tolerance of isotropy.verdicts.tolerances: below:x, above:x, at_least:x
    paper: str
    rule: str = "value"  # direction, every_run, relative_spread, value (module docstring)


def _optimisation(study: str, curves: str, correlation: str, seeds: str, rho: float) -> list[Claim]:
    return [
        Claim("silhouette_rises", study, "silhouette_change", "silhouette rises over training (last step − step 0) in every seed", "above:0", curves, "direction"),
        Claim("isoscore_falls", study, "isoscore_change", "IsoScore falls over training (last step − step 0) in every seed", "below:0", curves, "direction"),
        Claim("spearman_strongly_negative", study, "spearman_rho", f"Spearman ρ between IsoScore and silhouette is below {rho:g} in every seed", f"below:{rho}", correlation, "every_run"),
        Claim("pearson_negative", study, "pearson_r", "Pearson r between IsoScore and silhouette is negative in every seed", "below:0", correlation, "direction"),
        Claim("seeds_agree", study, "seed_spread", f"the spread across seeds is negligible against the change (std of the final IsoScore / silhouette below {SEED_SPREAD_LIMIT:g} of its mean change)", f"below:{SEED_SPREAD_LIMIT}", seeds, "relative_spread"),
    ]  # fmt: skip


CLAIMS = [
    *_optimisation("main", "Mickus et al. 2024, §3 and Figure 2", "Mickus et al. 2024, §3.2 (ρ always below −0.998)", "Mickus et al. 2024, §3", SPEARMAN_LIMIT),
    *_optimisation("glue", "Mickus et al. 2024, appendix A, Figure 4", "Mickus et al. 2024, appendix A, Table 3 (strongly negative; our reading −0.5)", "Mickus et al. 2024, §3 / appendix A", GLUE_SPEARMAN_LIMIT),
    Claim("negative_lambda_lowers_isoscore", "istar", "istar_isoscore_change", "I-STAR with this negative λ gives lower IsoScore* than no regulariser (over seeds, Holm over the page)", "seeds_below:0", "Rudman & Eickhoff 2024, Figure 5", "seeds"),
    Claim("negative_lambda_improves_task", "istar", "istar_metric_gain", "I-STAR with this negative λ scores higher on the task than no regulariser (over seeds, Holm over the page)", "seeds_above:0", "Rudman & Eickhoff 2024, Figure 6", "seeds"),
    Claim("cluster_based_raises_isotropy", "geometry", "sts_isotropy_ratio", "the cluster-based method raises isotropy I(W) over the raw embeddings (ratio)", "above:1", "Rajaei & Sheikhi 2020 slides, before/after table (I(W))"),
    Claim("cluster_based_raises_sts", "geometry", "sts_spearman_gain", "the cluster-based method raises STS Spearman correlation (×100) over the raw embeddings", "above:0", "Rajaei & Sheikhi 2020 slides, before/after table"),
]  # fmt: skip
ABSENT = {
    "main": "the main study is not configured in this run",
    "glue": "the glue study is not configured in this run",
    "istar": "the I-STAR study is not part of this run (config studies)",
    "geometry": "results/geometry/sts.csv is not part of this run (make the geometry study first)",
}


def _row(claim: Claim, setup: str, measured: float, threshold: str, verdict: str, evidence: str = "", note: str = "") -> dict:  # fmt: skip
    return {
        "claim": claim.name, "study": claim.study, "setup": setup, "statement": claim.statement,
        "measured": measured, "threshold": threshold, "verdict": verdict, "paper": claim.paper,
        "evidence": evidence, "note": note,
    }  # fmt: skip


def direction_test(claim: Claim, values: list[float]) -> tuple[float, float, int, int]:
    """(one-sided p in the claimed direction, p the other way, seeds that go the claimed way,
    seeds) of a direction claim; r on Fisher's z. p NaN with fewer than two seeds."""
    kind, bound = parse_tolerance(claim.bound)
    y = fisher_z(values) if claim.quantity in ("pearson_r", "spearman_rho") else np.asarray(values)
    along = int(sum(holds_bound(kind, bound, v) for v in values))
    if len(y) < 2:
        return math.nan, math.nan, along, len(y)
    if np.ptp(y) == 0:  # every seed the same value: no spread, the sign decides
        way = holds_bound(kind, bound, float(values[0]))
        return (0.0, 1.0, along, len(y)) if way else (1.0, 0.0, along, len(y))
    less, greater = (float(stats.ttest_1samp(y, fisher_z([bound])[0] if claim.quantity.endswith(("_r", "_rho")) else bound, alternative=a).pvalue) for a in ("less", "greater"))  # fmt: skip
    return (less, greater, along, len(y)) if kind == "below" else (greater, less, along, len(y))


def _judge_claim(claim: Claim, m: pd.Series) -> tuple[str | None, str, tuple[float, float] | None]:
    """(verdict, or None when the page's Holm adjustment decides; the rule in words; raw p-values)."""
    kind, bound = parse_tolerance(claim.bound)
    values = [float(v) for v in (m["per_seed"] or ()) if math.isfinite(float(v))]
    if claim.rule == "direction":
        p_claim, p_other, along, n = direction_test(claim, values)
        text = f"{along} of {n} seeds {kind} {bound:g}; one-sided t over seeds, Holm over the page"
        if n < 2:  # one run going the other way contradicts a claim about every run
            return (NOT_SUPPORTED if along < n else ONE_SEED), text, None
        return None, text, (p_claim, p_other)
    if claim.rule == "every_run":
        if not values:
            return NOT_SUPPORTED, "no seed with a defined value", None
        failing = [v for v in values if not holds_bound(kind, bound, v)]
        text = f"{kind} {bound:g} in every seed: {len(values) - len(failing)} of {len(values)} hold"
        if failing:
            return NOT_SUPPORTED, text + " (failing: " + ", ".join(f"{v:+.4g}" for v in failing) + ")", None  # fmt: skip
        return SUPPORTED, text, None
    if claim.rule == "seeds":
        p_claim, p_other = (m["p_less"], m["p_greater"]) if kind == "seeds_below" else (m["p_greater"], m["p_less"])  # fmt: skip
        if not math.isfinite(m["seeds"]) or m["seeds"] < 2:
            return ONE_SEED, "one seed: no spread to test with", None
        return None, f"{'<' if kind == 'seeds_below' else '>'} {bound:g}: one-sided t over {int(m['seeds'])} seeds, Holm over the page", (p_claim, p_other)  # fmt: skip
    verdict, text = judge_measurement(claim.bound, m)
    return {CONSISTENT: SUPPORTED, NOT_CONSISTENT: NOT_SUPPORTED}.get(verdict, verdict), text, None


def _settle(claim: Claim, measured: pd.Series, p_claim: float, p_other: float) -> str:
    if claim.rule == "direction":
        kind, bound = parse_tolerance(claim.bound)
        values = [float(v) for v in measured["per_seed"] if math.isfinite(float(v))]
        along = sum(holds_bound(kind, bound, v) for v in values)
        if along == len(values) and p_claim < ALPHA:
            return SUPPORTED
        if along < len(values) / 2 or p_other < ALPHA:
            return NOT_SUPPORTED
        return INCONCLUSIVE
    if math.isfinite(p_claim) and p_claim < ALPHA:
        return SUPPORTED
    return NOT_SUPPORTED if math.isfinite(p_other) and p_other < ALPHA else INCONCLUSIVE


def check_claims(measured: pd.DataFrame, studies: set[str]) -> pd.DataFrame:
    """Every claim judged on the measurements (``studies``: the studies this run has results of).
    The tested rows (directions, I-STAR) are settled together: Holm over all of them."""
    rows, tests = [], []
    for study in dict.fromkeys(c.study for c in CLAIMS):
        claims = [c for c in CLAIMS if c.study == study]
        ours = measured[measured["study"] == study]
        if study not in studies:
            rows += [_row(c, "all", math.nan, judge(c.bound, 0.0)[1], NOT_RUN, note=ABSENT[study]) for c in claims]  # fmt: skip
            continue
        setups = sorted(set(ours.loc[ours["quantity"].isin([c.quantity for c in claims]), "setup"]))
        if not setups:
            rows += [_row(c, "all", math.nan, judge(c.bound, 0.0)[1], NOT_RUN, note=f"no results of the {study} study to measure") for c in claims]  # fmt: skip
        for setup in setups:
            for claim in claims:
                found = ours[(ours["setup"] == setup) & (ours["quantity"] == claim.quantity)]
                threshold = judge(claim.bound, 0.0)[1]
                if found.empty:
                    rows.append(_row(claim, setup, math.nan, threshold, NOT_RUN, note=f"no {claim.quantity} measured for this setup"))  # fmt: skip
                    continue
                m = found.iloc[0]
                if m["missing"]:
                    rows.append(_row(claim, setup, math.nan, threshold, NOT_RUN, m["evidence"], m["missing"]))  # fmt: skip
                    continue
                verdict, rule, p = _judge_claim(claim, m)
                parts = [rule, m["note"] or ("" if math.isfinite(m["value"]) else "measurement undefined")]  # fmt: skip
                if claim.quantity in ("pearson_r", "spearman_rho") and math.isfinite(m["n"]):
                    parts.insert(1, f"{int(m['n'])} points pooled")
                if m["stand_in"]:
                    parts.append(f"judged on a stand-in (a direction, not a number): {m['stand_in']}")  # fmt: skip
                if p is not None:
                    tests.append((len(rows), claim, m, p))
                rows.append(_row(claim, setup, float(m["value"]), threshold, verdict or INCONCLUSIVE, m["evidence"], "; ".join(s for s in parts if s)))  # fmt: skip
    adjusted = zip(holm([p[0] for *_, p in tests]), holm([p[1] for *_, p in tests]))
    for (index, claim, m, _), (p_claim, p_other) in zip(tests, adjusted):
        rows[index]["verdict"] = _settle(claim, m, p_claim, p_other)
        # two digits: a p-value's third digit is float32 noise of the traces, not evidence
        rows[index]["note"] += f"; Holm over {len(tests)} tests: p {p_claim:.2g} (other way {p_other:.2g})"  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


ERROR_CONTROL = (
    "How the claims are tested (docs/verdicts.md): a claim is about every run, so it is judged per "
    "seed. A direction (silhouette rises, IsoScore falls, r negative) is *supported* when every seed "
    "goes that way and a one-sided t-test over seeds is significant (per row: a one-sided test at "
    f"{ALPHA:g}); the {{n}} tested rows of this page "
    f"(directions and every I-STAR model × task × λ) are Holm-adjusted together, so {ALPHA:g} bounds "
    "the chance of any false *supported* (or false *not supported* by the test) on the page. "
    "Bounds stated for every run (ρ below −0.998) are checked in every seed, and the seeds' spread "
    "against the size of the change; these are exact checks of our seeds, no test."
)


def _fmt(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{value:.4g}"


def claims_markdown(table: pd.DataFrame, title: str = "Claims check") -> str:
    """A short markdown summary: a tally per study and claim, then every row."""
    mark = {SUPPORTED: "✅ supported", NOT_SUPPORTED: "❌ not supported", INCONSISTENT_SEEDS: "⚠️ inconsistent across seeds",
            INCONCLUSIVE: "❔ inconclusive", ONE_SEED: "➖ 1 seed: not judged", NOT_RUN: "➖ not run"}  # fmt: skip
    counts = table["verdict"].value_counts()
    lines = [
        f"# {title}",
        "",
        "Each claim of the replicated papers, checked on this run's results "
        "(`results/claims.csv` holds the same rows).",
        "",
        ERROR_CONTROL.replace("{n}", str(int(table["note"].astype(str).str.contains("Holm over").sum()))),
        "",
        " · ".join(f"{mark[v]}: {int(counts.get(v, 0))}" for v in CLAIM_VERDICTS),
        "",
        "## By claim",
        "",
        "| study | claim | paper | " + " | ".join(CLAIM_VERDICTS) + " |",
        "|---|---|---|" + "---|" * len(CLAIM_VERDICTS),
    ]  # fmt: skip
    for (study, claim), group in table.groupby(["study", "claim"], sort=False):
        tally = group["verdict"].value_counts()
        lines.append(
            f"| {study} | {claim} | {group['paper'].iloc[0]} | "
            + " | ".join(str(int(tally.get(v, 0))) for v in CLAIM_VERDICTS)
            + " |"
        )
    lines += [
        "",
        "## Every check",
        "",
        "| study | setup | claim | measured | threshold | verdict | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples(index=False):
        note = str(row.note).replace("|", "\\|")
        lines.append(
            f"| {row.study} | {row.setup} | {row.claim} | {_fmt(row.measured)} | {row.threshold} | {mark[row.verdict]} | {note} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The main paper's open questions (the extension study, isotropy.extensions): each claim is a
# direction judged per seed — it holds in every seed, or a one-sided sign test over the seeds
# says so — so that it plugs into any judgement over seeds (judge_seeds is the one place).
SIGN_TEST_ALPHA = 0.05


@dataclass(frozen=True)
class SeedClaim:
    """A claim about a per-seed value's direction: ``above`` or ``below`` ``bound``.

    ``scope`` ``each setup`` judges every setup on its own (one row each); ``any setup`` is an
    existence claim ("need not", "not necessarily"): one row, supported when some setup holds
    by the test over its seeds, not supported when every setup goes the other way."""

    name: str
    statement: str
    direction: str
    paper: str
    bound: float = 0.0
    scope: str = "each setup"


_OPEN = "Mickus et al. 2024, Limitations"
EXTENSION_CLAIMS = [
    SeedClaim(
        "criteria_same_optimum",
        "the criterion (oriented: higher = better clusters) is at its best at the recorded update"
        " where the silhouette is: |update of its optimum - update of the silhouette's| < 1,"
        " over the layouts the linear head's optimisation visits (the criterion is not itself"
        " optimised)",
        "below",
        f"{_OPEN} (choice of objectives: 'imply the same optimum layout as Equation 4')",
        bound=1.0,
    ),
    SeedClaim(
        "deep_output_anisotropic",
        "a deep head's output embeddings (its top hidden layer, input of its linear classifier)"
        " become less isotropic over the optimisation (IsoScore last - step 0 < 0)",
        "below",
        f"{_OPEN} (deep classifiers: output embeddings 'would tend to be anisotropic')",
    ),
    SeedClaim(
        "anisotropy_spreads_down",
        "anisotropy reaches every layer below the top, to some extent: each lower hidden"
        " layer's and the table's IsoScore falls, by any amount (largest change < 0)",
        "below",
        f"{_OPEN} (deep classifiers: 'spread to bottom layers to some extent')",
    ),
    SeedClaim(
        "triplet_need_not_be_anisotropic",
        "triplet training does not necessarily make the table anisotropic: in at least one"
        " setup the table's IsoScore does not fall (last - step 0 > 0) by the test over seeds;"
        " not supported = every setup falls (no such setup here, which cannot refute 'need not')",
        "above",
        "Mickus et al. 2024, appendix B ('does not entail ... will necessarily develop"
        " anisotropic representations')",
        scope="any setup",
    ),
    SeedClaim(
        "heldout_isoscore_follows",
        "fine-tuned end to end until the stated convergence (or max_epochs), the held-out"
        " sentences' IsoScore falls, the trained items' direction in the paper's argument"
        " (last epoch - epoch 0 < 0)",
        "below",
        f"{_OPEN} (idealised conditions: 'trained until convergence on held out data')",
    ),
    SeedClaim(
        "heldout_silhouette_follows",
        "fine-tuned end to end until the stated convergence (or max_epochs), the held-out"
        " sentences' silhouette rises, the trained items' direction in the paper's argument"
        " (last epoch - epoch 0 > 0)",
        "above",
        f"{_OPEN} (idealised conditions: 'trained until convergence on held out data')",
    ),
]


def judge_seeds(
    values, direction: str, bound: float = 0.0, alpha: float = SIGN_TEST_ALPHA
) -> tuple[str, str]:
    """(verdict, note) of a per-seed direction: supported when every seed lies beyond ``bound``
    in ``direction`` or a one-sided sign test says so (p < alpha), not supported when every seed
    or the sign test says the other way, inconsistent across seeds otherwise; one seed is not
    judged, none is not run. A seed on the bound counts against the claim."""
    from scipy.stats import binomtest

    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below', got {direction!r}")
    x = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    n = int(x.size)
    if n == 0:
        return NOT_RUN, "no finite per-seed value"
    if n == 1:
        return ONE_SEED, f"1 seed: {x[0]:.4g}"
    holds = int(((x > bound) if direction == "above" else (x < bound)).sum())
    p_for = binomtest(holds, n, 0.5, alternative="greater").pvalue
    p_against = binomtest(n - holds, n, 0.5, alternative="greater").pvalue
    note = f"{holds}/{n} seeds {direction} {bound:g}; sign test p = {p_for:.3g}"
    if holds == n or p_for < alpha:
        return SUPPORTED, note
    if holds == 0 or p_against < alpha:
        return NOT_SUPPORTED, note
    return INCONSISTENT_SEEDS, note


def judge_any_setup(verdicts: list[str]) -> str:
    """The verdict of an existence claim from its setups' verdicts (judge_seeds): supported when
    some setup is, not supported when every judged setup is not, not run without any, one seed
    when no setup has more, inconsistent across seeds otherwise."""
    judged = [v for v in verdicts if v != NOT_RUN]
    if not judged:
        return NOT_RUN
    if SUPPORTED in judged:
        return SUPPORTED
    if all(v == NOT_SUPPORTED for v in judged):
        return NOT_SUPPORTED
    if all(v == ONE_SEED for v in judged):
        return ONE_SEED
    return INCONSISTENT_SEEDS


def check_seed_claims(
    per_seed: pd.DataFrame, claims: list[SeedClaim] = EXTENSION_CLAIMS, study: str = "extensions"
) -> pd.DataFrame:
    """Every claim judged per setup on per-seed values (columns claim, setup, seed, value), or
    once over its setups for an ``any setup`` claim (measured: the largest setup mean for
    ``above``, the smallest for ``below``); a claim without values gets one ``not run`` row.
    Rows in :data:`COLUMNS`."""
    rows = []
    for claim in claims:
        rule = f"in every seed or by a sign test (p < {SIGN_TEST_ALPHA})"
        threshold = f"{claim.direction} {claim.bound:g} {rule}"
        if claim.scope == "any setup":
            threshold = f"{threshold}, in at least one setup"
        as_claim = Claim(claim.name, study, claim.name, claim.statement, "", claim.paper)
        ours = per_seed[per_seed["claim"] == claim.name]
        if ours.empty:
            missing = "no run of this question in the results"
            rows.append(_row(as_claim, "all", math.nan, threshold, NOT_RUN, note=missing))
        judged = []
        for setup, group in ours.groupby("setup", sort=False):
            verdict, note = judge_seeds(group["value"], claim.direction, claim.bound)
            values = group.sort_values("seed")["value"]
            seeds = ", ".join(f"{v:.3g}" for v in values)
            judged.append((setup, float(values.mean()), verdict, f"per seed: {seeds}", note))
        if claim.scope == "any setup" and judged:
            pick = max if claim.direction == "above" else min
            measured = pick(mean for _, mean, *_ in judged)
            verdict = judge_any_setup([v for _, _, v, *_ in judged])
            evidence = "; ".join(f"{s}: {e}" for s, _, _, e, _ in judged)
            note = "; ".join(f"{s}: {v} ({n})" for s, _, v, _, n in judged)
            rows.append(_row(as_claim, "any setup", measured, threshold, verdict, evidence, note))
            continue
        for setup, mean, verdict, evidence, note in judged:
            rows.append(_row(as_claim, setup, mean, threshold, verdict, evidence, note))
    return pd.DataFrame(rows, columns=COLUMNS)
