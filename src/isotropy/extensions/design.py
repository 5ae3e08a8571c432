"""The extension study's grid, the settings of one run, its item sample and its cost.

Plain Python (the workflow imports it while it parses). A run is (setup, head, seed); heads are
``linear`` (the paper's classifier, recording the cluster criteria too), ``deep<k>`` (k hidden
layers) and ``triplet`` (no classifier). Every head of a setup optimises the same seeded sample
of the setup's items (config ``extensions.items``), so heads compare on the same data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

import pandas as pd

from isotropy import costs
from isotropy.configuration import Config, Extensions
from isotropy.configuration.data import SentenceEncoder
from isotropy.traces import evaluation_count

# Each question's table title, in the order of the tables, figures and docs: the one spelling of
# the questions (their files are keyed by these names, never paired by position).
TITLES = {
    "criteria": "Other cluster criteria beside the silhouette (linear head)",
    "deep": "Deep classifier heads: IsoScore and silhouette change per layer",
    "triplet": "Triplet objective over the labels (no classifier)",
    "heldout": "Held-out data: MiniLM fine-tuned end to end with a linear head",
}
QUESTIONS = tuple(TITLES)


def heads(section: Extensions) -> list[str]:
    """The heads of the grid, in run order: linear, deep<k> for each depth k > 0, triplet."""
    deep = [f"deep{depth}" for depth in section.depths if depth > 0]
    return ["linear", *deep, *(["triplet"] if section.triplet.enabled else [])]


def depth(head: str) -> int:
    """Hidden layers of a head (0 for linear and triplet)."""
    return int(head[4:]) if head.startswith("deep") else 0


def head_settings(section: Extensions, head: str) -> dict[str, Any]:
    """Keyword arguments of :class:`isotropy.optimize.Head` for one head."""
    if head == "triplet":
        return {"objective": "triplet", "margin": section.triplet.margin}
    return dict(hidden_layers=depth(head), width=section.width, activation=section.activation)


def run_settings(config: Config, dataset: str, head: str, seed: int) -> dict[str, Any]:
    """Everything one run needs: OptimisationSettings and Head keyword arguments, the sample."""
    section = config.extensions
    settings: dict[str, Any] = {"updates": section.updates, "learning_rate": section.learning_rate}
    settings |= {"bias": config.main.setups[dataset].bias, "metric_stride": section.metric_stride}
    settings |= {"metric_sample_size": section.metric_sample_size, "seed": seed}
    if head == "linear":
        settings["extra_metrics"] = list(section.criteria)
    items = {"items": section.items, "item_seed": section.item_seed}
    return {"settings": settings, "head": head_settings(section, head), **items}


def heldout_model(config: Config, dataset: str) -> str:
    """The model a setup's held-out run fine-tunes: the main study's encoder (``models.<name>``)."""
    encoder = config.encoders[config.main.setups[dataset].encoder]
    return cast(SentenceEncoder, encoder).model  # check_config refuses word vectors for sentences


def heldout_run_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``heldout`` block less its ``setups`` (what a run reads), from Snakemake's dict, not the
    model: this param's repr keeps the config files' key order, which ``model_dump`` would not."""
    return {k: v for k, v in config["extensions"]["heldout"].items() if k != "setups"}


def _alternatives(names) -> str:
    return "|".join(re.escape(str(name)) for name in names) or "^$"  # none: nothing matches


def run_wildcards(config: Config) -> dict[str, str]:
    """Regular expressions of a run's wildcards: only the configured setups and heads match."""
    if (section := config.extensions) is None:
        return {"dataset": "^$", "head": "^$"}
    return {"dataset": _alternatives(section.setups), "head": _alternatives(heads(section))}


def heldout_wildcards(config: Config) -> dict[str, str]:
    """Regular expressions of a held-out run's wildcards: only the configured setups match."""
    section = config.extensions
    return {"dataset": _alternatives(section.heldout.setups if section else [])}


def sample_items(table: pd.DataFrame, size: int | None, seed: int) -> pd.DataFrame:
    """A seeded random sample of ``size`` items (rows) of a prepared table (None: all)."""
    if size is None or size >= len(table):
        return table.reset_index(drop=True)
    return table.sample(n=size, random_state=seed).sort_index().reset_index(drop=True)


def settings_line(config: Config) -> str:
    """The settings every table and figure of the study states ('' without the section): only
    what this configuration runs, so an overlay that drops the deep heads or the held-out
    fine-tuning is not captioned with them."""
    if (s := config.extensions) is None:
        return ""
    sample = f"a seeded sample of at most {s.items} items per setup" if s.items else "every item"
    on = "" if s.metric_sample_size is None else f" on {s.metric_sample_size} sampled items"
    deep, triplet = "no deep heads; ", "no triplet runs; "
    if s.depths:
        depths, width = ", ".join(map(str, s.depths)), s.width or "of the representation"
        deep = f"deep heads of {depths} hidden {s.activation} layer(s), width {width}; "
    if s.triplet.enabled:
        triplet = f"triplet margin {s.triplet.margin}; "
    return (
        f"setups {', '.join(s.setups)}; {sample} (seed {s.item_seed}); full-batch Adam "
        f"lr {s.learning_rate}, {s.updates} updates, metrics every {s.metric_stride} "
        f"updates{on}; {deep}{triplet}{len(s.seeds)} seeds. {heldout_settings(config)}"
    )


