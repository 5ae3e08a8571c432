"""The studies, one record each: what the workflow builds, estimates and judges is a loop here.

A study registers in a module of this package whose ``STUDIES`` is a tuple of
:class:`~isotropy.studies.record.StudySpec`, listed in :data:`MODULES`: its record, its runs
and final files, its per-job costs and what its verdicts read. ``rule all`` and the study target
rules, the rule files the Snakefile includes, the estimate (``python -m isotropy.estimate
--target``) and the run's progress lines, the inputs of the claims and of the paper
comparison and the schema's ``studies`` list all read the registry (docs/extending.md, "A
study").

A study joins ``rule all`` one way, its :attr:`StudySpec.rule_all`: ``when_listed`` (named in
config ``studies``; those names are the schema's list), ``when_configured`` (its section is
present and not null: minutes of CPU) or ``never`` (its own target only).

Workflow side, the top floor: a study module may import the workflow layer, the science and
the verdicts; none of them imports this package (tests/test_architecture.py).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from isotropy import paths
from isotropy.costs import JobCost
from isotropy.defaults import setting_or_default
from isotropy.studies import extensions, geometry, istar, paper, rajaee_cls, sensitivity
from isotropy.studies.record import ClaimFamily, Config, StudySpec
from isotropy.workflow import inputs

# The study modules, in registry order (the claims page's, too).
MODULES = (extensions, paper, istar, geometry, sensitivity, rajaee_cls)


@functools.cache
def registry() -> tuple[StudySpec, ...]:
    """Every registered study, in :data:`MODULES` order then in its module's; names, targets
    and costed rules each unique."""
    found = [s for module in MODULES for s in module.STUDIES]
    for key in ("name", "target"):
        values = [getattr(s, key) for s in found if getattr(s, key) is not None]
        if twice := sorted({v for v in values if values.count(v) > 1}):
            raise ValueError(f"studies registered twice by {key}: {twice}")
    rules = [rule for s in found for rule in s.job_costs]
    if twice := sorted({r for r in rules if rules.count(r) > 1}):
        raise ValueError(f"rules costed by two studies: {twice}")
    return tuple(found)


def by_name(name: str) -> StudySpec:
    """The study called ``name``."""
    for spec in registry():
        if spec.name == name:
            return spec
    raise KeyError(f"no study {name!r}; registered: {[s.name for s in registry()]}")


def listed_names() -> list[str]:
    """The studies config ``studies`` may name (the schema's list): those ``when_listed``."""
    return [s.name for s in registry() if s.rule_all == "when_listed"]


def study_targets(config: Config, names: list[str]) -> list[str]:
    """The final outputs of each named study, in the order named."""
    return [path for name in names for path in by_name(name).outputs(config)]


def rule_all_targets(config: Config) -> list[str]:
    """The studies' files of ``rule all``: the listed studies' in config ``studies`` order, then
    those of each configured ``when_configured`` study (:meth:`StudySpec.in_rule_all`)."""
    listed = [n for n in config.get("studies") or () if by_name(n).in_rule_all(config)]
    present = [s.name for s in registry() if s.rule_all == "when_configured"]
    return study_targets(config, listed + [n for n in present if by_name(n).in_rule_all(config)])


def target_rules(config: Config) -> dict[str, list[str]]:
    """Each study's target rule -> its record's final files: the Snakefile's one loop writes
    every target rule (no rule file writes its own)."""
    return {s.target: s.outputs(config) for s in registry() if s.target}


def rule_files() -> list[str]:
    """The rule files the studies bring (each once), for the Snakefile's includes."""
    return list(dict.fromkeys(s.rules for s in registry() if s.rules))


def job_costs() -> dict[str, JobCost]:
    """rule -> the wall seconds one of its jobs adds to the estimate, every study's."""
    return {rule: cost for s in registry() for rule, cost in s.job_costs.items()}


def verdict_inputs(config: Config) -> dict[str, Any]:
    """The named inputs of rules check_claims and compare_with_papers: each study's that config
    ``studies`` lists, in that order; a study left out has its claims "not run"."""
    inputs: dict[str, Any] = {}
    for name in setting_or_default(config, "studies"):
        if (own := by_name(name).verdict_inputs) is not None:
            inputs.update(own(config))
    return inputs


def claims_inputs(config: Config) -> dict[str, Any]:
    """The inputs of rule check_claims: :func:`verdict_inputs`, then what the listed studies
    bring to the claims alone (a study's own Holm family of per-seed values)."""
    inputs = verdict_inputs(config)
    for name in setting_or_default(config, "studies"):
        if (own := by_name(name).claims_inputs) is not None:
            inputs.update(own(config))
    return inputs


def table_measures() -> dict[Any, Any]:
    """Input name(s) -> what measures those judged tables, every record's, in registry order
    (:attr:`StudySpec.measures`; rules check_claims and compare_with_papers)."""
    return {name: measure for s in registry() for name, measure in s.measures.items()}


def published_studies() -> tuple[str, ...]:
    """The studies config/published_values.csv may hold rows of: each whose record measures
    tables."""
    return tuple(s.name for s in registry() if s.measures)


def measured_claims() -> dict[str, tuple[str, Any]]:
    """Study -> (why its claims read not run when the run lacks it, its claims judged on the
    measurements), in registry order (rule check_claims:
    :func:`isotropy.verdicts.claims.check_claims`)."""
    return {s.name: (s.claims_not_run, s.claims) for s in registry() if s.claims}


def claim_families(tables: Mapping[str, Any]) -> list[ClaimFamily]:
    """The per-seed claim families the loaded result tables (by input name) hold, in registry
    order (rule check_claims: each its own Holm family, then its guard)."""
    families = [s.claim_family(tables) for s in registry() if s.claim_family is not None]
    return [family for family in families if family is not None]


def report_tables(config: Mapping[str, Any], preview: bool = False) -> list[str]:
    """The tables the report's opening page shows in full: every CSV of the studies this run
    builds (of the preview alone for a preview)."""
    if preview:
        return [path for path in paths.main_study_outputs("preview") if path.endswith(".csv")]
    made = study_targets(dict(config), inputs.configured_studies(config))
    return [path for path in made if path.endswith(".csv")]
