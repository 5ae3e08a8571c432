"""The measured costs, as data: ``config/costs.csv``, one row per measured number with the date,
the machine and the command that measured it, read here for the estimate (:mod:`isotropy.estimate`).

A row is ``quantity`` (what was measured, one of :data:`QUANTITIES`), the ``model`` and
``dataset`` it was measured for (empty where it holds for any), its ``value`` and ``unit``, and
``measured`` (an ISO date), ``machine``, ``command`` and ``note``. A number without its date,
machine or command is refused, as is a quantity the estimate does not read.

What one job of a study costs from these numbers lives beside the study's estimate: the main
study's in :mod:`isotropy.estimate`, the sensitivity grid's here (:func:`sensitivity_run_seconds`,
:func:`vector_dim`), since it needs the width of each vector set, which each model's and each
word-vector source's record gives (config ``models.<name>.dimension``,
``sources.<name>.dimension``).
"""

from __future__ import annotations

import csv
import datetime
import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from isotropy import paths
from isotropy.models import ModelSpec
from isotropy.sources import resolve_mirror
from isotropy.traces import evaluation_count

COSTS_TABLE = Path(__file__).resolve().parents[2] / "config" / "costs.csv"
COLUMNS = (
    "quantity",
    "model",
    "dataset",
    "value",
    "unit",
    "measured",
    "machine",
    "command",
    "note",
)
# quantity -> the key columns that name what it was measured for.
QUANTITIES: dict[str, tuple[str, ...]] = {
    "update_cpu_seconds": ("dataset",),
    "evaluation_cpu_seconds": ("dataset",),
    "gpu_seconds_per_update_with_metrics": ("dataset",),
    "embed_cpu_seconds_per_text": ("model", "dataset"),
    "embed_load_cpu_seconds": ("model",),
    "word_vector_lookup_cpu_seconds": (),
    "contention_excess_passive": (),
    "contention_excess_default": (),
    "job_overhead_seconds": (),
    "job_cores_used": (),
    "probe_cpu_seconds": (),
    "mirror_unique_texts": ("dataset",),
    "sensitivity_run_cpu_startup": (),
    "sensitivity_run_cpu_part": (),
    "sensitivity_dim_power": (),
    "sensitivity_evaluation_share": (),
    "sensitivity_base_dim": (),
    "sensitivity_items": ("dataset",),
    "sensitivity_single_items": ("dataset",),
    "cls_finetune_load_cpu_seconds": ("model",),
    "cls_finetune_train_example_cpu_seconds": ("model", "dataset"),
    "cls_finetune_eval_example_cpu_seconds": ("model", "dataset"),
    "geometry_load_cpu_seconds": ("model",),
    "geometry_token_sentence_cpu_seconds": ("model", "dataset"),
    "geometry_sentence_cpu_seconds": ("model",),
    "geometry_cosine_cpu_seconds_per_layer_token": (),
    "geometry_isotropy_cpu_seconds_per_layer_token": (),
    "geometry_lid_cpu_seconds_per_layer_token": (),
    "geometry_benchmark_tokens": (),
    "geometry_tokens_per_sentence": ("dataset",),
    "geometry_sts_cpu_seconds_per_sentence": (),
    "geometry_classification_cpu_seconds_per_token_seed": (),
    # the extension study's runs: model is the head (linear, deep<k>, triplet)
    "extensions_update_cpu_seconds": ("model", "dataset"),
    "extensions_evaluation_cpu_seconds": ("model", "dataset"),
    "extensions_benchmark_items": (),
    "extensions_heldout_train_cpu_seconds": (),
    "extensions_heldout_score_cpu_seconds": (),
}


# A model's forward-and-backward cost per example over MiniLM's (6 layers, 384-d, the model the
# fine-tuning and geometry costs were measured with): 12-layer 768-d models 4x (2x the layers,
# about 2x the width's cost at these lengths; ALBERT shares its weights, not its compute),
# 6-layer 768-d DistilBERT 2x. Scaled, not measured: every estimate that reads it says so.
MODEL_SIZE_FACTOR = {
    "miniLM": 1.0,
    "mpnet": 4.0,
    "bert": 4.0,
    "bert-cased": 4.0,
    "albert": 4.0,
    "gpt2": 4.0,
    "openai-gpt": 4.0,
    "distilbert": 2.0,
    "distilbert-cased": 2.0,
}