def heldout_settings(config: Config) -> str:
    """The held-out fine-tuning's settings (the models it fine-tunes by name), or that none runs."""
    held = config.extensions.heldout
    if not held.setups:
        return "Held out: no fine-tuning runs in this configuration"
    models = ", ".join(sorted({heldout_model(config, setup) for setup in held.setups}))
    return (
        f"Held out ({', '.join(held.setups)}): {models} fine-tuned on {held.train_size} "
        f"training and scored on {held.heldout_size} held-out sentences, "
        f"lr {held.learning_rate} (head {held.head_learning_rate}), "
        f"batch {held.batch_size}, max length {held.max_length}, until held-out accuracy "
        f"gains less than {held.tolerance} for {held.patience} epoch(s) "
        f"(at most {held.max_epochs})"
    )


# The measured costs are rows of config/costs.csv (isotropy.costs), each with the date, machine
# and command that measured it (benchmarks/extensions_cost.py prints them): process-CPU seconds
# on one thread, normalised by the speed probe, per update and per metric evaluation of each
# head (``extensions_update_cpu_seconds``, ``extensions_evaluation_cpu_seconds``: model = the
# head) at ``extensions_benchmark_items`` items, and of the held-out fine-tuning per training
# sentence-epoch and per sentence scored (``extensions_heldout_*``).
RUN_STARTUP_SECONDS = 8.0  # Python, torch and the data per job (as isotropy.estimate's 7 s)


def run_cost(dataset: str, head: str) -> tuple[float, float] | None:
    """(CPU-s per update, per metric evaluation) of a head on a setup's items, as measured
    (None: neither is measured); a table that holds one without the other is refused."""
    quantities = ("extensions_update_cpu_seconds", "extensions_evaluation_cpu_seconds")
    per_update, per_evaluation = (costs.by_model(q).get((head, dataset)) for q in quantities)
    if per_update is None or per_evaluation is None:
        if per_update is per_evaluation:
            return None
        missing = "update" if per_update is None else "evaluation"
        raise KeyError(
            f"config/costs.csv has no extensions_{missing}_cpu_seconds row for model {head!r}, "
            f"dataset {dataset!r} beside the other cost of that run: measure both "
            "(benchmarks/extensions_cost.py)"
        )
    return per_update, per_evaluation


def run_seconds(config: Config, dataset: str, head: str) -> float | None:
    """Estimated seconds of one one-thread run (None: no measured cost for this setup and head):
    updates scale with the items, evaluations with their square (silhouette's and Dunn's pairs)."""
    section = config.extensions
    measured = run_cost(dataset, head)
    if measured is None:
        return None
    per_update, per_evaluation = measured
    scale = (section.items or 10_000) / costs.value("extensions_benchmark_items")
    evaluations = evaluation_count(section.updates, section.metric_stride)
    work = section.updates * per_update * scale + evaluations * per_evaluation * scale**2
    return RUN_STARTUP_SECONDS + work


def heldout_seconds(config: Config) -> float:
    """Estimated wall seconds of one held-out fine-tuning run at its largest epoch count."""
    held = config.extensions.heldout
    epochs = held.max_epochs
    train = epochs * held.train_size * costs.value("extensions_heldout_train_cpu_seconds")
    scored = held.heldout_size + held.train_size  # both are scored after every epoch
    score = (epochs + 1) * scored * costs.value("extensions_heldout_score_cpu_seconds")
    return RUN_STARTUP_SECONDS + train + score


def optimize_job_seconds(
    config: Config, wildcards: Mapping[str, Any], pace: costs.Pace
) -> float | None:
    """Wall seconds one run (rule extensions_optimize; wildcards dataset, head, seed) adds to
    the study's total: one thread, ``pace.cores`` runs side by side, its start-up in
    :func:`run_seconds` (not the pace's; None: no measured cost)."""
    seconds = run_seconds(config, wildcards["dataset"], wildcards["head"])
    return None if seconds is None else pace.speed * seconds / pace.cores


def heldout_job_seconds(config: Config, wildcards: Mapping[str, Any], pace: costs.Pace) -> float:
    """Wall seconds one fine-tuning run (rule extensions_heldout) adds to the study's total: one
    at a time on the rule's 2 threads, which keep ``job_cores_used`` cores busy
    (config/costs.csv); its start-up in :func:`heldout_seconds` (not the pace's)."""
    return pace.speed * heldout_seconds(config) / costs.value("job_cores_used")


# rule -> the wall seconds one of its jobs adds (isotropy.estimate.JOB_COSTS).
JOB_COSTS = {"extensions_optimize": optimize_job_seconds, "extensions_heldout": heldout_job_seconds}
