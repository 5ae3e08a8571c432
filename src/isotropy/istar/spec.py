"""The records (:class:`isotropy.studies.StudySpec`) of the I-STAR fine-tuning grid (Figures
5-7) and of the I-STAR poster's estimator figures 1-4 (CPU minutes: built whenever their
section is present)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy import costs, paths
from isotropy.istar import grid_cost
from isotropy.studies import StudySpec
from isotropy.workflow import targets

RULES = "rules/istar.smk"


def verdict_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The grid's runs.csv, when the section configures runs."""
    return {"istar_runs": paths.ISTAR_RUNS} if targets.istar_runs(config.get("istar")) else {}


def describe(config: Mapping[str, Any], device: str) -> list[str]:
    """The lines of :func:`isotropy.istar.grid_cost.describe` at this machine's pace."""
    threads = config["istar"]["resources"]["threads"]
    return costs.scaled(grid_cost.describe, config, device, threads)


STUDIES = (
    StudySpec(
        name="istar",
        section="istar",
        target="istar_study",
        outputs=lambda config: targets.istar_outputs(config.get("istar")),
        rules=RULES,
        job_costs=grid_cost.JOB_COSTS,
        describe=describe,
        verdict_inputs=verdict_inputs,
        gpu_rules=("finetune",),
    ),
    StudySpec(
        name="istar_estimator",
        section="istar_estimator",
        target=None,
        outputs=targets.istar_estimator_outputs,
        rules=RULES,
        rule_all="when_configured",
    ),
)
