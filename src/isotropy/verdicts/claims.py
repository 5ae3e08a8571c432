"""The papers' claims as checks on our results: ``results/claims.{csv,md}``.

Each claim names a measured quantity (:mod:`isotropy.verdicts.measurements`, the same table
the comparison with the papers reads) and a bound; one row per claim × setup with the measured
value, the bound, and a verdict: ``supported``, ``not supported`` (also when the measurement is
undefined, e.g. a correlation of a constant series) or ``not run`` (the study or setup is not
part of this run, or there is nothing to measure, e.g. the spread across seeds of one seed), and,
from the verdict engine, ``inconsistent across seeds`` (a correlation whose per-seed signs
disagree), ``inconclusive`` and ``1 seed: not judged`` (the seed tests of I-STAR); the words
are defined in :mod:`isotropy.verdicts`.

Direct optimisation (main: Mickus et al. §3, Figures 2-3; GLUE: appendix A, Figure 4, Table 3),
metrics as seed means: silhouette rises (> 0), IsoScore falls (< 0), Spearman ρ < −0.5,
Pearson r < 0, seeds agree (largest std of the final IsoScore and silhouette < 0.05).
I-STAR (Rudman & Eickhoff 2024, Figures 5-6), each λ < 0 against no regulariser over seeds
(Holm over λ): it lowers IsoScore* and raises the task metric. Cluster-based enhancement (Rajaei & Sheikhi 2020 slides): I(W) ratio > 1, Spearman
gain > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from isotropy.verdicts.tolerances import (
    CONSISTENT,
    INCONCLUSIVE,
    INCONSISTENT_SEEDS,
    NOT_CONSISTENT,
    ONE_SEED,
    judge,
    judge_measurement,
)

COLUMNS = ["claim", "study", "setup", "statement", "measured", "threshold", "verdict", "paper", "evidence", "note"]  # fmt: skip
SUPPORTED, NOT_SUPPORTED, NOT_RUN = "supported", "not supported", "not run"
CLAIM_VERDICTS = (SUPPORTED, NOT_SUPPORTED, INCONSISTENT_SEEDS, INCONCLUSIVE, ONE_SEED, NOT_RUN)
SPEARMAN_LIMIT = -0.5
SEED_SPREAD_LIMIT = 0.05


@dataclass(frozen=True)
class Claim:
    """One claim: what it says, the measured quantity and its bound, where the paper states it."""

    name: str
    study: str
    quantity: str
    statement: str
    bound: str  # a tolerance of isotropy.verdicts.tolerances: below:x, above:x, at_least:x
    paper: str


def _optimisation(study: str, curves: str, correlation: str, seeds: str) -> list[Claim]:
    return [
        Claim("silhouette_rises", study, "silhouette_change", "silhouette rises over training (last step − step 0, mean over seeds)", "above:0", curves),
        Claim("isoscore_falls", study, "isoscore_change", "IsoScore falls over training (last step − step 0, mean over seeds)", "below:0", curves),
        Claim("spearman_strongly_negative", study, "spearman_rho", "Spearman rho between IsoScore and silhouette is strongly negative (all steps, all seeds)", f"below:{SPEARMAN_LIMIT}", correlation),
        Claim("pearson_negative", study, "pearson_r", "Pearson r between IsoScore and silhouette is negative (all steps, all seeds)", "below:0", correlation),
        Claim("seeds_agree", study, "seed_spread", "the spread across seeds is negligible (largest std of final IsoScore, silhouette)", f"below:{SEED_SPREAD_LIMIT}", seeds),
    ]  # fmt: skip


CLAIMS = [
    *_optimisation("main", "Mickus et al. 2024, §3 and Figure 2", "Mickus et al. 2024, §3 and Figure 3", "Mickus et al. 2024, §3"),
    *_optimisation("glue", "Mickus et al. 2024, appendix A, Figure 4", "Mickus et al. 2024, appendix A, Table 3", "Mickus et al. 2024, §3 / appendix A"),
    Claim("negative_lambda_lowers_isoscore", "istar", "istar_isoscore_change", "I-STAR with this negative λ gives lower IsoScore* than no regulariser (over seeds, Holm over λ)", "seeds_below:0", "Rudman & Eickhoff 2024, Figure 5"),
    Claim("negative_lambda_improves_task", "istar", "istar_metric_gain", "I-STAR with this negative λ scores higher on the task than no regulariser (over seeds, Holm over λ)", "seeds_above:0", "Rudman & Eickhoff 2024, Figure 6"),
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


def check_claims(measured: pd.DataFrame, studies: set[str]) -> pd.DataFrame:
    """Every claim judged on the measurements (``studies``: the studies this run has results of)."""
    rows = []
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
                verdict, _ = judge_measurement(claim.bound, m)
                verdict = {CONSISTENT: SUPPORTED, NOT_CONSISTENT: NOT_SUPPORTED}.get(
                    verdict, verdict
                )
                note = m["note"] or ("" if math.isfinite(m["value"]) else "measurement undefined")
                if claim.quantity in ("pearson_r", "spearman_rho") and math.isfinite(m["n"]) and not note.startswith("undefined"):  # fmt: skip
                    note = (
                        f"{int(m['n'])} points; {m['note']}"
                        if m["note"]
                        else f"{int(m['n'])} points"
                    )
                rows.append(_row(claim, setup, float(m["value"]), threshold, verdict, m["evidence"], note))  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


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
    """A claim about a per-seed value's direction: ``above`` or ``below`` ``bound``."""

    name: str
    statement: str
    direction: str
    paper: str
    bound: float = 0.0


