"""The tables of the cluster-based method on CLS inside fine-tuning (config ``rajaee_cls``), from
the runs' metrics.json files, and its two claims judged over seeds (plain pandas, no torch).

- runs.csv: one row per run (model, task, method, seed): the task's validation accuracy, I(W)
  of the last layer's validation CLS states (the model's own, before the method), I(W) of what
  the head read (after the method), IsoScore of the last layer.
- layers.csv: one row per run × layer: I(W), IsoScore, norm of the mean CLS state and mean CLS
  norm, norm of the mean token state and mean token norm.
- claims: the slides' "the method cannot raise CLS isotropy during fine-tuning" and "CLS tokens
  are already zero-mean", as :class:`isotropy.statistics.SeedClaim` rows (the study's record,
  :mod:`isotropy.studies.rajaee_cls`) judged with
  :func:`isotropy.verdicts.claims.check_seed_claims` (every seed, or a sign test).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

RUN_COLUMNS = [
    "model",
    "task",
    "method",
    "seed",
    "train_examples",
    "epochs",
    "steps",
    "accuracy",
    "majority_baseline",
    "cls_iw",
    "cls_iw_head_input",
    "cls_isoscore",
    "eval_sentences",
]
LAYER_COLUMNS = [
    "model",
    "task",
    "method",
    "seed",
    "layer",
    "iw",
    "isoscore",
    "cls_mean_norm",
    "cls_norm",
    "token_mean_norm",
    "token_norm",
]


def read_run(path: str | os.PathLike) -> dict:
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    if "cls_iw_layers" not in record:
        raise ValueError(
            f"{path} has no per-layer CLS geometry (cls_iw_layers): it predates the CLS study; "
            "delete it so that its fine-tuning re-runs"
        )
    if record.get("majority_baseline") is None:
        raise ValueError(
            f"{path} has no majority_baseline: it predates the learning guard "
            "(isotropy.verdicts.learning); delete it so that its fine-tuning re-runs"
        )
    return record


def collect(
    metrics_files: Iterable[str | os.PathLike], runs: list[dict]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs table, layers table) of the runs' metrics.json files, in the order of ``runs``
    (each: model, task, method, seed as the workflow names them)."""
    run_rows, layer_rows = [], []
    for path, run in zip(metrics_files, runs, strict=True):
        record = read_run(path)
        keys = {k: run[k] for k in ("model", "task", "method", "seed")}
        run_rows.append(
            {
                **keys,
                "train_examples": record["train_examples"],
                "epochs": record["settings"]["epochs"],
                "steps": record["steps"],
                "accuracy": record["scores"]["accuracy"],
                "majority_baseline": record["majority_baseline"],
                "cls_iw": record["cls_iw"],
                "cls_iw_head_input": record["cls_iw_head_input"],
                "cls_isoscore": record["cls_isoscore_layers"][-1],
                "eval_sentences": record["eval_sentences"],
            }
        )
        for layer in range(len(record["cls_iw_layers"])):
            layer_rows.append(
                {
                    **keys,
                    "layer": layer + 1,
                    **{c: record[f"cls_{c}_layers"][layer] for c in LAYER_COLUMNS[5:]},
                }
            )
    return pd.DataFrame(run_rows, columns=RUN_COLUMNS), pd.DataFrame(
        layer_rows, columns=LAYER_COLUMNS
    )


def claim_values(runs: pd.DataFrame, layers: pd.DataFrame) -> pd.DataFrame:
    """Per-seed values of the CLS claims (:data:`isotropy.studies.rajaee_cls.CLAIMS`; columns
    claim, setup, seed, value; setup = model/task): the log10 I(W) ratio of the paired runs with
    and without the method (same seed), and per run without the method, log10 of the largest
    ‖mean CLS‖ / ‖mean token‖ over layers."""
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=False):
        setup = f"{model}/{task}"
        by_method = {m: g.set_index("seed")["cls_iw"] for m, g in group.groupby("method")}
        if "none" in by_method and "cluster" in by_method:
            for seed in sorted(set(by_method["none"].index) & set(by_method["cluster"].index)):
                ratio = by_method["cluster"][seed] / by_method["none"][seed]
                value = math.log10(ratio) if ratio > 0 else math.nan
                rows.append(("cls_method_cannot_raise_isotropy", setup, seed, value))
    plain = layers[layers["method"] == "none"]
    for (model, task, seed), group in plain.groupby(["model", "task", "seed"], sort=False):
        largest = float((group["cls_mean_norm"] / group["token_mean_norm"]).max())
        rows.append(("cls_already_zero_mean", f"{model}/{task}", seed, math.log10(largest)))
    return pd.DataFrame(rows, columns=["claim", "setup", "seed", "value"])


def accuracy_differences(runs: pd.DataFrame, claim: str) -> pd.DataFrame:
    """Per seed, accuracy with the method minus without it (the same seed), as ``claim``'s
    values (columns claim, setup, seed, value)."""
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=False):
        by_method = {m: g.set_index("seed")["accuracy"] for m, g in group.groupby("method")}
        if "none" in by_method and "cluster" in by_method:
            both = by_method["cluster"].to_frame("with").join(by_method["none"].rename("without"))
            for seed, row in both.dropna().iterrows():
                rows.append((claim, f"{model}/{task}", seed, row["with"] - row["without"]))
    return pd.DataFrame(rows, columns=["claim", "setup", "seed", "value"])


def accuracy_summary(runs: pd.DataFrame) -> dict[str, float]:
    """Mean accuracy without and with the method and the mean paired difference (with − without,
    same seed) with its 95% t-interval over the seeds, all from the unrounded values."""
    from scipy import stats

    differences = accuracy_differences(runs, "")["value"].to_numpy(dtype=float)
    n = len(differences)
    mean = float(differences.mean())
    half = float(stats.t.ppf(0.975, n - 1) * differences.std(ddof=1) / math.sqrt(n))
    accuracy = runs.groupby("method")["accuracy"].mean()
    return dict(
        without=float(accuracy["none"]),
        with_method=float(accuracy["cluster"]),
        difference=mean,
        low=mean - half,
        high=mean + half,
        seeds=n,
    )
