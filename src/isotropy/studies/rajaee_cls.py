"""The Rajaee CLS study's record, runs, final files, claims and per-job cost."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from itertools import product
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.configuration import Config
from isotropy.rajaee_cls.results import claim_values, paired_differences
from isotropy.statistics import Claim
from isotropy.studies.record import StudySpec, finetune_job, section_files
from isotropy.verdicts.claims import check_claims as judge_claims
from isotropy.verdicts.learning import guard_rows, not_learned_note
from isotropy.verdicts.measurements.sts import rajaee_cls_measurements

# I(W) and IsoScore of every layer's validation CLS states: an assumption, not measured.
GEOMETRY_CPU_SECONDS = 1.0


def runs(config: Config) -> list[dict[str, Any]]:
    section = config.rajaee_cls
    grid = product(section.models, section.tasks, section.methods, section.seeds)
    return [dict(zip(("model", "task", "method", "seed"), run)) for run in grid]


def run_files(config: Config) -> list[str]:
    return [paths.rajaee_cls_run_file("metrics.json", **r) for r in runs(config)]


FILES = ("runs.csv", "layers.csv", "claims.csv", "claims.md", "layers.pdf", "layers.png")


# The Rajaei & Sheikhi slides' two CLS claims, judged on rajaee_cls.results.claim_values.
_SLIDES = 'Rajaei & Sheikhi 2020, slides "Isotropic Word Representation in BERT", fine-tuning'


def _slides_claim(name: str, statement: str, said: str) -> Claim:
    """A direction the slides state in words (``said``), below 0."""
    claim = Claim(
        name, "rajaee_cls", name, statement, "below:0", f"{_SLIDES} ({said})", "direction"
    )
    return dataclasses.replace(claim, sesoi=0.0, sesoi_source="the slides' words")


CLAIMS = [
    _slides_claim(
        "cls_method_cannot_raise_isotropy",
        "fine-tuning with the cluster-based method on the CLS states does not raise the "
        "fine-tuned model's last-layer CLS isotropy (log10 I(W) with - without the method < 0)",
        "CLS isotropy per layer after 2 epochs",
    ),
    _slides_claim(
        "cls_already_zero_mean",
        "CLS states are already zero-mean: at every layer the norm of the mean CLS state is "
        "below the norm of the mean token state (log10 of the largest ratio over layers < 0)",
        "why centring the CLS states changes little",
    ),
]
# The slides' "even applied offline, the method does not help", on a grid whose method is fitted
# offline: judged on isotropy, as the slides speak of it, on the I(W) the task head reads (the
# slides' "after" values are most plausibly the transformed space: docs/methods.md).
OFFLINE_CLAIM = _slides_claim(
    "cls_offline_method_does_not_help",
    "fine-tuning with the method fitted offline does not raise the isotropy the task head reads "
    "(log10 I(W) of the head's input, with - without the method, same seed, < 0)",
    "even applied offline, the method does not help",
)
# The runs each claim reads (the learning guard's: a claim is judged only if they all learned).
CLAIM_METHODS = {
    "cls_method_cannot_raise_isotropy": ("none", "cluster"),
    "cls_already_zero_mean": ("none",),
    OFFLINE_CLAIM.name: ("none", "cluster"),
}
METHOD_NAMES = {"none": "without the method", "cluster": "with the method"}
# The slides fine-tune BERT-base; any other model is a stand-in, said in every CLS claim row.
SLIDES_MODELS = ("bert",)


def check_claims(runs: pd.DataFrame, layers: pd.DataFrame, offline: bool = False) -> pd.DataFrame:
    """The CLS claims per setup, judged only if their runs all learned, a stand-in model named in
    every note; ``offline`` (the method fitted offline): :data:`OFFLINE_CLAIM` too."""
    unlearned: dict[tuple[str, str], str] = {}
    for (model, task, method), group in runs.groupby(["model", "task", "method"], sort=False):
        note = not_learned_note(
            group["accuracy"], group["majority_baseline"], group["eval_sentences"]
        )
        for claim, methods in CLAIM_METHODS.items():
            if method in methods and note:
                key = (claim, f"{model}/{task}")
                why = f"{METHOD_NAMES.get(method, method)}: {note}"
                unlearned[key] = f"{unlearned[key]}; {why}" if key in unlearned else why
    values, claims = claim_values(runs, layers), list(CLAIMS)
    if offline:
        head_input = paired_differences(runs, OFFLINE_CLAIM.name, "cls_iw_head_input", log10=True)
        values = pd.concat([values, head_input])
        claims.append(OFFLINE_CLAIM)
    table = judge_claims(values, None, claims)
    table = guard_rows(table, unlearned)
    others = [m for m in dict.fromkeys(runs["model"]) if m not in SLIDES_MODELS]
    if others:  # a direction on a stand-in: said in its verdict
        judged = f"judged on a stand-in: {', '.join(others)} for the slides' BERT-base"
        notes = table["note"].fillna("").astype(str)
        table["note"] = [f"{n}; {judged}" if n else judged for n in notes]
    return table


def claim_page(tables: Mapping[str, Any]) -> pd.DataFrame | None:
    runs = tables.get("rajaee_cls_runs")
    return None if runs is None else check_claims(runs, tables["rajaee_cls_layers"])


STUDIES = (
    StudySpec(
        name="rajaee_cls",
        outputs=section_files("rajaee_cls", paths.rajaee_cls_file, FILES),
        job_costs={"rajaee_cls_finetune": finetune_job("rajaee_cls", GEOMETRY_CPU_SECONDS)},
        verdict_inputs=lambda config: {
            f"rajaee_cls_{t}": paths.rajaee_cls_file(f"{t}.csv") for t in ("runs", "layers")
        },
        claim_page=claim_page,
        measures={
            "rajaee_cls_runs": lambda table, config, stand: rajaee_cls_measurements(table, config)
        },
    ),
)
