"""The Rajaee CLS study: dev accuracy and I(W) of the CLS states after fine-tuning with and
without the cluster-based method."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.standins import model_stand_in
from isotropy.verdicts.measurements import fine_tuned_not_learned, measurement


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
        accuracy = 100 * runs["accuracy"]
        rows.append(
            measurement(
                "geometry",
                f"{task}_finetuned_accuracy",
                setup,
                paper_setup,
                accuracy.mean(),
                per_seed=tuple(100 * per_seed["accuracy"].mean()),
                convention="dev accuracy after fine-tuning",
                **common,
            )
        )
        iw = runs["cls_iw_head_input"]
        rows.append(
            measurement(
                "geometry",
                f"{task}_finetuned_iw",
                setup,
                paper_setup,
                iw.mean(),
                per_seed=tuple(per_seed["cls_iw_head_input"].mean()),
                convention="I(W) of the dev CLS states the head reads (after the method)",
                **common,
            )
        )
    return rows
