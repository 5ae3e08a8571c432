"""The studies, one record each (docs/extending.md, "A study"), and the loops over them."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Any

from isotropy import configuration
from isotropy.studies.record import JobCost
from isotropy.workflow import inputs

# Registry order (the claims page's, rule all's); a study module not named here (one defining
# STUDIES) follows them by name, so adding a study edits nothing in this file.
ORDER = ("extensions", "paper", "istar", "geometry", "sensitivity", "rajaee_cls")
_NAMES = sorted(
    (m.name for m in pkgutil.iter_modules(__path__)),
    key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n),
)
MODULES = tuple(
    module
    for module in (importlib.import_module(f"{__name__}.{name}") for name in _NAMES)
    if hasattr(module, "STUDIES")
)
REGISTRY = tuple(spec for module in MODULES for spec in module.STUDIES)
# Each study by its name (config ``studies`` names only these: the schema's enum).
BY_NAME = {spec.name: spec for spec in REGISTRY}


def study_targets(config: configuration.Config, names: list[str]) -> list[str]:
    return [path for name in names for path in BY_NAME[name].outputs(config)]


def rule_all_targets(config: configuration.Config) -> list[str]:
    """``rule all``'s files: config ``studies``, then every configured ``when_configured`` one."""
    listed = [n for n in config.studies if BY_NAME[n].rule_all == "when_listed"]
    present = [s.name for s in REGISTRY if s.rule_all == "when_configured"]
    return study_targets(config, [*listed, *(n for n in present if getattr(config, n))])


def target_rules(config: configuration.Config) -> dict[str, list[str]]:
    return {s.target: s.outputs(config) for s in REGISTRY if s.target}


def rule_files() -> list[str]:
    return list(dict.fromkeys(s.rules or f"rules/{s.name}.smk" for s in REGISTRY))


def job_costs() -> dict[str, JobCost]:
    return {rule: cost for s in REGISTRY for rule, cost in s.job_costs.items()}


def verdict_inputs(config: configuration.Config, claims: bool = False) -> dict[str, Any]:
    """Rules check_claims' and compare_with_papers' named inputs (``claims``: check_claims')."""
    listed = [BY_NAME[name] for name in inputs.configured_studies(config)]
    found: dict[str, Any] = {}
    for own in [s.verdict_inputs for s in listed] + [s.claims_inputs for s in listed if claims]:
        if own is not None:
            found.update(own(config))
    return found


def table_measures() -> dict[Any, Any]:
    return {name: measure for s in REGISTRY for name, measure in s.measures.items()}


def published_studies() -> tuple[str, ...]:
    """The studies config/published_values.csv may hold rows of: those that measure tables."""
    return tuple(s.name for s in REGISTRY if s.measures)


def measured_claims() -> dict[str, tuple[str, Any]]:
    """Study -> (why its claims read not run without it, its claims), in registry order."""
    return {s.name: (s.claims_not_run, s.claims) for s in REGISTRY if s.claims}


def claim_pages(tables: Mapping[str, Any]) -> list[Any]:
    pages = [s.claim_page(tables) for s in REGISTRY if s.claim_page is not None]
    return [page for page in pages if page is not None]
