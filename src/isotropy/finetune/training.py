"""The training loop of one fine-tuning run (regulariser none, I-STAR or CosReg; optionally a
transform of the CLS states the head reads). A run checkpoints every epoch (model, optimiser,
scheduler, loss scaler, random generators, its signature) and resumes; seeded initialisation and
per-epoch shuffling make a resumed CPU run replay exactly the batches of an uninterrupted one.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import math
import os
import pickle
import random
import re
import time
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from isotropy.compute import autocast, describe_device, mixed_precision_dtype, resolve_device
from isotropy.configuration.finetune import TrainingSettings
from isotropy.finetune.evaluation import evaluate_model
from isotropy.finetune.features import (
    Features,
    collate,
    epoch_order,
    load_model_and_tokenizer,
    task_features,
    to_device,
)
from isotropy.finetune.head import HeadTransform, head_input_module, transform_head_input
from isotropy.finetune.regularisers import (
    cosine_penalty,
    estimate_reference_covariance,
    istar_penalty,
    token_points,
)
from isotropy.finetune.settings import check_run, format_lambda
from isotropy.io import atomic_path, write_json
from isotropy.models import ModelSpec
from isotropy.readers.tasks import load_task_split, task_spec

log = logging.getLogger(__name__)


# The regularisers that add a penalty to the task loss (the others add none).
PENALTIES = ("istar", "cosreg")


class TrainingInterrupted(RuntimeError):
    """Raised by ``stop_after_epoch`` after that epoch's checkpoint is written (a kill)."""


def training_schedule(n_features: int, settings: TrainingSettings) -> tuple[int, int]:
    """(optimiser steps, epochs): ``epochs`` passes over the data, cut at ``max_steps``."""
    steps_per_epoch = math.ceil(n_features / settings.batch_size)
    total_steps = steps_per_epoch * settings.epochs
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps)
    return total_steps, math.ceil(total_steps / steps_per_epoch)


def make_optimiser(model, settings: TrainingSettings, total_steps: int, precision):
    """AdamW, its learning-rate schedule and the loss scaler, on only when ``precision`` (the
    mixed-precision dtype, :func:`isotropy.compute.mixed_precision_dtype`) is float16."""
    from transformers import get_scheduler

    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    scheduler = get_scheduler(
        settings.scheduler,
        optimizer,
        num_warmup_steps=int(settings.warmup_ratio * total_steps),
        num_training_steps=total_steps,
    )
    scaler = torch.amp.GradScaler("cuda", enabled=loss_scaling(precision))
    return optimizer, scheduler, scaler


def loss_scaling(precision) -> bool:
    """Whether the loss is scaled: for float16 only (bfloat16 has float32's range)."""
    return precision == torch.float16