@dataclass(frozen=True)
class Cost:
    """One measured number of ``config/costs.csv`` with what measured it."""

    quantity: str
    model: str
    dataset: str
    value: float
    unit: str
    measured: str
    machine: str
    command: str
    note: str = ""


def read_costs(path: str | os.PathLike = COSTS_TABLE) -> list[Cost]:
    """Every row of the costs table, checked: known columns and quantities, a finite positive
    value, an ISO date, a machine and a command; each problem named with its line."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {list(COLUMNS)}")
        rows = [_cost(row, f"{path}, line {reader.line_num}") for row in reader]
    keys = [(c.quantity, c.model, c.dataset) for c in rows]
    if duplicated := sorted({key for key in keys if keys.count(key) > 1}):
        raise ValueError(f"{path}: measured twice: {duplicated}; keep one row for each")
    return rows


def _cost(row: Mapping[str, str], where: str) -> Cost:
    quantity = row["quantity"]
    if quantity not in QUANTITIES:
        raise ValueError(f"{where}: unknown quantity {quantity!r}; known: {sorted(QUANTITIES)}")
    for column in ("model", "dataset"):
        if bool(row[column]) != (column in QUANTITIES[quantity]):
            needs = "needs a" if column in QUANTITIES[quantity] else "takes no"
            raise ValueError(f"{where}: {quantity} {needs} {column}")
    try:
        value = float(row["value"])
    except ValueError:
        raise ValueError(f"{where}: value {row['value']!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{where}: value {value} is not a finite positive number")
    try:
        datetime.date.fromisoformat(row["measured"])
    except ValueError:
        raise ValueError(
            f"{where}: measured {row['measured']!r} is not a date (YYYY-MM-DD)"
        ) from None
    for column in ("unit", "machine", "command"):
        if not row[column].strip():
            raise ValueError(f"{where}: no {column}: say what measured {quantity}")
    text = {column: row[column] for column in COLUMNS if column != "value"}
    return Cost(value=value, **text)


def caveats(device: str, unknown: list[str]) -> list[str]:
    """The lines a study's estimate ends with: on a GPU its CPU costs are an upper bound, and the
    jobs without a measured cost (``unknown``) are left out of the total."""
    lines = []
    if device == "cuda":
        lines.append("on a GPU: no cost measured; the CPU estimate is an upper bound")
    if unknown:
        lines.append(f"no measured cost for {', '.join(unknown)}: not included above")
    return lines


@dataclass(frozen=True)
class Pace:
    """How CPU seconds become wall seconds of a study on this machine: ``speed``, the speed
    probe's factor (1 on the host where the costs were measured); ``cores``, the idle cores;
    ``job_overhead``, the start-up every job pays."""

    speed: float = 1.0
    cores: int = 2
    job_overhead: float = 0.0

    def parallel(self, threads: int) -> int:
        """How many jobs of ``threads`` threads run side by side."""
        return max(1, self.cores // threads)

    def share(self, cpu_seconds: float, threads: int) -> float:
        """Wall seconds one job adds to its study's total: its one-thread CPU cost times
        ``speed`` spread over its ``threads``, plus its start-up, with :meth:`parallel` such
        jobs side by side. A study's estimate sums these; the run's progress lines weigh its
        jobs by them (isotropy.estimate.job_seconds)."""
        return (self.speed * cpu_seconds / threads + self.job_overhead) / self.parallel(threads)

    def total(self, shares: Sequence[float | None], threads: int, small_jobs: int = 0) -> float:
        """A study's wall seconds: its jobs' shares (:meth:`share`), and a start-up for each
        job without a measured cost (None) and each of ``small_jobs`` not costed (tables,
        figures), :meth:`parallel` at a time."""
        uncosted = sum(s is None for s in shares) + small_jobs
        known = sum(s for s in shares if s is not None)
        return known + uncosted * self.job_overhead / self.parallel(threads)


# A job's wall seconds from the configuration, its wildcards and the pace (None: no measured
# cost); each study's cost module maps its rules to one (isotropy.estimate.JOB_COSTS).
JobCost = Callable[[Mapping[str, Any], Mapping[str, Any], Pace], float | None]


@functools.cache
def measured_costs() -> tuple[Cost, ...]:
    """The project's costs table (read once)."""
    return tuple(read_costs())


