"""Checkpoints after every epoch: what a resumable state holds and which run it belongs to.

A resumed run replays exactly the batches of an uninterrupted one: the state holds the model,
optimiser, scheduler, loss scaler and every random number generator.
"""

from __future__ import annotations

import dataclasses
import logging
import pickle
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from isotropy.io import atomic_path
from isotropy.istar.study import TrainingSettings
from isotropy.models import ModelSpec

log = logging.getLogger(__name__)

CHECKPOINT_NAME = "checkpoint.pt"
# Settings that only change the evaluation: a checkpoint stays valid when they change.
EVALUATION_ONLY = (
    "eval_zeta",
    "eval_batch_size",
    "eval_subset",
    "n_best",
    "max_answer_length",
    "keep_checkpoint",
)


def rng_state() -> dict[str, Any]:
    # Tensors and plain data only, so that the checkpoint loads with weights_only=True.
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    numpy_state = {
        "kind": kind,
        "keys": torch.from_numpy(keys.astype(np.int64)),
        "pos": int(pos),
        "has_gauss": int(has_gauss),
        "cached_gaussian": float(cached),
    }
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": numpy_state}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["kind"],
            numpy_state["keys"].numpy().astype(np.uint32),
            numpy_state["pos"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def run_signature(
    model_spec: ModelSpec,
    task: str,
    regulariser: str,
    lam: float,
    seed: int,
    settings: TrainingSettings,
) -> dict:
    """What a checkpoint must match to be resumed (evaluation-only settings may change freely)."""
    training = dataclasses.asdict(settings)
    for name in EVALUATION_ONLY:
        training.pop(name)
    return {
        "model": model_spec.as_record(),
        "task": task,
        "regulariser": regulariser,
        "lam": float(lam),
        "seed": seed,
        "training": training,
    }


def save_checkpoint(
    path: Path,
    signature: dict,
    epoch: int,
    step: int,
    history: list,
    model,
    optimizer,
    scheduler,
    scaler,
) -> None:
    """The state after ``epoch`` (0-based), written atomically."""
    state = {
        "signature": signature,
        "epoch": epoch,
        "step": step,
        "history": history,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "rng": rng_state(),
    }
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint's state, unpickling tensors and plain data only: a tampered file cannot run code."""
    try:
        # On the CPU: the RNG states must stay CPU tensors; load_state_dict moves the rest.
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        # torch's message is long; its "Unsupported global: GLOBAL io.open ..." part names the object.
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
        what = f"it asks to run {found.group(1)}" if found else "weights_only load failed"
        raise ValueError(
            f"{path} holds objects other than tensors and plain data ({what}), so it is not a checkpoint this "
            "workflow wrote and was not loaded; delete it to start this run afresh"
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
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    scaler.load_state_dict(state["scaler"])
    set_rng_state(state["rng"])
    log.info("resumed %s from epoch %d (step %d)", path, state["epoch"] + 1, state["step"])
    return state["epoch"] + 1, state["step"], state["history"]