def batch_loss(
    model,
    batch: dict[str, torch.Tensor],
    regulariser: str,
    lam: float,
    reference: torch.Tensor | None,
    zeta: float,
    precision,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(loss, task loss, penalty or None) of one batch: task loss + λ · penalty.

    Only the forward pass runs under ``precision`` (mixed precision); the penalty is computed
    in full precision.
    """
    with precision:
        out = model(**batch, output_hidden_states=regulariser in PENALTIES)
    task_loss = out.loss.float()
    if regulariser not in PENALTIES:  # none
        return task_loss, task_loss, None
    mask = batch["attention_mask"]
    if regulariser == "istar":
        if reference is None:
            raise ValueError("I-STAR needs the reference covariance Σ_S; none was given")
        penalty = istar_penalty(token_points(out.hidden_states, mask), reference, zeta)
    else:  # CosReg on the last layer's token states, as in the paper
        penalty = cosine_penalty(out.hidden_states[-1][mask.bool()])
    return task_loss + lam * penalty, task_loss, penalty


def train_epoch(
    run: dict[str, Any],
    epoch: int,
    step: int,
    features: Features,
    tokenizer,
    model,
    optimiser,
    reference: torch.Tensor | None,
) -> tuple[int, dict[str, float]]:
    """One pass over the shuffled training features, stopping at ``run["total_steps"]`` (``run``:
    the run's fixed values); the steps done so far and the epoch's mean losses."""
    optimizer, scheduler, scaler = optimiser
    settings, device, lam = run["settings"], run["device"], run["lam"]
    sums: collections.defaultdict[str, float] = collections.defaultdict(float)
    batches = 0
    order = epoch_order(len(features), run["seed"], epoch).split(settings.batch_size)
    what = f"{run['task']} {run['regulariser']} λ={format_lambda(lam)}"
    label = f"{what} epoch {epoch + 1}/{run['epochs']}"
    progress = tqdm(order, desc=label, leave=False)
    for indices in progress:
        if step >= run["total_steps"]:
            break
        batch = to_device(collate(features, indices.tolist(), tokenizer), device)
        precision = autocast(device, run["mixed"])
        loss, task_loss, penalty = batch_loss(
            model, batch, run["regulariser"], lam, reference, settings.zeta, precision
        )
        if penalty is not None:
            sums["penalty"] += penalty.item()
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"non-finite loss at step {step} (task loss {task_loss.item()}); "
                "lower λ or the learning rate"
            )
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        step += 1
        batches += 1
        sums["loss"] += loss.item()
        sums["task_loss"] += task_loss.item()
        progress.set_postfix(loss=f"{loss.item():.4f}")
    return step, {k: v / max(batches, 1) for k, v in sums.items()}


def finetune(
    model_spec: ModelSpec,
    task: str,
    regulariser: str,
    lam: float,
    seed: int,
    out_dir: str | os.PathLike,
    data: tuple[pd.DataFrame, pd.DataFrame],
    settings: TrainingSettings | None = None,
    device: str | torch.device = "auto",
    stop_after_epoch: int | None = None,
    head_transform: HeadTransform | None = None,
) -> dict[str, Any]:
    """Fine-tune one model on one task with one regulariser, λ and seed; return its metrics.

    ``data``: the (train, validation) tables. ``head_transform``: a transform of the CLS states the
    head reads in every forward pass (the Rajaee CLS study's method), or None. A checkpoint goes
    to ``out_dir`` after every epoch and is resumed; ``stop_after_epoch`` (0-based) raises
    :class:`TrainingInterrupted` right after that epoch's checkpoint, as a kill would.
    """
    settings = settings or TrainingSettings()
    check_run(regulariser, lam)
    spec = task_spec(task)
    device = device if isinstance(device, torch.device) else resolve_device(device)
    precision = mixed_precision_dtype(device, settings.mixed_precision)  # None: full precision
    mixed = precision is not None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    from transformers import set_seed

    train_table, eval_table = data
    set_seed(seed)  # seeds the task head's initialisation
    model, tokenizer = load_model_and_tokenizer(model_spec, spec)
    model.to(device)
    if head_transform is not None:
        head_input_module(model)  # fails early for a model with no head to transform the input of
    train_features, eval_features = task_features(
        spec, tokenizer, train_table, eval_table, settings
    )
    total_steps, epochs = training_schedule(len(train_features), settings)
    optimiser = make_optimiser(model, settings, total_steps, precision)

    signature = run_signature(model_spec, task, regulariser, lam, seed, settings, head_transform)
    checkpoint_path = out_dir / CHECKPOINT_NAME
    start_epoch, step, history = resume(checkpoint_path, signature, model, *optimiser)
    run = dict(task=task, regulariser=regulariser, lam=lam, seed=seed, settings=settings)
    run |= dict(device=device, mixed=mixed, epochs=epochs, total_steps=total_steps)

    # Σ_S of the current model from up to reference_sample_size training token states
    sample_reference = functools.partial(
        estimate_reference_covariance,
        model,
        train_features,
        tokenizer,
        settings.reference_sample_size,
        settings.eval_batch_size,
        device,
        mixed_precision=mixed,
    )
    # The head transform runs in every forward pass from here on, evaluation included.
    with contextlib.ExitStack() as stack:
        if head_transform is not None:
            stack.enter_context(transform_head_input(model, head_transform.transform))
        model.train()
        prepare = getattr(head_transform, "prepare", None) or (lambda *args: None)
        for epoch in range(start_epoch, epochs):
            prepare(model, train_features, tokenizer, settings, device)
            reference = None
            if regulariser == "istar":
                reference = sample_reference(seed=1_000_003 * (seed + 1) + 7919 * (epoch + 1))
            step, means = train_epoch(
                run, epoch, step, train_features, tokenizer, model, optimiser, reference
            )
            history.append({"epoch": epoch + 1, "step": step, **means})
            log.info("epoch %d/%d: %s", epoch + 1, epochs, history[-1])
            progress = dict(signature=signature, epoch=epoch, step=step, history=history)
            save_checkpoint(checkpoint_path, progress, model, *optimiser)
            if stop_after_epoch is not None and epoch == stop_after_epoch:
                raise TrainingInterrupted(
                    f"stopped after epoch {epoch + 1} as asked; {checkpoint_path} holds the state"
                )

        # Σ_S of the evaluation: up to reference_sample_size training token states per layer, as
        # the authors' code builds it (the validation-token reference is an extra column)
        prepare(model, train_features, tokenizer, settings, device)
        eval_reference = sample_reference(seed=1_000_003 * (seed + 1) + 104_729, per_layer=True)
        evaluation = evaluate_model(
            model,
            tokenizer,
            spec,
            eval_table,
            eval_features,
            settings,
            device,
            mixed,
            references=eval_reference,
            head_method=None if head_transform is None else head_transform.transform,
        )
    return {
        "model": model_spec.as_record(),
        "task": task,
        "regulariser": regulariser,
        "lambda": float(lam),
        "seed": seed,
        "metric_name": spec.primary_metric,
        "metric": evaluation["scores"][spec.primary_metric],
        # what always answering the evaluation set's most frequent label scores (the guard)
        "majority_baseline": (
            float(eval_table["label"].value_counts(normalize=True).max())
            if "accuracy" in evaluation["scores"]
            else None
        ),
        **evaluation,
        "history": history,
        "settings": settings.model_dump(),
        "train_examples": len(train_table),
        "train_features": len(train_features),
        "steps": step,
        "device": describe_device(device),
        "precision": str(precision or torch.float32).removeprefix("torch."),
        "wall_seconds": time.perf_counter() - started,
        **({} if head_transform is None else {"head_transform": head_transform.record()}),
    }


def task_splits(
    task: str, train_folder: str | os.PathLike, validation_folder: str | os.PathLike, settings
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, validation) tables of ``task`` from its splits' downloads, each cut to the
    settings' subset (``train_subset``, ``eval_subset``; seeded by ``subset_seed``)."""
    read = functools.partial(load_task_split, task, subset_seed=settings.subset_seed)
    train = read("train", Path(train_folder), settings.train_subset)
    return train, read("validation", Path(validation_folder), settings.eval_subset)


def rule_run(snakemake: Any) -> dict[str, Any]:
    """What every fine-tuning rule (I-STAR's ``finetune``, the Rajaee CLS study's
    ``rajaee_cls_finetune``) passes to its run: the model, the task and its splits (the downloads
    of its sources, inputs ``train`` and ``validation``), the training settings, the seed and the
    configured device."""
    settings = TrainingSettings.model_validate(dict(snakemake.params.training))
    task = snakemake.wildcards.task
    train, validation = (Path(snakemake.input[split]).parent for split in ("train", "validation"))
    return {
        "model_spec": ModelSpec.from_record(snakemake.params.model),
        "task": task,
        "seed": int(snakemake.wildcards.seed),
        "data": task_splits(task, train, validation, settings),
        "settings": settings,
        "device": snakemake.params.device,
    }


def run_and_save(metrics_path: str | os.PathLike, **kwargs) -> dict[str, Any]:
    """Run :func:`finetune` into the folder of ``metrics_path``, write its metrics atomically, then
    drop the checkpoint unless ``settings.keep_checkpoint`` (optimiser state: ~3× the model)."""
    metrics_path = Path(metrics_path)
    result = finetune(out_dir=metrics_path.parent, **kwargs)
    write_json(metrics_path, result)
    settings = kwargs.get("settings") or TrainingSettings()
    if not settings.keep_checkpoint:
        (metrics_path.parent / CHECKPOINT_NAME).unlink(missing_ok=True)
    return result


CHECKPOINT_NAME = "checkpoint.pt"
# The training objects a checkpoint holds the state of, each under its name.
PARTS = ("model", "optimizer", "scheduler", "scaler")
# Settings that only change the evaluation: a checkpoint stays valid when they change.
EVALUATION_ONLY = {
    *("eval_zeta", "eval_batch_size", "eval_subset", "n_best", "max_answer_length"),
    "keep_checkpoint",
}


def rng_state() -> dict[str, Any]:
    # Tensors and plain data only, so that the checkpoint loads with weights_only=True.
    legacy = cast(tuple[str, np.ndarray, int, int, float], np.random.get_state(legacy=True))
    kind, keys, pos, has_gauss, cached = legacy
    numpy_state = (kind, torch.from_numpy(keys.astype(np.int64)), int(pos), has_gauss, cached)
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": numpy_state}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    kind, keys, *rest = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), *rest))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def run_signature(
    model_spec: ModelSpec,
    task: str,
    regulariser: str,
    lam: float,
    seed: int,
    settings: TrainingSettings,
    head_transform: HeadTransform | None = None,
) -> dict:
    """What a checkpoint must match to be resumed (evaluation-only settings may change freely)."""
    signature: dict[str, Any] = {"model": model_spec.as_record(), "task": task}
    signature |= {"regulariser": regulariser, "lam": float(lam), "seed": seed}
    signature["training"] = settings.model_dump(exclude=EVALUATION_ONLY)
    if head_transform is not None:
        signature["head_transform"] = head_transform.record()
    return signature


def save_checkpoint(path: Path, progress: dict, model, optimizer, scheduler, scaler) -> None:
    """The state after ``progress["epoch"]`` (0-based; with the run's signature, its steps and
    history), written atomically."""
    parts = zip(PARTS, (model, optimizer, scheduler, scaler))
    state = {**progress, **{name: part.state_dict() for name, part in parts}, "rng": rng_state()}
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint's state, unpickling tensors and plain data only: tampered files run no code."""
    try:
        # On the CPU: the RNG states must stay CPU tensors; load_state_dict moves the rest.
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        # torch's message is long; its "Unsupported global: GLOBAL io.open ..." part names the
        # object.
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
        what = f"it asks to run {found.group(1)}" if found else "weights_only load failed"
        raise ValueError(
            f"{path} holds objects other than tensors and plain data ({what}), so it is not a "
            "checkpoint this workflow wrote and was not loaded; delete it to start this run afresh"
        ) from None


def resume(
    path: Path, signature: dict, model, optimizer, scheduler, scaler
) -> tuple[int, int, list]:
    """Load the checkpoint at ``path`` into the training objects, if there is one.

    Returns (first epoch to run, optimiser steps done, history); (0, 0, []) without a checkpoint.
    """
    if not path.exists():
        return 0, 0, []
    state = load_checkpoint(path)
    if state["signature"] != signature:
        raise ValueError(
            f"{path} belongs to a different run or settings ({state['signature']}); "
            "delete it to start this run afresh"
        )
    for name, part in zip(PARTS, (model, optimizer, scheduler, scaler)):
        if state[name] or name != "scaler":  # an empty scaler: saved unscaled (CPU, bfloat16)
            part.load_state_dict(state[name])  # so a float16 run scales afresh
    set_rng_state(state["rng"])
    log.info("resumed %s from epoch %d (step %d)", path, state["epoch"] + 1, state["step"])
    return state["epoch"] + 1, state["step"], state["history"]
