"""The settings of one fine-tuning run and the requests of its job (I-STAR's defaults)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from isotropy.configuration.base import LearningRate, Section, Seed


class TrainingSettings(Section):
    """Optimisation, regularisation and evaluation settings of one fine-tuning run: the keys of
    `istar.training` and `rajaee_cls.training`, with I-STAR's defaults."""

    learning_rate: LearningRate = Field(1e-5, description="AdamW's learning rate.")
    batch_size: int = Field(32, ge=1, description="Training batch size.")
    epochs: int = Field(4, ge=1, description="Training epochs.")
    max_length: int = Field(256, ge=8, description="Tokens per input; longer inputs are truncated.")
    weight_decay: float = Field(0.0, ge=0, description="AdamW's weight decay.")
    scheduler: Literal["linear", "constant", "constant_with_warmup", "cosine"] = Field(
        "linear", description="transformers.get_scheduler name (linear: decay to 0)."
    )
    warmup_ratio: float = Field(
        0.0, ge=0, le=1, description="Share of the updates with a linear warm-up."
    )
    max_steps: int | None = Field(
        None,
        ge=1,
        description="An integer caps the optimiser steps (CPU checks); null = every epoch.",
    )
    mixed_precision: bool = Field(
        True, description="CUDA only: bfloat16, else float16 with loss scaling."
    )
    zeta: float = Field(
        0.2, ge=0, le=1, description="IsoScore* shrinkage ζ in the training penalty."
    )
    reference_sample_size: int = Field(
        250_000, ge=2, description="Token states behind IsoScore*'s Σ_S, per epoch."
    )
    eval_zeta: float = Field(
        0.75, ge=0, le=1, description="ζ of the IsoScore* of validation sentence embeddings."
    )
    eval_batch_size: int = Field(64, ge=1, description="Evaluation batch size.")
    train_subset: int | None = Field(
        None, ge=2, description="null = all; n = a seeded sample of n rows."
    )
    eval_subset: int | None = Field(
        None, ge=3, description="null = all; n = a seeded sample of n rows."
    )
    subset_seed: Seed = Field(0, description="Seed of the subsets.")
    doc_stride: int = Field(128, ge=1, description="SQuAD: overlap of context windows, in tokens.")
    max_answer_length: int = Field(30, ge=1, description="SQuAD: longest answer span, in tokens.")
    n_best: int = Field(20, ge=1, description="SQuAD: start and end candidates per window.")
    keep_checkpoint: bool = Field(
        False, description="Keep checkpoint.pt (model and optimiser) after the run finishes."
    )


class ClsTraining(TrainingSettings):
    """The Rajaee CLS study's fine-tuning (``rajaee_cls.training``): shorter inputs and runs."""

    DEFAULTS = {
        "learning_rate": 5e-5,
        "epochs": 2,
        "max_length": 128,
        "warmup_ratio": 0.1,
        "reference_sample_size": 10_000,
        "train_subset": 1024,
    }


class Resources(Section):
    """Requests per job (memory and runtime grow per retry)."""

    gpu: int = Field(1, ge=0, le=1, description="GPUs: 0 or 1 (a run uses one GPU at most).")
    threads: int = Field(4, ge=1, description="CPU threads.")
    mem_mb: int = Field(32000, ge=100, description="Memory in MB.")
    runtime: int = Field(720, ge=1, description="Minutes.")


class ClsResources(Resources):
    """Requests per fine-tuning job of the Rajaee CLS study (small: CPU-sized by default)."""

    DEFAULTS = {"gpu": 0, "threads": 1, "mem_mb": 4000, "runtime": 120}
