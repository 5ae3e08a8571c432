"""The tables of the cluster-based method on CLS inside fine-tuning (config ``rajaee_cls``), from
the runs' metrics.json files, and its two claims judged over seeds (plain pandas, no torch).

runs.csv has one row per run (:data:`RUN_COLUMNS`; ``cls_iw``: I(W) of the last layer's
validation CLS states before the method, ``cls_iw_head_input``: of what the head read, after it),
layers.csv one per run × layer (:data:`LAYER_COLUMNS`). The claims ("the method cannot raise CLS
isotropy during fine-tuning", "CLS tokens are already zero-mean") are judged per seed by
:func:`isotropy.verdicts.claims.check_claims` on :func:`claim_values`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isotropy import statistics

RUN_COLUMNS = (
    "model task method seed train_examples epochs steps accuracy majority_baseline cls_iw "
    "cls_iw_head_input cls_isoscore eval_sentences"
).split()
LAYER_COLUMNS = (
    "model task method seed layer iw isoscore cls_mean_norm cls_norm token_mean_norm token_norm"
).split()


def read_run(path: str | os.PathLike) -> dict:
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    for key, why in (
        ("cls_iw_layers", "no per-layer CLS geometry (cls_iw_layers): it predates the CLS study"),
        ("majority_baseline", "no majority_baseline: it predates the learning guard"),
    ):
        if record.get(key) is None:
            raise ValueError(f"{path} has {why}; delete it so that its fine-tuning re-runs")
    return record


def collect(
    metrics_files: Iterable[str | os.PathLike], runs: list[dict]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs table, layers table) of the runs' metrics.json files, in the order of ``runs``
    (each: model, task, method, seed as the workflow names them)."""
    run_rows, layer_rows, measured = [], [], LAYER_COLUMNS[5:]
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
        layer_rows += [
            {**keys, "layer": layer + 1} | {c: record[f"cls_{c}_layers"][layer] for c in measured}
            for layer in range(len(record["cls_iw_layers"]))
        ]
    runs_table = pd.DataFrame(run_rows, columns=RUN_COLUMNS)
    return runs_table, pd.DataFrame(layer_rows, columns=LAYER_COLUMNS)


def claim_values(runs: pd.DataFrame, layers: pd.DataFrame) -> pd.DataFrame:
    """Per-seed values of the CLS claims (:data:`isotropy.studies.rajaee_cls.CLAIMS`; columns
    claim, setup, seed, value; setup = model/task): the log10 I(W) ratio of the paired runs with
    and without the method (same seed), and per run without the method, log10 of the largest
    ‖mean CLS‖ / ‖mean token‖ over layers."""
    rows = []
    plain = layers[layers["method"] == "none"]
    for (model, task, seed), group in plain.groupby(["model", "task", "seed"], sort=False):
        largest = float((group["cls_mean_norm"] / group["token_mean_norm"]).max())
        rows.append(("cls_already_zero_mean", f"{model}/{task}", seed, math.log10(largest)))
    ratios = paired_differences(runs, "cls_method_cannot_raise_isotropy", "cls_iw", log10=True)
    return pd.concat([ratios, pd.DataFrame(rows, columns=ratios.columns)], ignore_index=True)


def paired_differences(
    runs: pd.DataFrame, claim: str, column: str = "accuracy", log10: bool = False
) -> pd.DataFrame:
    """Per seed, ``column`` with the method minus without it (same seed; of its log10 if
    ``log10``, NaN where not positive), as ``claim``'s values (claim, setup, seed, value)."""
    value = runs[column].where(runs[column] > 0).map(math.log10) if log10 else runs[column]
    rows = []
    for (model, task), group in runs.assign(value=value).groupby(["model", "task"], sort=False):
        by_method = {m: g.set_index("seed")["value"] for m, g in group.groupby("method")}
        if "none" in by_method and "cluster" in by_method:
            for seed in sorted(set(by_method["none"].index) & set(by_method["cluster"].index)):
                difference = by_method["cluster"][seed] - by_method["none"][seed]
                rows.append((claim, f"{model}/{task}", seed, difference))
    return pd.DataFrame(rows, columns=["claim", "setup", "seed", "value"])


def accuracy_summary(runs: pd.DataFrame) -> dict[str, Any]:
    """Mean accuracy without and with the method and the mean paired difference (with − without,
    same seed) with its 95% t-interval over the seeds, all from the unrounded values."""
    interval = statistics.mean_interval(paired_differences(runs, "")["value"])
    accuracy = runs.groupby("method")["accuracy"].mean()
    return dict(
        without=float(accuracy["none"]),
        with_method=float(accuracy["cluster"]),
        difference=interval.mean,
        low=interval.low,
        high=interval.high,
        seeds=interval.seeds,
    )


# ----------------------------------------------------------------------------- the cause sweep


def clusters_remove_the_class(run: Mapping[str, Any]) -> bool:
    """Whether a cause-sweep run (a JSON line of ``benchmarks/rajaee_cls_learning.py --measure``,
    trained without the method) shows "the method's clusters are the labels, so centring them
    removes the class": k-means agrees with the labels after training (ARI over 0.3 on the
    training set and over 0.15 at evaluation, per batch and offline; under 0.05 before), and,
    applied after training, centring 3 clusters takes more than half of what the model learned
    above the majority while centring the whole set (k = 1) keeps it within 2 points, fitted per
    batch and offline. Removing top directions is not part of it: it removes the class on planted
    states whose clusters are a nuisance too, so it cannot tell the explanations apart."""
    first, final = run["agreement"][0], run["agreement"][-1]
    before = max(abs(first["train_batch_ari_mean"]), abs(first["train_offline_ari"]))
    after = {
        (p["fit"], p["clusters"], p["directions"]): p["accuracy"] for p in final["method_accuracy"]
    }
    learned, majority = run["accuracy"], run["majority_baseline"]
    half = majority + (learned - majority) / 2
    agree = (
        before < 0.05
        and final["train_offline_ari"] > 0.3
        and min(final["eval_batch_ari_mean"], final["eval_offline_ari"]) > 0.15
    )
    return agree and all(
        after[(fit, 1, 0)] > learned - 0.02 and after[(fit, 3, 0)] < half
        for fit in ("batch", "offline")
    )


