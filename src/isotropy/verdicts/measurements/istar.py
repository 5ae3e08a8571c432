"""The I-STAR grid: per model × task × λ < 0, the IsoScore* change and the metric gain over the
unregularised baseline, tested over seeds."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.standins import ISTAR_MODELS, model_stand_in, paper_name
from isotropy.verdicts.measurements import fine_tuned_not_learned, measurement, seed_test

ACC = "score_accuracy"  # an I-STAR run's accuracy in runs.csv (tasks scored by accuracy)


# Each quantity's column of runs.csv, differenced λ minus no regulariser, and what it is.
ISTAR_QUANTITIES = {
    "istar_isoscore_change": (
        "isoscore_star",
        "IsoScore* (ζ = 0.75) of validation sentence embeddings",
    ),
    "istar_metric_gain": ("metric", "task metric"),
}


def istar_measurements(
    runs: pd.DataFrame, config: Mapping[str, Any], source: str = paths.ISTAR_RUNS
) -> list[dict[str, Any]]:
    """Per model × task × λ < 0: the IsoScore* change and the metric gain over the unregularised
    baseline, each tested over seeds (:func:`seed_test`), with raw one-sided p-values: each page
    Holm-adjusts them over its whole grid (every model × task × λ), so no best-of-several goes
    uncorrected."""
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=True):
        stand_in = ""
        if paper_name(config, model) not in ISTAR_MODELS:
            stand_in = model_stand_in(config, model, "BERT-base / ALBERT / DistilBERT")
        baseline = group[group["regulariser"] == "none"]
        negative = group[(group["regulariser"] == "istar") & (group["lambda"].astype(float) < 0)]
        at = partial(measurement, "istar", evidence=source, stand_in=stand_in)
        if baseline.empty or negative.empty:
            lacking = (
                "no baseline (regulariser none)" if baseline.empty else "no I-STAR run with λ < 0"
            )
            setup, seeds = f"{model}/{task}", int(group["seed"].nunique())
            rows += [
                at(q, setup=setup, paper_setup=setup, missing=lacking, seeds=seeds)
                for q in ISTAR_QUANTITIES
            ]
            continue
        lambdas = sorted(negative["lambda"].astype(float).unique())
        runs_at = {lam: negative[negative["lambda"].astype(float) == lam] for lam in lambdas}
        for quantity, (column, convention) in ISTAR_QUANTITIES.items():
            tests = [seed_test(runs_at[lam], baseline, column) for lam in lambdas]
            p_less, p_greater = [t[2] for t in tests], [t[3] for t in tests]
            base = baseline[column].mean()
            for lam, (diff, seeds, _, _), low, high in zip(lambdas, tests, p_less, p_greater):
                setup = f"{model}/{task}, λ={lam:g}"
                rows.append(
                    at(
                        quantity,
                        setup=setup,
                        paper_setup=setup,
                        value=diff,
                        seeds=seeds,
                        p_less=low,
                        p_greater=high,
                        convention=f"{convention}, λ = {lam:g} minus no regulariser, {seeds} "
                        "seed(s); raw one-sided p (each page adjusts over its whole grid)",
                        note=f"baseline {base:.4f}; λ={lam:g}: {base + diff:.4f}",
                        not_learned=fine_tuned_not_learned(baseline, runs_at[lam], column=ACC),
                    )
                )
    return rows
