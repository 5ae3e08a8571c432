"""The studies, one record each: what the workflow builds, estimates and judges is a loop here.

A study registers in a module of this package, listed in :data:`MODULES`, whose ``STUDIES`` is
a tuple of :class:`~isotropy.studies.record.StudySpec` (docs/extending.md, "A study"): rule all,
the target rules, the Snakefile's includes, the estimate and the verdicts' inputs all read it.

Workflow side, the top floor: a study module may import the workflow layer, the science and
the verdicts; none of them imports this package (tests/test_architecture.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy.costs import JobCost
from isotropy.studies import extensions, geometry, istar, paper, rajaee_cls, sensitivity
from isotropy.studies.record import Config
from isotropy.workflow import inputs

# The study modules, in registry order (the claims page's, too).
MODULES = (extensions, paper, istar, geometry, sensitivity, rajaee_cls)
# Every registered study, in MODULES order then in its module's (tests/test_studies.py: names,
# targets and costed rules each unique).
REGISTRY = tuple(spec for module in MODULES for spec in module.STUDIES)
# Each study by its name (config ``studies`` names only these: the schema's enum).
BY_NAME = {spec.name: spec for spec in REGISTRY}


def study_targets(config: Config, names: list[str]) -> list[str]:
    """The final outputs of each named study, in the order named."""
    return [path for name in names for path in BY_NAME[name].outputs(config)]


def rule_all_targets(config: Config) -> list[str]:
    """The studies' files of ``rule all``: the listed studies' in config ``studies`` order, then
    those of each configured ``when_configured`` study (:meth:`StudySpec.in_rule_all`)."""
    present = [s.name for s in REGISTRY if s.rule_all == "when_configured"]
    names = [*(config.get("studies") or ()), *present]
    return study_targets(config, [n for n in names if BY_NAME[n].in_rule_all(config)])


def target_rules(config: Config) -> dict[str, list[str]]:
    """Each study's target rule -> its final files, for the Snakefile's one loop of them."""
    return {s.target: s.outputs(config) for s in REGISTRY if s.target}


def rule_files() -> list[str]:
    """The rule files the studies bring (each once), for the Snakefile's includes."""
    return list(dict.fromkeys(s.rules or f"rules/{s.name}.smk" for s in REGISTRY))


def job_costs() -> dict[str, JobCost]:
    """rule -> the wall seconds one of its jobs adds to the estimate, every study's."""
    return {rule: cost for s in REGISTRY for rule, cost in s.job_costs.items()}


def verdict_inputs(config: Config, claims: bool = False) -> dict[str, Any]:
    """The named inputs of rules check_claims and compare_with_papers: each study's that this
    run builds (:func:`isotropy.workflow.inputs.configured_studies`), in config ``studies``
    order (a study left out has its claims "not run"); with ``claims``, then what those studies
    bring to the claims alone (a study's own Holm family of per-seed values)."""
    listed = [BY_NAME[name] for name in inputs.configured_studies(config)]
    found: dict[str, Any] = {}
    for own in [s.verdict_inputs for s in listed] + [s.claims_inputs for s in listed if claims]:
        if own is not None:
            found.update(own(config))
    return found


def table_measures() -> dict[Any, Any]:
    """Every record's :attr:`StudySpec.measures`, in registry order."""
    return {name: measure for s in REGISTRY for name, measure in s.measures.items()}


def published_studies() -> tuple[str, ...]:
    """The studies config/published_values.csv may hold rows of: those that measure tables."""
    return tuple(s.name for s in REGISTRY if s.measures)


def measured_claims() -> dict[str, tuple[str, Any]]:
    """Study -> (why its claims read not run when the run lacks it, its claims judged on the
    measurements), in registry order (rule check_claims:
    :func:`isotropy.verdicts.claims.check_claims`)."""
    return {s.name: (s.claims_not_run, s.claims) for s in REGISTRY if s.claims}


def claim_pages(tables: Mapping[str, Any]) -> list[Any]:
    """The studies' own claims pages the loaded result tables (by input name) hold, in registry
    order (rule check_claims: each its own Holm family, guarded, joins the claims page)."""
    pages = [s.claim_page(tables) for s in REGISTRY if s.claim_page is not None]
    return [page for page in pages if page is not None]


def report_tables(config: Mapping[str, Any], preview: bool = False) -> list[str]:
    """The tables the report's opening page shows in full: every CSV of the studies this run
    builds (of the preview alone for a preview)."""
    names = ["preview"] if preview else inputs.configured_studies(config)
    return [path for path in study_targets(dict(config), names) if path.endswith(".csv")]