def variant_name(line: Mapping[str, Any]) -> str:
    """A cause-sweep run's variant (a JSON line of benchmarks/rajaee_cls_learning.py): ``none``,
    or where the method was fitted, its k and its removed directions d (``offline k3 d2``)."""
    if line["method"] == "none":
        return "none"
    method = line["cluster_method"]
    return f"{method['fit']} k{method['clusters']} d{method['directions']}"


# The paired differences of the sweep's accuracies (minuend, subtrahend, what it measures), each
# per seed: trained with minus trained without, or one variant of the method minus another.
DIFFERENCES = (
    ("offline k3 d2", "none", "with the method (offline, the default) − without"),
    ("batch k3 d2", "none", "with the method fitted per batch − without"),
    ("batch k3 d0", "batch k1 d0", "centring 3 clusters − centring the whole batch (k = 1)"),
    ("batch k3 d2", "offline k3 d2", "fitted per batch − fitted offline"),
)


def reads(interval: Mapping[str, Any]) -> str:
    """What a difference's interval says: below 0, above 0, includes 0, or why there is none."""
    if interval["seeds"] == 0:
        return "not run"
    if interval["low"] is None:
        return "1 seed: no interval"
    if interval["high"] < 0:
        return "below 0"
    return "above 0" if interval["low"] > 0 else "includes 0"


def trained_differences(lines: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Per :data:`DIFFERENCES` row: the seeds both variants ran (``paired``), each one's accuracy
    difference (``values``), their mean, 95% t-interval and count (:func:`statistics.mean_interval`)
    and what the interval :func:`reads`."""
    accuracy: dict[str, dict[int, float]] = {}
    for line in lines:
        accuracy.setdefault(variant_name(line), {})[line["seed"]] = line["accuracy"]
    rows = []
    for minuend, subtrahend, what in DIFFERENCES:
        first, second = accuracy.get(minuend, {}), accuracy.get(subtrahend, {})
        seeds = sorted(set(first) & set(second))
        values = [first[seed] - second[seed] for seed in seeds]
        interval = statistics.mean_interval(values)._asdict()
        rows.append(
            {"difference": what, "minuend": minuend, "subtrahend": subtrahend, "paired": seeds}
            | {"values": values, **interval, "reads": reads(interval)}
        )
    return pd.DataFrame(rows)


# The clusters follow the labels above this ARI: clusters_remove_the_class's threshold, declared
# with the one-seed CPU sweep (commit 0e554e6d) before the five-seed sweep ran, as its half.
ARI_FLOOR = 0.15


def cause_verdict(lines: Iterable[Mapping[str, Any]]) -> str:
    """What the sweep's runs decide of the cause (docs/rajaee-cls.md states the rule): the
    clusters are the labels when, trained with the method, the interval of centring 3 clusters
    minus the whole batch lies below minus half of what the runs without the method learned above
    the majority (the smallest effect of interest) AND that of the clusters' ARI above
    :data:`ARI_FLOOR`; otherwise "not decided". The offline variant (2 directions removed, no
    evidence either way) decides nothing."""
    lines = list(lines)
    by = trained_differences(lines).set_index(["minuend", "subtrahend"])
    centring = by.loc[("batch k3 d0", "batch k1 d0")]
    per_batch = by.loc[("batch k3 d2", "offline k3 d2")]
    learned = [x["accuracy"] - x["majority_baseline"] for x in lines if variant_name(x) == "none"]
    smallest = float(np.mean(learned)) / 2 if learned else math.nan
    ari = statistics.mean_interval(
        x["agreement"][-1]["eval_batch_ari_mean"] for x in lines if variant_name(x) == "batch k3 d0"
    )._asdict()
    held = {
        f"centring 3 clusters − the whole batch: {_interval(centring, 100, '+.1f')}, "
        f"needs below {-100 * smallest:.1f} points": centring["high"] < -smallest,
        f"the ARI of those clusters with the labels: {_interval(ari, 1, '.2f')}, needs above "
        f"{ARI_FLOOR}": bool(ari["low"] is not None and ari["low"] > ARI_FLOOR),
    }
    if all(held.values()):
        head = (
            "The intervals decide the cause for the first explanation, fitted per batch: centring "
            "3 clusters of each batch costs beyond the smallest effect of interest, and those "
            f"clusters follow the labels ({'; '.join(held)})."
        )
    else:
        head = f"The cause is not decided ({'; '.join(t for t, ok in held.items() if not ok)})."
    return (
        f"{head} The offline variant was trained only with 2 directions removed (no evidence "
        "either way): these runs cannot tell the explanations apart for it. Fitted per batch − "
        f"offline, the interval: {per_batch['reads']}."
    )


def _interval(interval: Mapping[str, Any], scale: float, spec: str) -> str:
    if pd.isna(interval["low"]):
        return reads(interval)
    return f"{scale * interval['low']:{spec}} to {scale * interval['high']:{spec}}"
