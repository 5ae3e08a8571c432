"""The I-STAR grid of ``config/istar_gpu.yaml`` on one GPU, through the workflow's own code, with
the cost per optimiser step of plain fine-tuning, I-STAR and CosReg measured in the same call.

MiniLM (all-MiniLM-L6-v2, the packaged weights rounded to float16 to travel) is a stand-in for the
poster's BERT, ALBERT and DistilBERT. The runs are :func:`isotropy.istar.study.run_grid`'s, each
fine-tuned by :func:`isotropy.finetune.training.run_and_save` (what rule ``finetune`` runs) and
collected by :func:`isotropy.istar.runs.collect_runs` (rule ``istar_runs``).

GPU runbook (its runs on an H200 and an H100: docs/istar-gpu.md):

1. Here (CPU, seconds): check config.yaml + the overlay as the workflow does and pack what the
   device needs into ``.istar_device/`` (git-ignored, 55 MiB beside the 6 MiB tree: under the
   64 MiB a call carries): MiniLM as float16 safetensors, SST-2's two mirror files, plan.json,
   and pydantic for the device's Python 3.12 in ``pylib/`` (on_device.bundle_packages, from PyPI)::

       ISOTROPY_MIRROR=../shared/mirror .venv/bin/python benchmarks/istar_on_device.py pack

   (the whole-split grid: ``--config config.yaml config/istar_gpu.yaml
   config/istar_gpu_whole.yaml``, then ``run --budget-s 100000`` so that no subset is taken).

2. On the device, one call of the device tool's ``run`` (carry ``[".istar_device"]``,
   timeout_s 570; about 7 minutes: the CUDA tests, then the measured, sized grid)::

       export PYTHONPATH=src:benchmarks:tests:.istar_device/pylib PYTHONUNBUFFERED=1;
       timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_finetune_cuda.py 2>&1 |
       tee $OUT/cuda_tests.log;
       python3 benchmarks/istar_on_device.py run --out $OUT 2>&1 | tee $OUT/run.log

   (tests/test_finetune_cuda.py imports nothing of the workflow: the device image has no
   Snakemake or jsonschema.) A call cut by its deadline is finished by another with
   ``--finish record.json`` (the first call's, carried in the pack folder): the runs it did not
   start, on its training subset, paced by its measured costs. More seeds are added the same way:
   list them in the overlay and in a ``--finish`` record's ``runs_not_started``. A second grid on
   the same model and data travels as a second plan in the same pack (``--plan plan_grid.json``).

3. Combine the calls' ``$OUT`` folders into ``docs/data/istar_gpu_*`` (``--into
   docs/data/istar_gpu_whole_record.json`` for config/istar_gpu_whole.yaml) with one record
   holding their checksums, the device and versions: ``python -m isotropy.committed copy
   istar_gpu OUT1 OUT2`` (into a grid already committed: after the calls it holds).

``run`` unpacks MiniLM to float32, measures seconds per optimiser step of the three regularisers
on the same batches (best of ``--rounds``; the penalty's overhead as a ratio to plain, target
<= 1.15) and each run's fixed costs (model load, tokenising, Σ_S, evaluation), prints its
estimate of the grid, and takes the largest seeded training subset (a multiple of 1,000 rows, at
most the overlay's ``train_subset``; null: the whole split) whose estimate fits ``--budget-s``.
Then it runs the grid seed by seed, rewriting its outputs after every run (a run that fails,
e.g. a non-finite loss, is recorded in record.json and the grid goes on), and starts no run that
its estimate says would end past ``--deadline-s`` seconds after its start. ``costs`` measures
the steps alone (on a CPU, say). Figures only: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from isotropy.compute import apply_job_environment, mixed_precision_dtype, resolve_device

# Before torch and tqdm load: idle threads sleep as in the workflow's jobs; no progress bars.
os.environ.update(apply_job_environment(dict(os.environ)))
os.environ.setdefault("TQDM_DISABLE", "1")

import on_device
import pandas as pd
import torch
from optimize import synchronise

from isotropy.configuration import Istar
from isotropy.configuration.finetune import TrainingSettings
from isotropy.finetune.evaluation import evaluate_model
from isotropy.finetune.features import load_model_and_tokenizer, task_features
from isotropy.finetune.regularisers import estimate_reference_covariance
from isotropy.finetune.training import (
    make_optimiser,
    run_and_save,
    task_splits,
    train_epoch,
    training_schedule,
)
from isotropy.io import sha256_file, write_json
from isotropy.istar.runs import collect_runs
from isotropy.istar.study import configured_lambda, run_grid, run_path
from isotropy.models import ModelSpec
from isotropy.readers.tasks import task_spec

ROOT = Path(__file__).resolve().parents[1]
PACK = ROOT / ".istar_device"
REGULARISERS = ("none", "istar", "cosreg")
STAND_IN = "MiniLM (all-MiniLM-L6-v2), a stand-in for the I-STAR poster's BERT, ALBERT, DistilBERT"
SUBSET_STEP = 1000  # the training subset is a multiple of this many rows
# Training rows the fixed costs are measured on: enough for Σ_S's 250,000 token states on SST-2
# (11.3 MiniLM tokens a sentence), so that its cost is the one every run pays.
MEASURED_ROWS = 25_000


def pack(config_files: list[Path], mirror: Path, dest: Path) -> dict:
    """Check ``config_files`` as the workflow does, write the first run model as float16 weights,
    the task's mirror files and ``plan.json`` (the istar section, checksums, the code's commit)
    into ``dest``."""
    from isotropy.readers.tasks import task_source
    from isotropy.workflow.config import load_config

    config, settings = load_config(config_files)
    section = config["istar"]
    models, tasks = {r["model"] for r in run_grid(settings.istar)}, section["tasks"]
    if len(models) != 1 or len(tasks) != 1:
        raise ValueError("the device script runs one model on one task; the overlay lists more")
    name, task = models.pop(), tasks[0]
    sources = [config["sources"][task_source(task, split)] for split in ("train", "validation")]
    files = [mirror / file for source in sources for file in source["mirror"]]
    on_device.pack_model(dest, Path(ModelSpec.from_config(config, name).source), files)
    plan = {
        "config_files": [os.path.relpath(p, ROOT) for p in config_files],
        "model_name": name,
        "stand_in": STAND_IN,
        "task": task,
        "istar": section,
    }
    return on_device.write_plan(dest, plan, f"{name} ({task})")


# ----------------------------------------------------------------------------- costs


def reference(model, tokenizer, features, settings, device) -> torch.Tensor:
    """Σ_S of the model's training token states, as I-STAR's training penalty takes it."""
    mixed = mixed_precision_dtype(device, settings.mixed_precision) is not None
    return estimate_reference_covariance(
        model,
        features,
        tokenizer,
        settings.reference_sample_size,
        settings.eval_batch_size,
        device,
        seed=0,
        mixed_precision=mixed,
    )


def step_costs(model, tokenizer, features, sigma, settings, device, steps: int, rounds: int):
    """Seconds per optimiser step (wall, and process CPU) of each regulariser, best of ``rounds``
    on the same first ``steps`` batches of epoch 0, through :func:`train_epoch` (λ = 1; the cost
    does not depend on λ's value; ``sigma``: Σ_S)."""
    precision = mixed_precision_dtype(device, settings.mixed_precision)
    optimiser = make_optimiser(model, settings, 10**6, precision)

    def timed(regulariser: str, count: int) -> tuple[float, float]:
        lam = 0.0 if regulariser == "none" else 1.0
        mixed = precision is not None
        run = dict(task="sst2", regulariser=regulariser, lam=lam, seed=0, settings=settings)
        run |= dict(device=device, mixed=mixed, epochs=1, total_steps=count)
        synchronise(device)
        wall, cpu = time.perf_counter(), time.process_time()
        train_epoch(run, 0, 0, features, tokenizer, model, optimiser, sigma)
        synchronise(device)
        return (time.perf_counter() - wall) / count, (time.process_time() - cpu) / count

    model.train()
    for regulariser in REGULARISERS:
        timed(regulariser, 2)  # warm-up: first calls, kernels, allocator
    best = {r: (math.inf, math.inf) for r in REGULARISERS}
    for _ in range(rounds):
        for regulariser in REGULARISERS:
            best[regulariser] = min(best[regulariser], timed(regulariser, steps))
    return {
        f"{part}_{r}": best[r][index]
        for r in REGULARISERS
        for index, part in enumerate(("step_s", "step_cpu_s"))
    }


def print_costs(costs: dict, device: torch.device, settings) -> None:
    print(f"per optimiser step on {on_device.device_name(device)} (batch {settings.batch_size}):")
    for r in REGULARISERS:
        wall, cpu = costs[f"step_s_{r}"], costs[f"step_cpu_s_{r}"]
        print(
            f"  {r:6s} {wall * 1e3:8.1f} ms wall, {cpu * 1e3:8.1f} ms process CPU; "
            f"{wall / costs['step_s_none']:.3f}x plain (wall), "
            f"{cpu / costs['step_cpu_s_none']:.3f}x (CPU)"
        )


def fixed_costs(
    spec: ModelSpec, task: str, data, settings, device
) -> tuple[dict[str, float], tuple[Any, Any, Any, Any]]:
    """Seconds of what every run does besides its steps: loading the model onto the device,
    tokenising (per training row), Σ_S of training tokens (per layer or pooled: the same passes)
    and the evaluation on the validation split; and (model, tokenizer, features, Σ_S)."""
    started = time.perf_counter()
    model, tokenizer = load_model_and_tokenizer(spec, task_spec(task))
    model.to(device)
    synchronise(device)
    costs = {"load_s": time.perf_counter() - started}
    sample = data[0].head(min(settings.train_subset or MEASURED_ROWS, MEASURED_ROWS))
    started = time.perf_counter()
    train, validation = task_features(task_spec(task), tokenizer, sample, data[1], settings)
    costs["features_s_per_row"] = (time.perf_counter() - started) / len(sample)
    started = time.perf_counter()
    sigma = reference(model, tokenizer, train, settings, device)
    synchronise(device)
    costs["reference_s"] = time.perf_counter() - started
    mixed = mixed_precision_dtype(device, settings.mixed_precision) is not None
    started = time.perf_counter()
    evaluate_model(model, tokenizer, task_spec(task), data[1], validation, settings, device, mixed)
    costs["evaluation_s"] = time.perf_counter() - started
    return costs, (model, tokenizer, train, sigma)


def run_seconds(run: dict, rows: int, costs: dict, settings) -> float:
    """The estimate of one run on ``rows`` training rows."""
    steps, epochs = training_schedule(rows, settings)
    sigma = costs["reference_s"] * (1 + (epochs if run["regulariser"] == "istar" else 0))
    fixed = costs["load_s"] + costs["features_s_per_row"] * rows + sigma + costs["evaluation_s"]
    return fixed + steps * costs[f"step_s_{run['regulariser']}"]


def fit_subset(runs, rows: int, cap: int | None, costs: dict, settings, budget: float):
    """(training rows, estimated seconds): the whole split when it fits ``budget`` (and ``cap``
    allows), else the largest multiple of :data:`SUBSET_STEP` rows that does. ValueError when
    not even one step's worth fits."""
    top = rows if cap is None else min(cap, rows)
    candidates = [top] + list(range(top // SUBSET_STEP * SUBSET_STEP, 0, -SUBSET_STEP))
    for n in candidates:
        total = sum(run_seconds(run, n, costs, settings) for run in runs)
        if total <= budget:
            return n, total
    raise ValueError(
        f"even {SUBSET_STEP} rows take {total:.0f} s, over the budget of {budget:.0f} s: "
        "give more --budget-s or fewer runs"
    )


# ----------------------------------------------------------------------------- the grid


def run_grid_on_device(args: argparse.Namespace) -> None:
    begun, deadline_at = time.perf_counter(), time.time() + args.deadline_s
    plan = on_device.load_plan(args.pack, args.plan)
    device = resolve_device(args.device)
    section, grid = plan["istar"], Istar.model_validate(plan["istar"])
    work = args.work or args.pack / "work"
    spec = ModelSpec(path=str(on_device.unpack_model(args.pack, work)), name=plan["model_name"])
    settings = TrainingSettings.model_validate(dict(section["training"]))
    data_folder = args.pack / "data"
    whole = task_splits(
        plan["task"], data_folder, data_folder, settings.model_copy(update={"train_subset": None})
    )
    print(f"{plan['stand_in']}; {plan['task']}: {len(whole[0])} training rows in the split")

    runs = sorted(run_grid(grid), key=lambda r: r["seed"])  # whole seeds first
    if args.finish:  # a cut call's runs not started, on its subset, paced by its costs
        earlier = json.loads(args.finish.read_text())
        costs, rows = earlier["costs"], earlier["istar"]["training"]["train_subset"]
        runs = [r for r in runs if run_path(r) in earlier["runs_not_started"]]
        rows = rows or len(whole[0])
        estimate = sum(run_seconds(run, rows, costs, settings) for run in runs)
    else:
        costs, measured = fixed_costs(spec, plan["task"], whole, settings, device)
        costs |= step_costs(*measured, settings, device, args.steps, args.rounds)
        del measured
        print_costs(costs, device, settings)
        fixed = ", ".join(f"{k} {v:.3g}" for k, v in costs.items() if "step" not in k)
        print(f"fixed per run: {fixed}")
        rows, estimate = fit_subset(
            runs, len(whole[0]), settings.train_subset, costs, settings, args.budget_s
        )
    settings.train_subset = None if rows >= len(whole[0]) else rows
    training = {**section["training"], "train_subset": settings.train_subset}
    section = {**section, "training": training}
    print(
        f"plan: {len(runs)} runs on {rows} training rows ({settings.epochs} epoch(s)), "
        f"estimated {estimate:.0f} s (budget {args.budget_s:.0f} s)"
    )
    data = task_splits(plan["task"], data_folder, data_folder, settings)
    args.out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([costs]).to_csv(args.out / "costs.csv", index=False)
    command = (
        "python benchmarks/istar_on_device.py run --out OUT "
        f"--budget-s {args.budget_s:g} --deadline-s {args.deadline_s:g}"
        + (f" --finish {args.finish.name}" if args.finish else "")
        + (f" --plan {args.plan}" if args.plan != "plan.json" else "")
    )
    record = {
        "what": f"the I-STAR grid of {plan['config_files'][-1]} on one device ({STAND_IN})",
        **on_device.record_header(plan, device, command),
        "istar": section,
        "costs": costs,
        "overhead_vs_plain": {
            r: costs[f"step_s_{r}"] / costs["step_s_none"] for r in ("istar", "cosreg")
        },
        "estimated_seconds": round(estimate, 1),
        "wall_seconds_per_run": {},
        "failed": {},
        "runs_not_started": [run_path(r) for r in runs],
        "inputs_sha256": plan["files_sha256"],
    }
    done = []
    for run in runs:
        key, predicted = run_path(run), run_seconds(run, rows, costs, settings)
        if not on_device.starts_in_time(key, predicted, deadline_at):
            continue
        record["runs_not_started"].remove(key)
        started = time.perf_counter()
        try:
            run_and_save(
                work / key,
                model_spec=spec,
                task=run["task"],
                regulariser=run["regulariser"],
                lam=configured_lambda(grid, run["regulariser"], run["lam"]),
                seed=run["seed"],
                data=data,
                settings=settings,
                device=device,
            )
            done.append(run)
        except (FloatingPointError, torch.OutOfMemoryError) as error:  # recorded, not hidden
            record["failed"][key] = f"{type(error).__name__}: {error}"
        record["wall_seconds_per_run"][key] = round(time.perf_counter() - started, 2)
        print(f"{key}: {record['wall_seconds_per_run'][key]:.1f} s (estimated {predicted:.1f})")
        record["wall_seconds_total"] = round(time.perf_counter() - begun, 1)
        write_outputs(args.out, record, [work / run_path(r) for r in done], done)
    print(f"{len(done)} of {len(runs)} runs in {time.perf_counter() - begun:.0f} s")


def write_outputs(out: Path, record: dict, files: list[Path], runs: list[dict]) -> None:
    """runs.csv, metrics.jsonl (every run's metrics.json, one a line) and record.json with the
    checksums of all three and costs.csv: rewritten after every run, so a cut call keeps them."""
    if files:
        collect_runs(files, [r["model"] for r in runs]).to_csv(out / "runs.csv", index=False)
    lines = [json.dumps(json.loads(path.read_text())) + "\n" for path in files]
    (out / "metrics.jsonl").write_text("".join(lines))
    names = ("runs.csv", "metrics.jsonl", "costs.csv")
    record["files_sha256"] = {n: sha256_file(out / n) for n in names if (out / n).is_file()}
    write_json(out / "record.json", record)


def measure_steps(args: argparse.Namespace) -> None:
    """``costs``: seconds per step of the three regularisers, the overlay's model and settings
    (a smaller Σ_S sample: the step's cost does not depend on it) on ``--rows`` SST-2 rows."""
    from isotropy.workflow.config import load_config

    device = resolve_device(args.device)
    config, typed = load_config(args.config)
    settings = TrainingSettings.model_validate(dict(config["istar"]["training"]))
    settings.train_subset, settings.reference_sample_size = args.rows, args.reference_sample_size
    folder = args.mirror / "glue" / "SST-2"
    data = task_splits("sst2", folder, folder, settings)
    spec = ModelSpec.from_config(config, run_grid(typed.istar)[0]["model"])
    model, tokenizer = load_model_and_tokenizer(spec, task_spec("sst2"))
    model.to(device)
    features, _ = task_features(task_spec("sst2"), tokenizer, *data, settings)
    sigma = reference(model, tokenizer, features, settings, device)
    costs = step_costs(model, tokenizer, features, sigma, settings, device, args.steps, args.rounds)
    print_costs(costs, device, settings)


def main() -> None:
    description = __doc__.split("\n\n")[0]
    parser, commands, packing, running = on_device.command_line(
        description, PACK, "the overlay's run"
    )
    # A second grid on the same model and data travels as a second plan in the same pack.
    running.add_argument("--plan", default="plan.json", help="the plan's file name in --pack")
    running.add_argument("--budget-s", type=float, default=300.0, help="the grid's estimate")
    running.add_argument("--deadline-s", type=float, default=420.0, help="no run ends past it")
    running.add_argument(
        "--finish", type=Path, default=None, help="a cut call's record.json: run what it did not"
    )
    stepping = commands.add_parser("costs", help="seconds per step of the three regularisers")
    stepping.add_argument("--rows", type=int, default=1024)
    stepping.add_argument("--reference-sample-size", type=int, default=4000)
    stepping.add_argument("--mirror", type=Path, default=packing.get_default("mirror"))
    stepping.add_argument("--device", default="auto")
    for sub in (packing, stepping):
        sub.add_argument(
            "--config",
            type=Path,
            nargs="+",
            default=[ROOT / "config.yaml", ROOT / "config" / "istar_gpu.yaml"],
        )
    for sub in (running, stepping):
        sub.add_argument("--steps", type=int, default=20, help="timed steps per regulariser")
        sub.add_argument("--rounds", type=int, default=2)
    actions = {"pack": lambda args: pack(args.config, args.mirror, args.to)}
    on_device.dispatch(parser, actions | {"run": run_grid_on_device, "costs": measure_steps})


if __name__ == "__main__":
    main()
