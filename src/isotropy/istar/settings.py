"""The settings of one fine-tuning run (config ``istar.training``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass
class TrainingSettings:
    """Optimisation, regularisation and evaluation settings of one run (config ``istar.training``)."""

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
            raise ValueError(f"unknown I-STAR training settings {unknown}; known: {sorted(known)}")
        return cls(**values)