def value(quantity: str, rows: tuple[Cost, ...] | None = None) -> float:
    """The one number of a quantity measured for no model or data set in particular."""
    found = [c.value for c in rows or measured_costs() if c.quantity == quantity]
    if len(found) != 1:
        raise KeyError(f"config/costs.csv holds {len(found)} rows of {quantity!r}, expected 1")
    return found[0]


def by_dataset(quantity: str, rows: tuple[Cost, ...] | None = None) -> dict[str, float]:
    """A quantity's numbers by the data set they were measured on."""
    return {c.dataset: c.value for c in rows or measured_costs() if c.quantity == quantity}


def by_model(quantity: str, rows: tuple[Cost, ...] | None = None) -> dict[Any, float]:
    """A quantity's numbers by model (and data set, where the quantity names one)."""
    return {
        ((c.model, c.dataset) if c.dataset else c.model): c.value
        for c in rows or measured_costs()
        if c.quantity == quantity
    }


# ---------------------------------------------------------------------------------------------
# The sensitivity grid's runs (python -m isotropy.estimate --target sensitivity_study)


def vector_dim(config: Mapping[str, Any], name: str) -> int | None:
    """The width of a vector set: an existing vectors.npy's, else its record's (a derived set's
    ``dim`` or its origin's; a sentence encoder's model, ``models.<name>.dimension``; a
    word-vector source's ``sources.<name>.dimension``, for the files of the origin in use: the
    mirror's or the URL's). None: no record gives it."""
    derived = dict(config["sensitivity"].get("derived") or {})
    if name in derived:
        spec = derived[name]
        return spec.get("dim") or vector_dim(config, spec["of"])
    for setup in ("supersense", "pos"):
        path = paths.embedding_file("vectors.npy", name, setup)
        if os.path.isfile(path):
            return int(np.load(path, mmap_mode="r").shape[1])
    spec = config["encoders"][name]
    if spec["kind"] == "sentence-transformer":
        return ModelSpec.from_config(config, spec["model"]).dimension
    widths = config["sources"][spec["source"]].get("dimension") or {}
    return widths.get("mirror" if resolve_mirror(config.get("mirror")) else "url")


def sensitivity_run_seconds(
    config: Mapping[str, Any],
    run: Mapping[str, Any],
    device: str,
    cpu_seconds: Mapping[str, Any],
    gpu_per_update: float,
) -> float | None:
    """Estimated wall time of one sensitivity run: on a CPU, a fixed start-up plus a part that
    grows as items² and as dimension^power (the ``sensitivity_*`` rows of config/costs.csv);
    on a GPU, the main study's per-update cost at 384-d, scaled by dimension beyond it.

    The items of a label set are ``sensitivity_single_items`` (counted on the mirror); one not
    counted is costed as ``all`` (an upper bound: it keeps a subset)."""
    section = config["sensitivity"]
    dim = vector_dim(config, run["vectors"])
    if dim is None or run["setup"] not in cpu_seconds:
        return None
    base_items = by_dataset("sensitivity_items")
    single = by_dataset("sensitivity_single_items")
    items = section["paper_size"] if run["label_set"] == "paper_size" else base_items[run["setup"]]
    if run["label_set"] == "single":
        items = single.get(run["setup"], items)
    scale_items = items / base_items["supersense"]
    updates, stride = section["updates"], section["metric_stride"]
    if device == "cuda":  # measured at 384-d, every update; larger tables scale with dimension
        return updates * gpu_per_update * max(1.0, dim / 384)
    evaluations = evaluation_count(updates, stride)
    if section["metric_sample_size"]:
        scale_items = min(scale_items, section["metric_sample_size"] / base_items["supersense"])
    share = value("sensitivity_evaluation_share")
    work = (1 - share) * updates / 1000 + share * evaluations / 21
    width = (dim / value("sensitivity_base_dim")) ** value("sensitivity_dim_power")
    part = value("sensitivity_run_cpu_part") * work * scale_items**2 * width
    return value("sensitivity_run_cpu_startup") + part
