"""The I-STAR study's design, plain Python, no torch (``isotropy.studies`` imports it at parse):
the run grid of config ``istar`` (which runs exist, λ as it appears in paths, the models it runs;
the study's final files: isotropy.studies.istar.outputs) and the settings of one
fine-tuning run (config ``istar.training``). The tasks themselves (kind, labels, text columns,
where their data come from, headline metric) are data-set records: :mod:`isotropy.readers.tasks`.
"""

from __future__ import annotations

from typing import Any

from isotropy.configuration import Istar
from isotropy.finetune.settings import REGULARISERS as REGULARISERS  # the grid's wildcard
from isotropy.finetune.settings import format_lambda
from isotropy.paths import istar_run_file


def run_grid(section: Istar) -> list[dict[str, Any]]:
    """Every run of the study (config ``istar``): the baseline at λ = 0, each regulariser × λ,
    for each of ``run_models`` (null = every name ``models`` lists; a name it does not list is
    refused at load, by the Config model)."""
    return [
        dict(model=model, task=task, regulariser=regulariser, lam=format_lambda(lam), seed=seed)
        for model in section.run_models or section.models
        for task in section.tasks
        for regulariser in section.regularisers
        for lam in ([0.0] if regulariser == "none" else section.lambdas)
        for seed in section.seeds
    ]


def run_path(run: dict[str, Any], artefact: str = "metrics.json") -> str:
    """The file ``artefact`` of one run of :func:`run_grid`."""
    return istar_run_file(
        artefact, run["model"], run["task"], run["regulariser"], run["lam"], run["seed"]
    )


def configured_lambda(section: Istar, regulariser: str, lam: str) -> float:
    """The configured λ that :func:`format_lambda` spells ``lam`` (0 for the baseline): rule
    ``finetune`` passes it to its job, so λ is never one parsed back from a path."""
    choices = [0.0] if regulariser == "none" else section.lambdas
    for value in choices:
        if format_lambda(value) == lam:
            return float(value)
    raise ValueError(
        f"λ {lam!r} is not configured for regulariser {regulariser!r} "
        f"(istar.lambdas: {section.lambdas})"
    )
