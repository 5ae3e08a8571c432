"""A study's record: what the workflow builds, estimates and judges of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from isotropy import configuration, costs
from isotropy.readers.tasks import TASKS

# A job's wall seconds from the configuration, its wildcards and the pace (None: not measured).
JobCost = Callable[[configuration.Config, Mapping[str, Any], costs.Pace], float | None]


@dataclass(frozen=True)
class StudySpec:
    """One study; its ``name`` is also its config section."""

    name: str
    outputs: Callable[[configuration.Config], list[str]]  # its final files
    rules: str = ""  # the rule file the Snakefile includes for it; "": rules/<name>.smk
    # named in config ``studies``, built whenever its section is present, or never
    rule_all: Literal["when_listed", "when_configured", "never"] = "when_listed"
    job_costs: Mapping[str, JobCost] = field(default_factory=dict)  # else a start-up per job
    # named inputs of the claims and the paper comparison, and of the claims only
    verdict_inputs: Callable[[configuration.Config], dict[str, Any]] | None = None
    claims_inputs: Callable[[configuration.Config], dict[str, Any]] | None = None
    # its per-seed claims from the loaded tables, its own Holm family (None: no tables)
    claim_page: Callable[[Mapping[str, Any]], Any] | None = None
    check: Callable[[configuration.Config], str | None] | None = None  # stops its estimate
    # input name (or names read together) -> rows of verdicts.measurements.measurement
    measures: Mapping[Any, Callable[..., list[dict[str, Any]]]] = field(default_factory=dict)
    claims: Sequence[Any] = ()  # judged on those measurements
    claims_not_run: str = ""  # the note of its claims when the run lacks it

    @property
    def target(self) -> str | None:
        """Its target rule, ``<name>_study``; none for a study built whenever configured."""
        return None if self.rule_all == "when_configured" else f"{self.name}_study"


def section_files(
    section: str, file: Callable[[str], str], names: Sequence[str]
) -> Callable[[configuration.Config], list[str]]:
    """``outputs``: ``file(name)`` of each of ``names``; none without its config ``section``."""
    return lambda config: [file(name) for name in names] if getattr(config, section) else []


def finetune_cpu_seconds(
    training: configuration.TrainingSettings, model: str, task: str, extra: float = 0.0
) -> float | None:
    """One-thread CPU seconds of a fine-tuning run plus ``extra`` (None: no measured cost)."""
    if task not in TASKS:
        return None
    cpu = costs.finetune_seconds(training, TASKS[task].rows, model, task)
    return None if cpu is None else cpu + extra


def finetune_job(section: str, extra_cpu_seconds: float = 0.0) -> JobCost:
    """``job_costs`` of a fine-tuning rule, on config ``<section>.resources.threads``."""

    def seconds(
        config: configuration.Config, wildcards: Mapping[str, Any], pace: costs.Pace
    ) -> float | None:
        settings = getattr(config, section)
        cpu = finetune_cpu_seconds(
            settings.training, wildcards["model"], wildcards["task"], extra_cpu_seconds
        )
        return None if cpu is None else pace.share(cpu, settings.resources.threads)

    return seconds
