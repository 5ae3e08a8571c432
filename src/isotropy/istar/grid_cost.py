"""The time estimate of target istar_study (config ``istar``: the I-STAR fine-tuning grid, rule
finetune), printed by ``python -m isotropy.estimate --target istar_study``. Plain Python.

A reuse, not a measurement of this grid: the Rajaee CLS fine-tuning costs (config/costs.csv,
``cls_finetune_*``: MiniLM on the mirror's RTE at max length 128, one thread, measured with
benchmarks/rajaee_cls_cost.py), per training example and epoch and per evaluated example,
scaled by model size (:data:`isotropy.costs.MODEL_SIZE_FACTOR`; only MiniLM is measured, the
others are scaled: BERT, ALBERT and DistilBERT have no offline copy) and by max length over
128. The I-STAR and CosReg penalties' own cost is not measured (the CLS study's cluster step per
batch was within noise).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from isotropy import costs, paths
from isotropy.istar import cls_cost
from isotropy.istar import study as istar_study
from isotropy.logs import duration

# (training, validation) rows of the tasks (GLUE, SST-5, SQuAD v1.1's published sizes).
TASK_ROWS = {
    "sst2": (67349, 872),
    "qnli": (104743, 5463),
    "rte": (2490, 277),
    "mrpc": (3668, 408),
    "qqp": (363846, 40430),
    "cola": (8551, 1043),
    "stsb": (5749, 1500),
    "sst5": (8544, 1101),
    "squad": (87599, 10570),
    "wnli": (635, 71),
}


def run_seconds(section: Mapping[str, Any], model: str, task: str) -> float | None:
    """CPU-s of one run on one thread (None: the task's size or the model's cost is unknown)."""
    if task not in TASK_ROWS:
        return None
    return cls_cost.finetune_seconds(section["training"], TASK_ROWS[task], model)


# Wall seconds one run (rule finetune; wildcards model, task, regulariser, lam, seed) adds to
# the grid's total.
job_seconds = cls_cost.finetune_job_cost("istar", run_seconds)

# rule -> the wall seconds one of its jobs adds (isotropy.estimate.JOB_COSTS).
JOB_COSTS = {"finetune": job_seconds}


def describe(
    config: Mapping[str, Any],
    device: str,
    pace: costs.Pace,
    workdir: Path = Path("."),
) -> tuple[list[str], float]:
    """(lines, seconds left) for target istar_study on this CPU at ``pace``: the runs whose
    metrics.json is absent, from the reused costs."""
    section = config["istar"]
    training, threads = section["training"], section["resources"]["threads"]
    runs = istar_study.run_grid(dict(section))
    keys = ("model", "task", "regulariser", "lam", "seed")
    todo = [
        r
        for r in runs
        if not (workdir / paths.istar_run_file("metrics.json", *(r[k] for k in keys))).is_file()
    ]
    shares = [job_seconds(config, r, pace) for r in todo]
    unknown = sorted({f"{r['model']}/{r['task']}" for r, c in zip(todo, shares) if c is None})
    parallel = pace.parallel(threads)
    total = pace.total(shares, threads, small_jobs=4)  # runs.csv and the figures
    models = istar_study.run_models(dict(section))
    lines = [
        f"istar_study: {len(runs)} fine-tuning runs ({len(models)} models x "
        f"{len(section['tasks'])} tasks x regularisers and lambdas x {len(section['seeds'])} "
        f"seeds) of {training['epochs']} epochs on {training['train_subset'] or 'all'} training "
        f"examples, max length {training['max_length']}, device {device}",
        f"{len(runs) - len(todo)} of {len(runs)} runs done; time left: about {duration(total)} "
        f"on this CPU for idle cores ({parallel} run(s) at a time, {threads} thread(s) each; the "
        "Rajaee CLS fine-tuning costs of MiniLM reused, scaled by model size and max length: "
        "isotropy.istar.grid_cost)",
    ]
    if total > 3600:
        lines.append(
            f"a GPU-scale grid: {duration(total)} (about {total / 86400:.0f} days) on this CPU; "
            "it is meant for a GPU "
            f"(resources.gpu {section['resources'].get('gpu', 0)}), where no cost is measured"
        )
    if "istar" not in (config.get("studies") or ["istar"]):
        lines.append("istar is not among this configuration's studies: rule all leaves it out")
    lines += costs.caveats(device, unknown)
    return lines, total
