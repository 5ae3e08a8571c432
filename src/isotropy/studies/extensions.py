"""The extension study's record, runs and final files (science: isotropy.extensions)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from typing import Any

from isotropy import paths
from isotropy.configuration import Config
from isotropy.extensions import design
from isotropy.studies.record import StudySpec
from isotropy.verdicts.extension_answers import judged_claims


def runs(config: Config) -> list[dict[str, Any]]:
    if (section := config.extensions) is None:
        return []
    grid = product(design.heads(section), section.setups, section.seeds)
    return [{"dataset": d, "head": h, "seed": s} for h, d, s in grid]


def run_files(config: Config, artefact: str) -> list[str]:
    return [paths.extensions_run_file(artefact, **r) for r in runs(config)]


def heldout_files(config: Config, artefact: str) -> list[str]:
    if (section := config.extensions) is None:
        return []
    grid = product(section.heldout.setups, section.seeds)
    return [paths.extensions_heldout_file(artefact, *run) for run in grid]


def outputs() -> list[str]:
    names = [f"{q}.{ext}" for q in design.QUESTIONS for ext in ("csv", "md", "pdf", "png")]
    return [paths.extensions_file(n) for n in [*names, "seeds.csv", "claims.csv", "claims.md"]]


def claim_page(tables: Mapping[str, Any]) -> Any:
    seeds = tables.get("extensions_seeds")
    return None if seeds is None else judged_claims(seeds)


STUDIES = (
    StudySpec(
        name="extensions",
        outputs=lambda config: outputs(),
        job_costs=design.JOB_COSTS,
        # its per-seed values: its claims join the claims page as their own Holm family
        claims_inputs=lambda config: {"extensions_seeds": paths.extensions_file("seeds.csv")},
        claim_page=claim_page,
    ),
)
