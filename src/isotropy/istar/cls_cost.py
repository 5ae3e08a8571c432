"""The time estimate of target rajaee_cls_study (config ``rajaee_cls``: fine-tuning with and without
the cluster-based method on CLS), printed by ``python -m isotropy.estimate --target
rajaee_cls_study`` before the run (registered in isotropy.estimate). Plain Python: no torch.

Costs: process-CPU seconds on one thread (the rule's default), MiniLM on the mirror's RTE at
max length 128, batch 32, measured with ``benchmarks/rajaee_cls_cost.py`` and kept in
config/costs.csv (with the date, machine and load), normalised by the speed probe to the host of
isotropy.estimate.PROBE_CPU_SECONDS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from isotropy import costs, paths
from isotropy.logs import duration

# A run's one-thread CPU seconds from its section, model and task (None: unknown).
RunCost = Callable[[Mapping[str, Any], str, str], float | None]

# What one run costs, CPU-s on one thread at max length 128 (MiniLM: 6 layers, 384-d), as
# measured on RTE: config/costs.csv (cls_finetune_*), with the date, machine and command.
# I(W) and IsoScore of every layer's validation CLS states: an assumption, not measured.
GEOMETRY_CPU_SECONDS = 1.0


def measured_seconds(task: str = "rte") -> dict[str, float]:
    """The measured costs of one run's parts (load; per training example and epoch; per
    evaluated example), MiniLM on ``task`` where the costs table has its rows (RTE, SST-2),
    else on RTE (the I-STAR grid's other tasks: RTE's pairs are the longest)."""
    train = costs.by_model("cls_finetune_train_example_cpu_seconds")
    evaluated = costs.by_model("cls_finetune_eval_example_cpu_seconds")
    per_example = ("miniLM", task) if ("miniLM", task) in train else ("miniLM", "rte")
    return {
        "load": costs.by_model("cls_finetune_load_cpu_seconds")["miniLM"],
        "train_example": train[per_example],
        "eval_example": evaluated[per_example],
    }


MEASURED_MAX_LENGTH = 128
# Non-padding tokens per training example (MiniLM's tokenizer, cut at 128): an RTE pair 66.6
# (validation 64.6), an SST-2 training phrase 13.5 (its dev sentences 25.2).
TOKENS_PER_EXAMPLE = {"rte": 66.0, "sst2": 13.5}
# Rows of the tasks' splits in the offline mirror (validation: the dev split the runs score).
# WiC (online only): SuperGLUE's 5,428 training and 638 validation pairs, shorter than RTE's.
TASK_ROWS = {"rte": (2490, 277), "sst2": (67349, 872), "wic": (5428, 638)}


def finetune_seconds(
    training: Mapping[str, Any], rows: tuple[int, int], model: str, task: str = "rte"
) -> float | None:
    """CPU-s of one fine-tuning run on one thread from the measured MiniLM costs, scaled by model
    size and max length (None: the model's size factor is unknown); ``rows``: the task's
    (training, validation) rows; ``task``: whose measured per-example costs (RTE's when the
    table has none). Shared by the CLS study and the I-STAR grid."""
    if model not in costs.MODEL_SIZE_FACTOR:
        return None
    train_rows, eval_rows = rows
    train = min(train_rows, training["train_subset"] or train_rows)
    evaluated = min(eval_rows, training["eval_subset"] or eval_rows)
    examples = training["epochs"] * train
    if training.get("max_steps"):
        examples = min(examples, training["max_steps"] * training["batch_size"])
    # the evaluation's Σ_S: forward passes over training examples until the sample is full
    tokens = TOKENS_PER_EXAMPLE.get(task, TOKENS_PER_EXAMPLE["rte"])
    reference = min(train, training["reference_sample_size"] / tokens)
    length = min(training["max_length"], 2 * MEASURED_MAX_LENGTH) / MEASURED_MAX_LENGTH
    seconds = measured_seconds(task)
    work = examples * seconds["train_example"] + (evaluated + reference) * seconds["eval_example"]
    return seconds["load"] + costs.MODEL_SIZE_FACTOR[model] * length * work


def run_seconds(section: Mapping[str, Any], model: str, task: str) -> float | None:
    """CPU-s of one CLS run on one thread (None: the task's size or the model's cost is unknown):
    the fine-tuning and its per-layer CLS geometry."""
    if task not in TASK_ROWS:
        return None
    seconds = finetune_seconds(section["training"], TASK_ROWS[task], model, task)
    return None if seconds is None else seconds + GEOMETRY_CPU_SECONDS


def finetune_job_cost(section_name: str, run_cost: RunCost) -> costs.JobCost:
    """The per-job cost of a fine-tuning rule whose runs are configured under
    ``config[section_name]`` (wildcards model and task, and the rest of its grid): ``run_cost``
    of the section, model and task spread by :meth:`isotropy.costs.Pace.share` over the
    section's threads (None: no measured cost). The CLS study and the I-STAR grid share it."""

    def job_seconds(
        config: Mapping[str, Any], wildcards: Mapping[str, Any], pace: costs.Pace
    ) -> float | None:
        section = config[section_name]
        seconds = run_cost(section, wildcards["model"], wildcards["task"])
        if seconds is None:
            return None
        return pace.share(seconds, section["resources"]["threads"])

    return job_seconds


# Wall seconds one run (rule rajaee_cls_finetune; wildcards model, task, method, seed) adds to the
# study's total.
job_seconds = finetune_job_cost("rajaee_cls", run_seconds)

# rule -> the wall seconds one of its jobs adds (isotropy.estimate.JOB_COSTS).
JOB_COSTS = {"rajaee_cls_finetune": job_seconds}


def describe(
    config: Mapping[str, Any],
    device: str,
    pace: costs.Pace,
    workdir: Path = Path("."),
) -> tuple[list[str], float]:
    """(lines, seconds left) saying what target rajaee_cls_study runs and how long what is left
    takes on this CPU at ``pace``: the runs not done (their metrics.json absent) from the
    measured costs (config/costs.csv), plus a start-up per job (the tables and figure jobs
    included)."""
    section = config["rajaee_cls"]
    training = section["training"]
    threads = section["resources"]["threads"]
    runs = [
        (m, t, method, s)
        for m in section["models"]
        for t in section["tasks"]
        for method in section["methods"]
        for s in section["seeds"]
    ]
    done = [(workdir / paths.rajaee_cls_run_file("metrics.json", *r)).is_file() for r in runs]
    todo = [r for r, made in zip(runs, done, strict=True) if not made]
    keys = ("model", "task", "method", "seed")
    shares = [job_seconds(config, dict(zip(keys, r, strict=True)), pace) for r in todo]
    pairs = zip(todo, shares, strict=True)
    unknown = sorted({f"{m}/{t}" for (m, t, _, _), c in pairs if c is None})
    parallel = pace.parallel(threads)
    total = pace.total(shares, threads, small_jobs=2)  # the tables and the figure
    lines = [
        f"rajaee_cls_study: {len(runs)} fine-tuning runs ({len(section['models'])} models x "
        f"{len(section['tasks'])} tasks x {len(section['methods'])} methods x "
        f"{len(section['seeds'])} seeds) of {training['epochs']} epochs on "
        f"{training['train_subset'] or 'all'} training examples, max length "
        f"{training['max_length']}, device {device}",
        f"{len(runs) - len(todo)} of {len(runs)} runs done; time left: about {duration(total)} "
        f"on this CPU for idle cores ({parallel} run{'s' if parallel > 1 else ''} at a time, "
        f"{threads} thread{'s' if threads > 1 else ''} each; costs measured with "
        "benchmarks/rajaee_cls_cost.py, isotropy.istar.cls_cost)",
    ]
    lines += costs.caveats(device, unknown)
    return lines, total
