"""A study's record (:class:`StudySpec`): what the workflow builds, estimates and judges of one
study (:mod:`isotropy.studies`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from isotropy.costs import JobCost

Config = Mapping[str, Any]


@dataclass(frozen=True)
class StudySpec:
    """One study: its ``name`` (also its config section), its final files ``outputs(config)``,
    the ``rules`` file the Snakefile includes for it (default ``rules/<name>.smk``), how it
    joins rule all (``rule_all``: named in config ``studies``, whenever its section is present,
    or never; mypy refuses a fourth way), the per-job costs of its costed rules
    (:data:`isotropy.costs.JobCost`: a rule without one counts a start-up), its named inputs of
    the claims and the paper comparison (``verdict_inputs``) and of the claims only
    (``claims_inputs``), read when config ``studies`` lists it, its own claims page from the
    loaded result tables (``claim_page``: its per-seed claims judged as their own Holm family
    and guarded, the rows the claims page shows too; None when the tables hold none),
    ``check``: a configuration problem that stops its estimate, and ``measures``: input name (or
    the names one function reads together) -> function of those tables, the configuration and
    the stand-ins, returning rows of :func:`isotropy.verdicts.measurements.measurement`;
    ``claims``: its claims judged on those measurements, which read *not run* with
    ``claims_not_run`` as their note when the run lacks the study."""

    name: str
    outputs: Callable[[Config], list[str]]
    rules: str = ""
    rule_all: Literal["when_listed", "when_configured", "never"] = "when_listed"
    job_costs: Mapping[str, JobCost] = field(default_factory=dict)
    verdict_inputs: Callable[[Config], dict[str, Any]] | None = None
    claims_inputs: Callable[[Config], dict[str, Any]] | None = None
    claim_page: Callable[[Mapping[str, Any]], Any] | None = None
    check: Callable[[Config], str | None] | None = None
    measures: Mapping[Any, Callable[..., list[dict[str, Any]]]] = field(default_factory=dict)
    claims: Sequence[Any] = ()
    claims_not_run: str = ""

    @property
    def target(self) -> str | None:
        """Its target rule, ``<name>_study``; none for a study built whenever configured."""
        return None if self.rule_all == "when_configured" else f"{self.name}_study"

    def in_rule_all(self, config: Config) -> bool:
        """Whether ``rule all`` builds this study under ``config`` (its one way)."""
        if self.rule_all == "when_listed":
            return self.name in (config.get("studies") or ())
        return self.rule_all == "when_configured" and bool(config.get(self.name))


def section_files(
    section: str, file: Callable[[str], str], names: Sequence[str]
) -> Callable[[Config], list[str]]:
    """The ``outputs`` of a study whose final files are ``file(name)`` of each of ``names``;
    none without its config ``section``."""
    return lambda config: [file(name) for name in names] if config.get(section) else []
