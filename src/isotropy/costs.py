"""The measured costs (config/costs.csv) and how CPU seconds become wall time (:class:`Pace`)."""

from __future__ import annotations

import csv
import datetime
import functools
import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isotropy.configuration import TrainingSettings
from isotropy.configuration.data import MODEL_SHAPE

COSTS_TABLE = Path(__file__).resolve().parents[2] / "config" / "costs.csv"
COLUMNS = tuple("quantity model dataset value unit measured machine command note".split())


def size_factor(model: str) -> float:
    """A model's cost per example over MiniLM's (6 layers, 384-d, where the costs were measured):
    layers' ratio times width's. Scaled, not measured: every estimate that reads it says so."""
    layers, width = MODEL_SHAPE[model]
    return layers / 6 * width / 384


def read_costs(path: str | os.PathLike = COSTS_TABLE) -> list[dict[str, Any]]:
    """Every row of the costs table, checked; each problem named with its line."""
    rows = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {list(COLUMNS)}")
        for row in reader:
            where = f"{path}, line {reader.line_num}"
            if blank := [c for c in ("unit", "machine", "command") if not row[c].strip()]:
                raise ValueError(f"{where}: no {blank[0]}: say what measured {row['quantity']}")
            try:
                datetime.date.fromisoformat(row["measured"])  # YYYY-MM-DD
                number = float(row["value"])
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
            if not math.isfinite(number) or number <= 0:
                raise ValueError(f"{where}: value {number} is not a finite positive number")
            rows.append({**row, "value": number})
    keys = [(c["quantity"], c["model"], c["dataset"]) for c in rows]
    if duplicated := sorted({key for key in keys if keys.count(key) > 1}):
        raise ValueError(f"{path}: measured twice: {duplicated}; keep one row for each")
    return rows


@functools.cache
def measured_costs() -> tuple[dict[str, Any], ...]:
    return tuple(read_costs())


def value(quantity: str) -> float:
    found = [c["value"] for c in _rows(quantity)]
    if len(found) != 1:
        raise KeyError(f"config/costs.csv holds {len(found)} rows of {quantity!r}, expected 1")
    return found[0]


def by_dataset(quantity: str) -> dict[str, float]:
    """A quantity's numbers by data set (rows naming a model, or no data set, left out)."""
    return {c["dataset"]: c["value"] for c in _rows(quantity) if c["dataset"] and not c["model"]}


def by_model(quantity: str) -> dict[Any, float]:
    return {
        ((c["model"], c["dataset"]) if c["dataset"] else c["model"]): c["value"]
        for c in _rows(quantity)
        if c["model"]
    }


def _rows(quantity: str) -> list[dict[str, Any]]:
    return [c for c in measured_costs() if c["quantity"] == quantity]


# A fine-tuning run (the I-STAR grid, the Rajaee CLS study): MiniLM measured on the mirror's RTE
# (and SST-2) at max length 128, batch 32, one thread (benchmarks/rajaee_cls_cost.py, rows
# cls_finetune_*), scaled by model size and max length.

FINETUNE_MEASURED_MAX_LENGTH = 128
# Non-padding tokens per training example (MiniLM's tokenizer, cut at 128): an RTE pair 66.6
# (validation 64.6), an SST-2 training phrase 13.5 (its dev sentences 25.2).
TOKENS_PER_EXAMPLE = {"rte": 66.0, "sst2": 13.5}


def finetune_measured(task: str = "rte") -> dict[str, float]:
    """The measured costs of one run's parts, MiniLM on ``task`` if measured, else on RTE."""
    train = by_model("cls_finetune_train_example_cpu_seconds")
    evaluated = by_model("cls_finetune_eval_example_cpu_seconds")
    per_example = ("miniLM", task) if ("miniLM", task) in train else ("miniLM", "rte")
    return {
        "load": by_model("cls_finetune_load_cpu_seconds")["miniLM"],
        "train_example": train[per_example],
        "eval_example": evaluated[per_example],
    }


