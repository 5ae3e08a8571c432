"""The Rajaee & Pilehvar measurements: STS and I(W) per method, the SST-2 classification, and
the CLS study's fine-tuned accuracy and I(W)."""

from __future__ import annotations

from functools import partial

import pandas as pd

from isotropy import paths
from isotropy.standins import StandIns, model_stand_in
from isotropy.verdicts.measurements import (
    Config,
    Row,
    at_setup,
    fine_tuned_not_learned,
    joined,
    over_seeds,
)

# STS methods no seed enters (no clustering)
SEED_FREE_METHODS = ("none", "centring", "all-but-the-top")
COSINE = "cosine of sentence vectors vs gold"
IW = "I(W) with the eigenvectors' signs as numpy returns them (Rajaee's isotropy())"
QUANTITY_OF_STS = {"pearson": "sts_pearson", "spearman": "sts_spearman", "isotropy": "isotropy_iw"}


def sts_measurements(sts: pd.DataFrame, config: Config, stand: StandIns) -> list[Row]:
    """Per model × STS data set × method: Pearson ×100, Spearman ×100 and I(W); the gains."""
    rows = []
    for (name, dataset), group in sts.groupby(["model", "dataset"], sort=True):
        head = group.iloc[0]  # the data set's split and pipeline, one per model × data set
        split_stand_in = stand.sts_split if dataset == "stsb" else ""
        stand_in = joined(model_stand_in(config, name, "BERT"), split_stand_in)
        pipeline = str(head.get("pipeline", "mean-pooled sentence vectors transformed"))
        setup = f"{name}, {dataset} {head.get('split', '')}".strip()
        for method, runs in group.groupby("method", sort=False):
            first, setting, sign_free = runs.iloc[0], "", ""
            if method != "none" and "n_clusters" in runs:
                clusters, directions = int(first["n_clusters"]), int(first["n_directions"])
                setting = f"{clusters} clusters, {directions} directions"
            if "isotropy_sign_free" in runs:
                sign_free = f"sign-free I(W) {runs['isotropy_sign_free'].mean():.3g}"
            n = int(first["n_pairs"]) if "n_pairs" in runs else None
            at = at_setup("geometry", setup, f"{dataset}/{method}", stand_in=stand_in, n=n)
            at = partial(at, seed_free=method in SEED_FREE_METHODS, evidence=paths.GEOMETRY_STS)
            for column, quantity in QUANTITY_OF_STS.items():
                if column in runs:
                    iso = column == "isotropy"
                    convention = f"{IW if iso else COSINE}; {pipeline}"
                    note = joined(setting, sign_free if iso else "")
                    values = over_seeds(runs, column)
                    rows.append(at(quantity, **values, convention=convention, note=note))
        rows += _sts_gain_rows(f"{name}/{dataset}", group, stand_in)
    return rows


def _sts_gain_rows(claim_setup: str, group: pd.DataFrame, stand_in: str) -> list[Row]:
    """The cluster-based method's I(W) ratio and Spearman gain over none."""
    means = group.groupby("method")[["spearman", "isotropy"]].mean()
    at = at_setup("geometry", claim_setup, evidence=paths.GEOMETRY_STS)
    if not {"none", "cluster-based"} <= set(means.index):
        missing = "sts.csv lacks method 'none' or 'cluster-based'"
        return [at(q, missing=missing) for q in ("sts_isotropy_ratio", "sts_spearman_gain")]
    before, after = means.loc["none"], means.loc["cluster-based"]
    ratio = after["isotropy"] / before["isotropy"] if before["isotropy"] > 0 else float("nan")
    iw = f"I(W) {before['isotropy']:.3g} → {after['isotropy']:.3g}"
    spearman = f"Spearman×100 {before['spearman']:.2f} → {after['spearman']:.2f}"
    at, gain = partial(at, stand_in=stand_in), after["spearman"] - before["spearman"]
    return [
        at("sts_isotropy_ratio", value=ratio, note=iw),
        at("sts_spearman_gain", value=gain, note=spearman),
    ]


CLASSIFICATION_READINGS = {
    "pooled": "mean of the transformed last-layer tokens (the STS path's sentence vector)",
    "positions": "transformed last-layer tokens by position, flattened "
    "(the authors' classifier cell's input)",
}
# I(W) as a ratio and ×100 (our reading of the slides' "84.36")
IW_READINGS = (("sst2_iw", 1), ("sst2_iw_percent", 100))


def classification_measurements(table: pd.DataFrame, config: Config) -> list[Row]:
    """Per model × reading × method: validation accuracy ×100 and the tokens' I(W)."""
    rows = []
    for (name, reading, method), runs in table.groupby(["model", "reading", "method"], sort=False):
        first, stand_in = runs.iloc[0], model_stand_in(config, name, "BERT")
        setup = f"{name}, {first['task']} ({reading} features)"
        at = at_setup("geometry", setup, method, stand_in=stand_in, seed_free=method == "none")
        at = partial(at, n=int(first["n_validation"]), evidence=paths.GEOMETRY_CLASSIFICATION)
        features = CLASSIFICATION_READINGS.get(reading, reading)
        convention = f"logistic regression (C {first['C']:g}) on {features}; SST-2 validation"
        note = (
            f"{int(first['n_train'])} training sentences (config geometry.classification."
            f"train_subset); majority class {first['majority_accuracy']:.2f}"
        )
        if method != "none":
            note += (
                f"; {int(first['n_clusters'])} clusters, {int(first['n_directions'])} directions, "
                "fitted on the tokens of both splits"
            )
        accuracy = over_seeds(runs, "accuracy")
        rows.append(at("sst2_accuracy", **accuracy, convention=convention, note=note))
        iw = (
            f"I(W) of the transformed last-layer tokens ({int(first['n_tokens'])}), numpy's "
            "eigenvector signs; of the pooled sentences "
            f"{runs['isotropy_sentences'].mean():.3g}"
        )
        for quantity, scale in IW_READINGS:
            rows.append(at(quantity, **over_seeds(runs, "isotropy", scale), convention=iw))
    return rows


# (quantity suffix, runs.csv column, scale, convention)
CLS_QUANTITIES = (
    ("accuracy", "accuracy", 100, "dev accuracy after fine-tuning"),
    ("iw", "cls_iw_head_input", 1, "I(W) of the dev CLS states the head reads (after the method)"),
)


def rajaee_cls_measurements(table: pd.DataFrame, config: Config) -> list[Row]:
    """Per model × task × method: fine-tuned dev accuracy ×100, I(W) of the states the head read."""
    rows = []
    source = paths.rajaee_cls_file("runs.csv")
    for (name, task, method), runs in table.groupby(["model", "task", "method"], sort=False):
        first = runs.iloc[0]
        paper_setup = "cluster-based" if method == "cluster" else method
        n, stand_in = int(first["eval_sentences"]), model_stand_in(config, name, "BERT")
        note = (
            f"{int(first['train_examples'])} training examples, {int(first['epochs'])} "
            "epochs (config rajaee_cls.training)"
        )
        at = at_setup("geometry", f"{name}, {task} fine-tuned", paper_setup, n=n, evidence=source)
        at = partial(at, stand_in=stand_in, note=note, not_learned=fine_tuned_not_learned(runs))
        for quantity, column, scale, convention in CLS_QUANTITIES:
            values = over_seeds(runs, column, scale)
            rows.append(at(f"{task}_finetuned_{quantity}", **values, convention=convention))
    return rows
