"""The settings of one fine-tuning run (config ``istar.training`` and ``rajaee_cls.training``):
optimisation, the regularisers' and the evaluation's. Plain Python, no torch (the workflow and
the estimates import it while they parse).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

# The penalties of the training loss; "none", the baseline, adds none and takes λ = 0.
REGULARISERS = ("none", "istar", "cosreg")


def format_lambda(lam: float) -> str:
    """λ as it appears in paths: ``-5``, ``0.5``, ``0``."""
    text = f"{float(lam):g}"
    return "0" if text == "-0" else text


def check_run(regulariser: str, lam: float) -> None:
    """A known regulariser with a finite λ (0 for the baseline)."""
    if regulariser not in REGULARISERS:
        raise ValueError(f"unknown regulariser {regulariser!r}; expected one of {REGULARISERS}")
    if regulariser == "none" and lam != 0:
        raise ValueError(f"regulariser {regulariser!r} takes λ = 0, got {lam}")
    if not math.isfinite(lam):
        raise ValueError(f"λ must be finite, got {lam}")


@dataclass
class TrainingSettings:
    """Optimisation, regularisation and evaluation settings of one run (config
    ``istar.training``, ``rajaee_cls.training``)."""

    learning_rate: float = 1e-5
    batch_size: int = 32
    epochs: int = 4
    max_length: int = 256
    weight_decay: float = 0.0
    scheduler: str = "linear"
    warmup_ratio: float = 0.0
    max_steps: int | None = None
    mixed_precision: bool = True
    zeta: float = 0.2
    reference_sample_size: int = 250_000
    eval_zeta: float = 0.75
    eval_batch_size: int = 64
    train_subset: int | None = None
    eval_subset: int | None = None
    subset_seed: int = 0
    doc_stride: int = 128
    max_answer_length: int = 30
    n_best: int = 20
    keep_checkpoint: bool = False

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> TrainingSettings:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown fine-tuning settings {unknown}; known: {sorted(known)}")
        return cls(**values)