def finetune_seconds(
    training: TrainingSettings, rows: tuple[int, int], model: str, task: str = "rte"
) -> float | None:
    """One-thread CPU-s of a fine-tuning run, MiniLM's scaled by model size and max length (None:
    size unknown); ``rows``: the task's (training, validation) rows."""
    if model not in MODEL_SHAPE:
        return None
    train_rows, eval_rows = rows
    train = min(train_rows, training.train_subset or train_rows)
    evaluated = min(eval_rows, training.eval_subset or eval_rows)
    examples = training.epochs * train
    if training.max_steps:
        examples = min(examples, training.max_steps * training.batch_size)
    # the evaluation's Σ_S: forward passes over training examples until the sample is full
    tokens = TOKENS_PER_EXAMPLE.get(task, TOKENS_PER_EXAMPLE["rte"])
    reference = min(train, training.reference_sample_size / tokens)
    measured = FINETUNE_MEASURED_MAX_LENGTH
    length = min(training.max_length, 2 * measured) / measured
    seconds = finetune_measured(task)
    work = examples * seconds["train_example"] + (evaluated + reference) * seconds["eval_example"]
    return seconds["load"] + size_factor(model) * length * work


# How the measured CPU costs become wall time on this machine now (every job alike)

JOB_OVERHEAD_SECONDS = value("job_overhead_seconds")
JOB_THREADS = 2
PROBE_CPU_SECONDS = value("probe_cpu_seconds")

# Beyond these bounds a speed probe says more about a burst of load than the CPU.
SPEED_FACTOR_BOUNDS = (0.25, 4.0)


@dataclass(frozen=True)
class Pace:
    """How CPU seconds become wall seconds here: ``speed``, the speed probe's factor (1 where the
    costs were measured, in ``probe`` s); ``cores``, idle; ``job_overhead``, its start-up."""

    speed: float = 1.0
    cores: int = 2
    job_overhead: float = 0.0
    probe: float = PROBE_CPU_SECONDS
    # How much longer work takes here now than on idle cores (contention_probe), one process per
    # core and one process alone.
    contention: float = 1.0
    contention_serial: float = 1.0

    @classmethod
    def here(cls) -> Pace:
        probe = speed_probe()
        low, high = SPEED_FACTOR_BOUNDS
        speed = min(high, max(low, probe / PROBE_CPU_SECONDS))
        cores = available_cores() or 2
        parallel, serial = contention_probe(min(cores, 8)), contention_probe(1)
        return cls(speed, cores, JOB_OVERHEAD_SECONDS, probe, parallel, serial)

    def at_load(self, idle_seconds: float, device: str = "cpu") -> tuple[float, float]:
        """``idle_seconds`` of work at the present load, expected and at most (on a GPU: idle)."""
        if device != "cpu":
            return idle_seconds, idle_seconds
        return self.contention_serial * idle_seconds, self.contention * idle_seconds

    def share(self, cpu_seconds: float, threads: int, device: str = "cpu") -> float:
        """Wall seconds one job adds on idle cores, as many side by side as the cores hold."""
        parallel = 1 if device == "cuda" else max(1, self.cores // threads)
        return (self.speed * cpu_seconds / threads + self.job_overhead) / parallel


def speed_probe(repeats: int = 3, products: int = 100) -> float:
    """Process-CPU seconds of a fixed one-thread workload, the best of ``repeats``."""
    _timed_products(products)  # warms caches and clocks
    return min(_timed_products(products)[1] for _ in range(repeats))


def _timed_products(products: int) -> tuple[float, float]:
    import numpy as np
    from threadpoolctl import threadpool_limits

    matrix = np.random.default_rng(0).standard_normal((384, 384), dtype=np.float32) / 384**0.5
    with threadpool_limits(1):
        product, wall, cpu = matrix.copy(), time.perf_counter(), time.process_time()
        for _ in range(products):
            product = np.tanh(matrix @ product)
        return time.perf_counter() - wall, time.process_time() - cpu


def contention_probe(processes: int, products: int = 300, repeats: int = 2) -> float:
    """How much longer work takes here now than on idle cores: the :func:`slowdown` of
    ``processes`` one-thread processes timing the speed probe's workload at once."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(processes) as pool:
        pool.map(_timed_products, [1] * processes)  # started and warm before the timing
        return slowdown(pool.map(_timed_products, [products] * processes * repeats, chunksize=1))


def slowdown(timings: Iterable[tuple[float, float]]) -> float:
    """All the wall seconds over all the CPU seconds of (wall, CPU) ``timings``, at least 1: a
    stall that holds up one sample holds up a long run as much, so none is set aside."""
    walls, cpus = zip(*timings, strict=True)
    return max(1.0, sum(walls) / max(sum(cpus), 1e-9))


def available_cores() -> int | None:
    """The cores this process may run on (its CPU affinity: a SLURM job's allocation)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
