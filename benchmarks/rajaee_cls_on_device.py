"""The Rajaee CLS cause sweep (``benchmarks/rajaee_cls_learning.py --measure``) at five seeds on
one GPU (issue 79): MiniLM fine-tuned on 1,024 SST-2 sentences without the method and TRAINED
WITH each of its variants, every run's cluster–label agreement measured, the runs without the
method also scored with the method applied afterwards (the sweep's grid).

The variants, in the order each seed runs them (the most needed first, so that a call cut by its
deadline leaves the same variants done for every seed):

1. ``none``: the baseline (and the grid of the method applied after training);
2. ``offline, k = 3, d = 2``: the study's default method, trained with;
3. ``batch, k = 3, d = 0`` and 4. ``batch, k = 1, d = 0``: centring 3 clusters of each batch
   against centring the whole batch, nothing removed: the pair differs in k alone;
5. ``batch, k = 3, d = 2``: the method fitted per batch (against 2: fitting per batch).

Runbook (the pattern of benchmarks/istar_on_device.py):

1. Here (CPU, seconds): pack MiniLM as float16 weights, SST-2's two mirror files and plan.json
   (the sweep's settings, the variants, the H100 costs of docs/data/istar_gpu_whole_costs.csv)
   and pydantic for the device's Python (``pylib/``: on_device.bundle_packages) into
   ``.rajaee_device/`` (git-ignored, about 56 MiB)::

       ISOTROPY_MIRROR=../shared/mirror .venv/bin/python benchmarks/rajaee_cls_on_device.py pack

2. On the device, one call of the device tool's ``run`` (carry ``[".rajaee_device"]``, timeout_s
   150: the deadline, :data:`GRACE_S` for a run still going, the record)::

       export PYTHONPATH=src:.rajaee_device/pylib PYTHONUNBUFFERED=1;
       python3 benchmarks/rajaee_cls_on_device.py run --out $OUT --deadline-s 120 2>&1 |
       tee $OUT/run.log

   It prints its estimate first, then runs one worker process per seed at once (the GPU is
   shared; each worker holds ``--threads`` CPU threads for k-means), each starting no run that
   its estimate (after its first run: the slowest it ran) says would end past the deadline.
   Every finished run is appended at once to ``$OUT/cause.jsonl`` (the JSON line of
   docs/data/rajaee_cls_cause.jsonl, plus the device); ``$OUT/record.json`` (device, versions,
   estimate, wall seconds per run, runs not started) is rewritten at the start and the end.

3. Here: ``python -m isotropy.committed copy rajaee_cls_gpu OUT`` copies them into
   ``docs/data/rajaee_cls_gpu_cause.jsonl`` and its record and renders docs/rajaee-cls.md.

Tested end to end on the CPU with a tiny BERT (tests/test_rajaee_cls_on_device.py).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import on_device
from rajaee_cls_learning import FOLDERS, MODEL, sweep_run

from isotropy.compute import resolve_device, use_threads
from isotropy.configuration.finetune import ClsTraining, TrainingSettings
from isotropy.configuration.studies import ClusterMethod
from isotropy.costs import MODEL_SHAPE
from isotropy.finetune.training import task_splits
from isotropy.io import sha256_file, write_json
from isotropy.models import ModelSpec
from isotropy.rajaee_cls.results import variant_name
from isotropy.readers.tasks import task_spec

ROOT = Path(__file__).resolve().parents[1]
PACK = ROOT / ".rajaee_device"
TASK = "sst2"
VALIDATION_ROWS = task_spec(TASK).rows[1]  # what the H100's evaluation_s was measured on
# The sweep's settings (docs/data/rajaee_cls_cause.jsonl): the study's (rajaee_cls.training).
TRAINING = ClsTraining().model_dump(
    include={
        "learning_rate",
        "batch_size",
        "epochs",
        "max_length",
        "train_subset",
        "warmup_ratio",
        "reference_sample_size",
    }
)
# The variants in the priority order of the module docstring, as the sweep's JSON lines name them.
VARIANTS: tuple[dict[str, Any], ...] = (
    {"method": "none"},
    *(
        {
            "method": "cluster",
            "cluster_method": ClusterMethod.model_validate(
                dict(clusters=k, directions=d, fit=fit)
            ).model_dump(),
        }
        for fit, k, d in (("offline", 3, 2), ("batch", 3, 0), ("batch", 1, 0), ("batch", 3, 2))
    ),
)
H100_COSTS = ROOT / "docs" / "data" / "istar_gpu_whole_costs.csv"  # an H100's, MiniLM on SST-2
STAND_IN = "MiniLM (all-MiniLM-L6-v2), a stand-in for the Rajaei slides' BERT-base"
GRACE_S = 15  # past the deadline, a worker still running is stopped


def pack(mirror: Path, dest: Path, model: ModelSpec = MODEL) -> dict:
    """Write ``model`` as float16 weights, SST-2's mirror files and ``plan.json`` into ``dest``."""
    import pandas as pd

    files = [mirror / FOLDERS[TASK] / name for name in ("train.tsv", "dev.tsv")]
    on_device.pack_model(dest, Path(model.source), files)
    costs = pd.read_csv(H100_COSTS).iloc[0]
    plan = {
        "task": TASK,
        "stand_in": STAND_IN,
        "training": TRAINING,
        "variants": VARIANTS,
        "costs": {
            "source": str(H100_COSTS.relative_to(ROOT)),
            **{k: float(costs[k]) for k in ("load_s", "evaluation_s", "step_s_none")},
        },
    }
    return on_device.write_plan(dest, plan, f"{model.source} and SST-2")


