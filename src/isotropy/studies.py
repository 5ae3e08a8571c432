"""The studies, one record each: what the workflow builds, estimates and judges is a loop here.

A study registers in its own package: a module ``isotropy.<package>.spec`` whose ``STUDIES`` is
a tuple of :class:`StudySpec` (the paper's own studies, whose code sits in top-level modules,
register in :mod:`isotropy.paper_studies`). :func:`registry` finds them by looking for that
file, so adding a study touches no shared list: ``rule all`` and the study target rules, the
rule files the Snakefile includes, the estimate (``python -m isotropy.estimate --target``) and
the run's progress lines, the inputs of the claims and of the paper comparison, the SLURM
profile's GPU rules and the schema's ``studies`` list all read the registry (docs/extending.md,
"A study").

A study joins ``rule all`` one way, its :attr:`StudySpec.rule_all`: ``when_listed`` (named in
config ``studies``; those names are the schema's list), ``when_configured`` (its section is
present and not null: minutes of CPU) or ``never`` (its own target only).

Workflow side: a spec module may import the workflow layer; the science never imports a spec.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isotropy.costs import JobCost
from isotropy.defaults import setting_or_default

PACKAGE = Path(__file__).resolve().parent
RULE_ALL = ("when_listed", "when_configured", "never")

Config = Mapping[str, Any]
# The estimate's lines for a study's target (python -m isotropy.estimate) on a device kind.
Describer = Callable[[Config, str], list[str]]


@dataclass(frozen=True)
class ClaimFamily:
    """A study's own per-seed claims on the claims page, judged as their own Holm family:
    ``values`` (claim, setup, seed, value), the ``claims`` they test, the family's ``name`` (its
    rows' study), and ``guard``, which marks the judged rows its runs cannot support (a model
    that did not learn, an optimum no seed decides)."""

    values: Any
    claims: Sequence[Any]
    name: str
    guard: Callable[[Any], Any]


@dataclass(frozen=True)
class StudySpec:
    """One study: ``name`` (config ``studies`` names it when ``rule_all`` is ``when_listed``),
    its config ``section`` (None: none of its own), its ``target`` rule (None: rule all only),
    its final files ``outputs(config)``, the ``rules`` file the Snakefile includes for it, the
    per-job costs of its costed rules (:data:`isotropy.costs.JobCost`), the estimate's
    ``describe`` (None: no measured cost), its named inputs of the claims and the paper
    comparison (``verdict_inputs``) and of the claims only (``claims_inputs``), read when
    config ``studies`` lists it, its per-seed claims from the loaded result tables
    (``claim_family``: None when the tables hold none), its GPU rules (resources gpu=1; the
    SLURM profile lists them), and ``check``: a configuration problem that stops its estimate
    (None: none)."""

    name: str
    section: str | None
    target: str | None
    outputs: Callable[[Config], list[str]]
    rules: str | None = None
    rule_all: str = "when_listed"
    job_costs: Mapping[str, JobCost] = field(default_factory=dict)
    describe: Describer | None = None
    verdict_inputs: Callable[[Config], dict[str, Any]] | None = None
    claims_inputs: Callable[[Config], dict[str, Any]] | None = None
    claim_family: Callable[[Mapping[str, Any]], ClaimFamily | None] | None = None
    gpu_rules: tuple[str, ...] = ()
    check: Callable[[Config], str | None] | None = None

    def __post_init__(self) -> None:
        if self.rule_all not in RULE_ALL:
            raise ValueError(
                f"study {self.name!r}: rule_all {self.rule_all!r}; a study joins rule all one "
                f"way of {RULE_ALL}"
            )
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"study name {self.name!r}: lower-case letters, digits and _")

    def configured(self, config: Config) -> bool:
        """Whether the configuration has this study's section (a study without one: always)."""
        return self.section is None or bool(config.get(self.section))

    def in_rule_all(self, config: Config) -> bool:
        """Whether ``rule all`` builds this study under ``config`` (its one way)."""
        if self.rule_all == "when_listed":
            return self.name in (config.get("studies") or ())
        return self.rule_all == "when_configured" and self.configured(config)


def spec_modules(package: Path = PACKAGE) -> list[str]:
    """The dotted names of the spec modules: ``isotropy.<package>.spec`` for every package of
    isotropy with a ``spec.py``, by package name."""
    return [f"isotropy.{p.parent.name}.spec" for p in sorted(package.glob("*/spec.py"))]


@functools.cache
def registry() -> tuple[StudySpec, ...]:
    """Every registered study, by package then in its module's order; names, targets and
    costed rules each unique."""
    found = [s for name in spec_modules() for s in importlib.import_module(name).STUDIES]
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


def by_target(target: str) -> StudySpec | None:
    """The study whose target rule is ``target`` (None: no study's)."""
    return next((s for s in registry() if s.target == target), None)


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


def rule_files() -> list[str]:
    """The rule files the studies bring (each once), for the Snakefile's includes."""
    return list(dict.fromkeys(s.rules for s in registry() if s.rules))


def job_costs() -> dict[str, JobCost]:
    """rule -> the wall seconds one of its jobs adds to its study's estimate, every study's."""
    return {rule: cost for s in registry() for rule, cost in s.job_costs.items()}


def gpu_rules() -> list[str]:
    """Every rule that asks for a GPU (resources gpu=1), sorted."""
    return sorted({rule for s in registry() for rule in s.gpu_rules})


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


def claim_families(tables: Mapping[str, Any]) -> list[ClaimFamily]:
    """The per-seed claim families the loaded result tables (by input name) hold, in registry
    order (rule check_claims: each its own Holm family, then its guard)."""
    families = [s.claim_family(tables) for s in registry() if s.claim_family is not None]
    return [family for family in families if family is not None]
