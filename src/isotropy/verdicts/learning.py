"""Did a fine-tuned model learn its task? The guard every page applies before judging a row
about a fine-tuned model (docs/verdicts.md, "The learning guard")."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.statistics import NOT_LEARNED
from isotropy.verdicts.tolerances import ALPHA, finite

NO_BASELINE = (
    "no majority baseline recorded (runs from before the learning guard): whether the model "
    "learned cannot be told, so it is not judged"
)


def learning_test(accuracies: Sequence[float], baseline: float, n_eval: int) -> float:
    """One-sided p that the seeds' accuracy is above ``baseline`` (a fraction) on ``n_eval``
    examples: T = (mean − b) / sqrt(s² / n + b (1 − b) / N), Welch–Satterthwaite df. Every seed
    scores the same N examples, so that noise does not shrink with more seeds (a t over seeds
    alone would call 53.5% against 52.7% "learned" on RTE's 277 pairs)."""
    if not 0 < baseline < 1:
        raise ValueError(f"the majority baseline must lie in (0, 1), got {baseline}")
    if n_eval < 1:
        raise ValueError(f"the evaluated examples must be at least 1, got {n_eval}")
    values = np.asarray(accuracies, dtype=float)
    if values.size == 0:
        return math.nan
    shared = baseline * (1 - baseline) / n_eval  # the evaluation set's noise under H0
    seeds = values.var(ddof=1) / values.size if values.size > 1 else 0.0
    statistic = (values.mean() - baseline) / math.sqrt(seeds + shared)
    df = (seeds + shared) ** 2 / (seeds**2 / (values.size - 1)) if seeds > 0 else math.inf
    return float(stats.t.sf(statistic, df))  # df inf: the normal's


def not_learned_note(accuracies: Iterable[float], baselines: Any, n_evals: Any) -> str:
    """The guard on one setup's seeds: '' when they learned, else why not."""
    baseline, n_eval = np.asarray(baselines, dtype=float), np.asarray(n_evals, dtype=float)
    if not (baseline.size and n_eval.size) or not np.isfinite([*baseline, *n_eval]).all():
        return NO_BASELINE
    seeds = finite(accuracies)
    if (p := learning_test(seeds, float(baseline[0]), int(n_eval[0]))) < ALPHA:
        return ""
    return (
        f"accuracy not above the majority baseline {100 * baseline[0]:.1f}% (per seed: "
        f"{', '.join(f'{100 * a:.1f}' for a in seeds)}; one-sided p = {p:.2g} over "
        f"{len(seeds)} seed(s) and {int(n_eval[0])} evaluated examples)"
    )


def guard_rows(table: pd.DataFrame, unlearned: Mapping[tuple[str, str], str]) -> pd.DataFrame:
    """``table`` with each (claim, setup) in ``unlearned`` :data:`NOT_LEARNED`, why first."""
    guarded = table.to_dict("records")
    for row in guarded:
        if (why := unlearned.get((str(row["claim"]), str(row["setup"])))) is not None:
            note = str(row.get("note") or "")
            row.update(verdict=NOT_LEARNED, note=f"{why}; {note}" if note else why)
    return pd.DataFrame(guarded, columns=table.columns)


HELDOUT_CLAIMS = ("heldout_isoscore_follows", "heldout_silhouette_follows")


def guard_heldout_claims(table: pd.DataFrame, seeds: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the held-out claims of a setup not shown to learn :data:`NOT_LEARNED`."""
    unlearned: dict[tuple[str, str], str] = {}
    inputs = (("heldout", "final_accuracy"), ("run", "majority_baseline"), ("run", "heldout_items"))
    for setup, run in seeds[seeds["question"] == "heldout"].groupby("setup", sort=False):
        picked = run.sort_values("seed").groupby(["item", "quantity"])["value"].apply(list)
        if note := not_learned_note(*(picked.get(key, []) for key in inputs)):
            unlearned |= {(claim, f"{setup}/heldout"): note for claim in HELDOUT_CLAIMS}
    return guard_rows(table, unlearned)
