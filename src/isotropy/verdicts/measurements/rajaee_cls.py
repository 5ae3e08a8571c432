"""The Rajaee CLS study: dev accuracy and I(W) of the CLS states after fine-tuning with and
without the cluster-based method."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.standins import model_stand_in
from isotropy.verdicts.measurements import fine_tuned_not_learned, measurement

# What is measured of each group of runs: (quantity suffix, runs.csv column, scale, convention).
QUANTITIES = (
    ("accuracy", "accuracy", 100, "dev accuracy after fine-tuning"),
    ("iw", "cls_iw_head_input", 1, "I(W) of the dev CLS states the head reads (after the method)"),
)


def rajaee_cls_measurements(table: pd.DataFrame, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per model × task × method (none, cluster): dev accuracy ×100 after fine-tuning with and
    without the cluster-based method on the CLS states, and I(W) of the last layer's dev CLS
    states as the head read them (after the method; the model's own without it)."""
    rows = []
    source = paths.rajaee_cls_file("runs.csv")
    for (name, task, method), runs in table.groupby(["model", "task", "method"], sort=False):
        first = runs.iloc[0]
        setup = f"{name}, {task} fine-tuned"
        paper_setup = "cluster-based" if method == "cluster" else method
        common = dict(
            seeds=runs["seed"].nunique(),
            n=int(first["eval_sentences"]),
            stand_in=model_stand_in(config, name, "BERT"),
            evidence=source,
            note=f"{int(first['train_examples'])} training examples, {int(first['epochs'])} "
            "epochs (config rajaee_cls.training)",
        )
        per_seed = runs.groupby("seed")
        common["not_learned"] = fine_tuned_not_learned(runs)
        for quantity, column, scale, convention in QUANTITIES:
            rows.append(
                measurement(
                    "geometry",
                    f"{task}_finetuned_{quantity}",
                    setup,
                    paper_setup,
                    (scale * runs[column]).mean(),
                    per_seed=tuple(scale * per_seed[column].mean()),
                    convention=convention,
                    **common,
                )
            )
    return rows