_OPEN = "Mickus et al. 2024, Limitations"
EXTENSION_CLAIMS = [
    SeedClaim("criteria_same_optimum", "the criterion (oriented: higher = better clusters) rises and falls with the silhouette (Spearman rho over steps > 0)", "above", f"{_OPEN} (choice of objectives)"),
    SeedClaim("deep_output_anisotropic", "a deep classifier's top hidden layer becomes less isotropic (IsoScore last - step 0 < 0)", "below", f"{_OPEN} (deep classifiers)"),
    SeedClaim("anisotropy_spreads_down", "every layer below the top (hidden layers and table) becomes less isotropic (largest IsoScore change < 0)", "below", f"{_OPEN} (deep classifiers: 'spread to bottom layers')"),
    SeedClaim("triplet_need_not_be_anisotropic", "triplet training over the labels does not lower the table's IsoScore (last - step 0 > 0)", "above", "Mickus et al. 2024, appendix B"),
    SeedClaim("heldout_isoscore_follows", "fine-tuned end to end, held-out sentences' IsoScore falls as the training trend's (last epoch - epoch 0 < 0)", "below", f"{_OPEN} (idealised conditions)"),
    SeedClaim("heldout_silhouette_follows", "fine-tuned end to end, held-out sentences' silhouette rises as the training trend's (last epoch - epoch 0 > 0)", "above", f"{_OPEN} (idealised conditions)"),
]  # fmt: skip


def judge_seeds(values, direction: str, bound: float = 0.0, alpha: float = SIGN_TEST_ALPHA) -> tuple[str, str]:  # fmt: skip
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


def check_seed_claims(per_seed: pd.DataFrame, claims: list[SeedClaim] = EXTENSION_CLAIMS, study: str = "extensions") -> pd.DataFrame:  # fmt: skip
    """Every claim judged per setup on per-seed values (columns claim, setup, seed, value);
    a claim without values gets one ``not run`` row. Rows in :data:`COLUMNS`."""
    rows = []
    for claim in claims:
        threshold = f"{claim.direction} {claim.bound:g} in every seed or by a sign test (p < {SIGN_TEST_ALPHA})"  # fmt: skip
        as_claim = Claim(claim.name, study, claim.name, claim.statement, "", claim.paper)
        ours = per_seed[per_seed["claim"] == claim.name]
        if ours.empty:
            rows.append(_row(as_claim, "all", math.nan, threshold, NOT_RUN, note="no run of this question in the results"))  # fmt: skip
        for setup, group in ours.groupby("setup", sort=False):
            verdict, note = judge_seeds(group["value"], claim.direction, claim.bound)
            seeds = ", ".join(f"{v:.3g}" for v in group.sort_values("seed")["value"])
            rows.append(_row(as_claim, setup, float(group["value"].mean()), threshold, verdict, f"per seed: {seeds}", note))  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)
