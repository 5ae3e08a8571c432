"""The Rajaee CLS study's record (:class:`isotropy.studies.StudySpec`): config ``studies``
names it ``rajaee``, its settings are config ``rajaee_cls``, its target rajaee_study."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy import costs, paths
from isotropy.istar import cls_cost
from isotropy.studies import StudySpec
from isotropy.workflow import targets


def verdict_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The slides' fine-tuning rows and the CLS claims: the study's runs and layers tables."""
    if not config.get("rajaee_cls"):
        return {}
    return {f"rajaee_cls_{t}": paths.rajaee_cls_file(f"{t}.csv") for t in ("runs", "layers")}


def describe(config: Mapping[str, Any], device: str) -> list[str]:
    """The lines of :func:`isotropy.istar.cls_cost.describe` at this machine's pace."""
    threads = config["rajaee_cls"]["resources"]["threads"]
    return costs.scaled(cls_cost.describe, config, device, threads)


STUDIES = (
    StudySpec(
        name="rajaee",
        section="rajaee_cls",
        target="rajaee_study",
        outputs=targets.rajaee_outputs,
        rules="rules/istar.smk",
        job_costs=cls_cost.JOB_COSTS,
        describe=describe,
        verdict_inputs=verdict_inputs,
        gpu_rules=("finetune_cls",),
    ),
)
