"""The I-STAR study's design, plain Python, no torch (``isotropy.workflow`` imports it at parse):
the run grid of config ``istar`` (which runs exist, λ as it appears in paths, the models it runs;
the study's final files: isotropy.workflow.targets.istar_outputs) and the settings of one
fine-tuning run (config ``istar.training``). The tasks themselves (kind, labels, text columns,
where their data come from, headline metric) are data-set records: :mod:`isotropy.readers.tasks`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from isotropy.paths import istar_run_file

# "cluster": not a penalty but Rajaee & Pilehvar's cluster-based method applied to the CLS
# states the head reads, in every batch (isotropy.istar.cls_method); like "none", λ = 0.
REGULARISERS = ("none", "istar", "cosreg", "cluster")
TRANSFORMS = ("none", "cluster")


def format_lambda(lam: float) -> str:
    """λ as it appears in paths: ``-5``, ``0.5``, ``0``."""
    text = f"{float(lam):g}"
    return "0" if text == "-0" else text


def check_run(regulariser: str, lam: float) -> None:
    """A known regulariser with a finite λ (0 for the baseline)."""
    if regulariser not in REGULARISERS:
        raise ValueError(f"unknown regulariser {regulariser!r}; expected one of {REGULARISERS}")
    if regulariser in TRANSFORMS and lam != 0:
        raise ValueError(f"regulariser {regulariser!r} takes λ = 0, got {lam}")
    if not math.isfinite(lam):
        raise ValueError(f"λ must be finite, got {lam}")


def run_grid(section: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the study (config ``istar``): the baseline at λ = 0 plus each regulariser ×
    λ."""
    runs = []
    for model in run_models(section):
        for task in section["tasks"]:
            for regulariser in section["regularisers"]:
                lams = [0.0] if regulariser in TRANSFORMS else section["lambdas"]
                for lam in lams:
                    for seed in section["seeds"]:
                        runs.append(
                            {
                                "model": model,
                                "task": task,
                                "regulariser": regulariser,
                                "lam": format_lambda(lam),
                                "seed": seed,
                            }
                        )
    return runs


def run_models(section: dict[str, Any]) -> list[str]:
    """The models the study fine-tunes: ``run_models`` (null = every name ``models`` lists)."""
    names = section.get("run_models") or list(section["models"])
    unknown = [n for n in names if n not in section["models"]]
    if unknown:
        raise ValueError(
            f"istar.run_models names {unknown}, which istar.models does not list "
            f"(listed: {sorted(section['models'])})"
        )
    return list(names)


def run_path(run: dict[str, Any], artefact: str = "metrics.json") -> str:
    """The file ``artefact`` of one run of :func:`run_grid`."""
    return istar_run_file(
        artefact, run["model"], run["task"], run["regulariser"], run["lam"], run["seed"]
    )


def configured_lambda(section: dict[str, Any], regulariser: str, lam: str) -> float:
    """The configured λ that :func:`format_lambda` spells ``lam`` (0 for the baseline).

    Rule ``finetune`` passes this to its job, so λ is the configured number, never one parsed
    back from a path.
    """
    choices = [0.0] if regulariser in TRANSFORMS else section["lambdas"]
    for value in choices:
        if format_lambda(value) == lam:
            return float(value)
    raise ValueError(
        f"λ {lam!r} is not configured for regulariser {regulariser!r} "
        f"(istar.lambdas: {section['lambdas']})"
    )


@dataclass
class TrainingSettings:
    """Optimisation, regularisation and evaluation settings of one run (config
    ``istar.training``)."""

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
    # regulariser "cluster": k-means clusters and top directions removed per cluster, over the
    # CLS states of each batch (a batch of 32 holds too few states for the STS path's 27 and 12)
    cls_clusters: int = 3
    cls_directions: int = 2

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> TrainingSettings:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown I-STAR training settings {unknown}; known: {sorted(known)}")
        return cls(**values)