# ----------------------------------------------------------------------------- the estimate


def kmeans_seconds(rows: int, dim: int = MODEL_SHAPE["miniLM"][1], repeats: int = 3) -> float:
    """Seconds of one k-means (k = 3, the method's) on ``rows`` random states, here and now."""
    import numpy as np

    from isotropy.transforms import fit_cluster_transform

    points = np.random.default_rng(0).standard_normal((rows, dim))
    fit_cluster_transform(points, 3, 0, seed=0)  # untimed: the imports and thread pools' start
    started = time.perf_counter()
    for _ in range(repeats):
        fit_cluster_transform(points, 3, 0, seed=0)
    return (time.perf_counter() - started) / repeats


def run_seconds(variant: dict, rows: int, valid: int, settings, costs: dict) -> float:
    """The estimate of one run on ``rows`` training and ``valid`` validation sentences: loading
    the model, its optimiser steps, its passes over the training sentences (before each epoch and
    the evaluation) and the validation's (one for the agreement, one scored), the per-batch
    k-means (of the agreement, of the method fitted per batch, of the applied-after grid) and the
    whole set's (one a pass, one a grid point), at ``costs``: ``load_s``, ``step_s_none``,
    ``evaluation_s`` (SST-2's validation split), ``kmeans_batch_s``, ``kmeans_set_s``."""
    batches = -(-rows // settings.batch_size)
    steps, passes = batches * settings.epochs, settings.epochs + 1
    eval_batches = -(-valid // settings.eval_batch_size)
    small, large = settings.epochs * batches + eval_batches, passes  # the agreement
    if variant.get("cluster_method", {}).get("fit") == "batch":
        small += steps + eval_batches  # the method on every batch, training and evaluation
    if variant["method"] == "none":  # the applied-after grid, per batch and offline, 7 points
        small, large = small + 7 * eval_batches, large + 7
    return (
        costs["load_s"]
        + steps * costs["step_s_none"]
        + (passes * rows + 2 * valid) / VALIDATION_ROWS * costs["evaluation_s"]
        + small * costs["kmeans_batch_s"]
        + large * costs["kmeans_set_s"]
    )


def measured_costs(plan: dict, rows: int) -> dict:
    """The plan's H100 costs and k-means' seconds measured here (a batch of 32, ``rows``)."""
    costs = {k: v for k, v in plan["costs"].items() if k != "source"}
    return costs | {"kmeans_batch_s": kmeans_seconds(32), "kmeans_set_s": kmeans_seconds(rows, 1)}


# ----------------------------------------------------------------------------- the sweep


def run_sweep(args: argparse.Namespace) -> None:
    """Check the pack, unpack the weights, print the estimate, start one worker a seed, wait
    (stopping any still running :data:`GRACE_S` past the deadline), and write the record."""
    begun = time.perf_counter()
    deadline_at = time.time() + args.deadline_s
    plan = on_device.load_plan(args.pack)
    device = resolve_device(args.device)
    args.out.mkdir(parents=True, exist_ok=True)
    on_device.unpack_model(args.pack, _work(args))
    use_threads(args.threads)
    training = {**TRAINING, **_overrides(args)}
    settings = TrainingSettings.model_validate(training)
    if settings.train_subset is None:
        raise SystemExit("the sizing needs a training subset: pass --train-subset ROWS")
    rows, valid = settings.train_subset, settings.eval_subset or VALIDATION_ROWS
    costs = measured_costs(plan, rows)
    variants = VARIANTS[: args.variants]
    per_run = {variant_name(v): run_seconds(v, rows, valid, settings, costs) for v in variants}
    per_seed = sum(per_run.values())
    where = f"{on_device.device_name(device)}; {len(args.seeds)} seeds x {len(variants)} variants"
    print(f"{STAND_IN}; {where}")
    print("costs: " + ", ".join(f"{k} {v:.3g}" for k, v in costs.items()))
    print("estimate per run: " + ", ".join(f"{k} {v:.1f} s" for k, v in per_run.items()))
    print(
        f"estimate: {per_seed:.0f} s a seed, {per_seed * len(args.seeds):.0f} s one after another; "
        f"{per_seed:.0f} s with the {len(args.seeds)} seeds at once if they do not slow each "
        f"other (deadline {args.deadline_s:.0f} s)",
        flush=True,
    )
    command = " ".join(["python benchmarks/rajaee_cls_on_device.py", *sys.argv[1:]])
    record = {
        "what": "the Rajaee CLS cause sweep, trained with each variant, on one device",
        "stand_in": STAND_IN,
        **on_device.record_header(plan, device, command),
        "training": training,
        "seeds": args.seeds,
        "variants": variants,
        "costs": costs,
        "estimated_seconds_per_run": per_run,
        "inputs_sha256": plan["files_sha256"],
    }
    write_record(args.out, record, begun)
    workers = {
        seed: subprocess.Popen(
            [sys.executable, __file__, "worker", "--seed", str(seed), *_worker_args(args)]
            + ["--deadline-at", repr(deadline_at)],
            env={**os.environ, "OMP_NUM_THREADS": str(args.threads)},
        )
        for seed in args.seeds
    }
    record["stopped_workers"], record["failed_workers"] = [], []
    for seed, process in workers.items():
        try:
            code = process.wait(timeout=max(0.0, deadline_at + GRACE_S - time.time()))
        except subprocess.TimeoutExpired:  # a run far slower than its estimate: what ended stays
            process.kill()
            process.wait()
            record["stopped_workers"].append(seed)
            continue
        if code != 0:
            record["failed_workers"].append(seed)
    write_record(args.out, record, begun)
    print(f"{len(_lines(args.out))} runs in {time.perf_counter() - begun:.0f} s")


def _work(args: argparse.Namespace) -> Path:
    return args.work or args.pack / "work"


def _overrides(args: argparse.Namespace) -> dict:
    """The settings a (tiny, CPU) check changes: none on the device."""
    found = {"epochs": args.epochs, "train_subset": args.train_subset}
    found["eval_subset"] = args.eval_subset
    return {k: v for k, v in found.items() if v is not None}


def _worker_args(args: argparse.Namespace) -> list[str]:
    """The run's options that its workers take."""
    found = ["--pack", str(args.pack), "--out", str(args.out), "--device", args.device]
    found += ["--work", str(_work(args)), "--threads", str(args.threads)]
    found += ["--variants", str(args.variants)]
    for option, value in _overrides(args).items():
        found += [f"--{option.replace('_', '-')}", str(value)]
    return found


def _lines(out: Path) -> list[dict]:
    path = out / "cause.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write_record(out: Path, record: dict, begun: float) -> None:
    """record.json: the wall seconds of each run that ended, the runs not ended, the total, the
    checksum of cause.jsonl."""
    done = {f"seed{x['seed']} {variant_name(x)}": x["wall_seconds"] for x in _lines(out)}
    record["wall_seconds_per_run"] = dict(sorted(done.items()))
    record["runs_not_ended"] = [
        name
        for seed in record["seeds"]
        for variant in record["variants"]
        if (name := f"seed{seed} {variant_name(variant)}") not in done
    ]
    record["wall_seconds_total"] = round(time.perf_counter() - begun, 1)
    if (out / "cause.jsonl").is_file():
        record["files_sha256"] = {"cause.jsonl": sha256_file(out / "cause.jsonl")}
    write_json(out / "record.json", record)


def worker(args: argparse.Namespace) -> None:
    """One seed's runs, in the variants' order, each appended to cause.jsonl when it ends; no
    run starts that would end past the deadline by its estimate, scaled (after the first run) by
    the most a finished run took over its own: that measures this call's load, the other seeds
    beside it."""
    plan = on_device.load_plan(args.pack)
    device = resolve_device(args.device)
    use_threads(args.threads)
    training = {**TRAINING, **_overrides(args)}
    settings = TrainingSettings.model_validate(training)
    folder = args.pack / "data"
    data = task_splits(TASK, folder, folder, settings)
    model = ModelSpec(path=str(_work(args) / "model-float32"), name="miniLM")
    costs = measured_costs(plan, len(data[0]))
    ratios: list[float] = []  # each finished run's wall seconds over its estimate
    for variant in VARIANTS[: args.variants]:
        name = variant_name(variant)
        estimate = run_seconds(variant, len(data[0]), len(data[1]), settings, costs)
        if not on_device.starts_in_time(
            f"seed {args.seed} {name}", estimate * max(ratios, default=1.0), args.deadline_at
        ):
            break
        cluster = ClusterMethod(**variant.get("cluster_method", {}))
        run = (TASK, training, variant["method"], cluster, args.seed, data, True, model, device)
        line = sweep_run(*run)
        line |= {"device": on_device.device_name(device), "estimated_seconds": round(estimate, 1)}
        ratios.append(line["wall_seconds"] / estimate)
        with open(args.out / "cause.jsonl", "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # one whole line at a time from each worker
            handle.write(json.dumps(line) + "\n")
        print(f"seed {args.seed} {name}: {line['wall_seconds']:.1f} s (estimated {estimate:.1f})")


def main() -> None:
    description = __doc__.split("\n\n")[0]
    parser, commands, packing, running = on_device.command_line(
        description, PACK, "the model, SST-2, plan"
    )
    packing.add_argument("--model", default=MODEL.path, help="a model folder (a check: tiny)")
    running.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    running.add_argument("--deadline-s", type=float, default=120.0, help="no run ends past it")
    one = commands.add_parser("worker", help="one seed's runs (run starts these)")
    on_device.run_options(one, PACK)
    one.add_argument("--seed", type=int, required=True)
    one.add_argument("--deadline-at", type=float, required=True, help="epoch seconds")
    for sub in (running, one):
        sub.add_argument("--threads", type=int, default=3, help="CPU threads a worker holds")
        sub.add_argument("--variants", type=int, default=len(VARIANTS), help="the first N")
        # a check on the CPU: fewer sentences, fewer epochs
        sub.add_argument("--epochs", type=int, default=None)
        sub.add_argument("--train-subset", type=int, default=None)
        sub.add_argument("--eval-subset", type=int, default=None)
    actions = {
        "pack": lambda args: pack(args.mirror, args.to, ModelSpec(path=args.model, name="miniLM"))
    }
    on_device.dispatch(parser, actions | {"run": run_sweep, "worker": worker})


if __name__ == "__main__":
    main()
