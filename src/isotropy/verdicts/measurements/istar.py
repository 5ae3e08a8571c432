"""The I-STAR grid: per model × task × λ < 0, the IsoScore* change and the metric gain over the
unregularised baseline, tested over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from isotropy import paths
from isotropy.standins import ISTAR_MODELS, model_stand_in, paper_name
from isotropy.statistics import Claim, fisher_z, smallest_detectable_effect
from isotropy.verdicts.claims import STAND_IN_NOTE, check_claims
from isotropy.verdicts.families import family_of_claim, settle_rows
from isotropy.verdicts.measurements import Config, Row, at_setup, fine_tuned_not_learned, seed_test
from isotropy.verdicts.tolerances import ALPHA, parse_tolerance
from isotropy.verdicts.tolerances import seed_test as seed_rule

# Each quantity's column of runs.csv (differenced λ minus no regulariser), what it is, and the
# smallest effect of interest its test is against (signed the claimed way) with its source.
ISTAR_QUANTITIES = {
    "istar_isoscore_change": (
        "isoscore_star",
        "IsoScore* (ζ = 0.75) of validation sentence embeddings",
        -0.001,
        "a convention set after the runs: an eighth of the baseline's",
    ),
    "istar_metric_gain": ("metric", "task metric", 0.01, "a convention set after the runs"),
}


def istar_measurements(runs: pd.DataFrame, config: Config, source=paths.ISTAR_RUNS) -> list[Row]:
    """The grid's rows, with raw one-sided p-values over seeds (each page adjusts over it)."""
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=True):
        paper = paper_name(config, model) in ISTAR_MODELS
        stand_in = "" if paper else model_stand_in(config, model, "BERT-base / ALBERT / DistilBERT")
        baseline = group[group["regulariser"] == "none"]
        negative = group[(group["regulariser"] == "istar") & (group["lambda"].astype(float) < 0)]
        fields = {"evidence": source, "stand_in": stand_in}
        if baseline.empty or negative.empty:
            why = "no baseline (regulariser none)" if baseline.empty else "no I-STAR run with λ < 0"
            at = at_setup("istar", f"{model}/{task}", seeds=group["seed"].nunique(), **fields)
            rows += [at(quantity, missing=why) for quantity in ISTAR_QUANTITIES]
            continue
        by_lambda = list(negative.groupby(negative["lambda"].astype(float), sort=True))
        for quantity, (column, convention, sesoi, _) in ISTAR_QUANTITIES.items():
            base = baseline[column].mean()
            for lam, treated in by_lambda:
                tested = seed_test(treated, baseline, column, sesoi)
                what = (
                    f"{convention}, λ = {lam:g} minus no regulariser, {tested['seeds']} seed(s); "
                    f"raw one-sided p against {sesoi:+g} (each page adjusts over its grid)"
                )
                note = f"baseline {base:.4f}; λ={lam:g}: {base + tested['value']:.4f}"
                # an I-STAR run's accuracy in runs.csv (tasks scored by accuracy)
                learned = fine_tuned_not_learned(baseline, treated, column="score_accuracy")
                at = at_setup("istar", f"{model}/{task}, λ={lam:g}", not_learned=learned, **fields)
                rows.append(at(quantity, convention=what, note=note, **tested))
    return rows


def seed_details(measured: list[Row], claims) -> pd.DataFrame:
    """Per tested claim × setup of the I-STAR grid: each seed's difference, the raw and Holm
    p-values, and the smallest difference its seeds detect (paired t at α/m, power 0.8)."""
    rows = []
    for claim in claims:
        ours = [m for m in measured if m["quantity"] == claim.quantity and m["per_seed"]]
        tests = [seed_rule(*parse_tolerance(claim.bound), m) for m in ours]
        family = family_of_claim(claim.study, claim.rule, claim.quantity)
        settled = settle_rows([dict(family=family, p_for=t[2], p_against=t[3]) for t in tests])
        for m, (_, _, p, other, along, valued), holm in zip(ours, tests, settled):
            values = np.asarray(m["per_seed"])
            rows.append(
                {
                    "setup": m["setup"],
                    "claim": claim.name,
                    "each seed": ", ".join(f"{v:+.3f}" for v in values),
                    "the claimed way": f"{along} of {valued}",
                    "p": p,
                    "p other way": other,
                    "p Holm": holm["p_for"],
                    "p Holm other way": holm["p_against"],
                    "family": f"{family} ({holm['size']} tests)",
                    "smallest detectable": smallest_detectable_effect(
                        float(values.std(ddof=1)), len(values), ALPHA / max(holm["size"], 1)
                    ),
                }
            )
    return pd.DataFrame(rows)


CORRELATION = Claim(
    "isotropy_correlates_negatively_with_performance",
    "istar",
    "isotropy_correlates_negatively_with_performance",
    "within each seed, Pearson r of IsoScore* and the task metric over the runs (no regulariser "
    "and I-STAR at every λ) is negative (values: Fisher z of r)",
    "below:0",
    "Rudman & Eickhoff 2024, poster (Figure 5)",
    "direction",
    sesoi=0.1,
    sesoi_source="a convention set after the runs",
)


def correlation_claim(runs: pd.DataFrame, stand_in: str) -> pd.DataFrame:
    """:data:`CORRELATION` judged on an I-STAR grid's runs.csv."""
    ours = runs[runs["regulariser"].isin(["none", "istar"])]
    rows = [
        (CORRELATION.name, f"{model}/{task}", seed, float(fisher_z([r])[0]))
        for (model, task, seed), group in ours.groupby(["model", "task", "seed"])
        if len(group) > 2
        for r in [stats.pearsonr(group["isoscore_star"], group["metric"])[0]]
    ]
    values = pd.DataFrame(rows, columns=["claim", "setup", "seed", "value"])
    table = check_claims(values, None, [CORRELATION])
    if stand_in:
        table["note"] = table["note"].astype(str) + f"; {STAND_IN_NOTE}: {stand_in}"
    return table
