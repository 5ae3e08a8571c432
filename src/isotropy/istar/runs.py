"""runs.csv of the I-STAR study: one row per fine-tuning run, collected from the runs'
metrics.json files (plain pandas, no torch)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

# isoscore_star: Σ_S from training token states (the authors' evaluation); the validation-token
# reference is kept as isoscore_star_validation_reference.
RUN_COLUMNS = (
    "model task regulariser lambda seed metric_name metric isoscore_star "
    "isoscore_star_validation_reference twonn"
).split()


def collect_runs(
    metrics_files: Iterable[str | os.PathLike], model_names: Sequence[str] | None = None
) -> pd.DataFrame:
    """One row per run (runs.csv): the config name of the model, task, regulariser, λ, seed, the
    task's headline metric, IsoScore* (ζ = 0.75, last layer's sentence embeddings) and TwoNN.

    ``model_names`` gives each file's config model name (the metrics hold only its source).
    Per-layer IsoScore* goes to columns ``isoscore_star_layer<k>`` (k = 1 … layers).
    """
    import json

    rows = []
    files = list(metrics_files)
    if model_names is not None and len(model_names) != len(files):
        raise ValueError(f"{len(model_names)} model names for {len(files)} metrics files")
    for i, path in enumerate(files):
        record = json.loads(Path(path).read_text())
        if "isoscore_star_validation_reference" not in record:
            raise ValueError(
                f"{path} predates IsoScore* with the training-token Σ_S (its isoscore_star used "
                "validation tokens); delete it so that rule finetune re-runs and re-evaluates"
            )
        spec = record["model"]
        row = {
            "model": spec.get("path") or spec["model"] if model_names is None else model_names[i],
            **{column: record[column] for column in RUN_COLUMNS[1:]},
            # the learning guard's inputs (isotropy.verdicts.learning); absent in older runs
            "majority_baseline": record.get("majority_baseline"),
            "eval_sentences": record.get("eval_sentences"),
        }
        for layer, value in enumerate(record["isoscore_star_layers"], start=1):
            row[f"isoscore_star_layer{layer}"] = value
        for name, value in record["scores"].items():
            row[f"score_{name}"] = value
        rows.append(row)
    if not rows:
        raise ValueError("no I-STAR runs to collect")
    table = pd.DataFrame(rows)
    if table[["metric", "isoscore_star", "twonn"]].isna().any().any():
        bad = table[table[["metric", "isoscore_star", "twonn"]].isna().any(axis=1)]
        raise ValueError(f"NaN metric, IsoScore* or TwoNN in runs:\n{bad[RUN_COLUMNS].to_string()}")
    return table.sort_values(["model", "task", "regulariser", "lambda", "seed"], ignore_index=True)
