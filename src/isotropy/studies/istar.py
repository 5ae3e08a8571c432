"""The records of the I-STAR grid and the poster's estimator figures (science: isotropy.istar)."""

from __future__ import annotations

from typing import Any

from isotropy import paths
from isotropy.configuration import Config, Istar
from isotropy.istar import study as istar_study
from isotropy.readers.tasks import TASKS
from isotropy.studies.record import StudySpec, finetune_job
from isotropy.verdicts.claims import Claim
from isotropy.verdicts.measurements.istar import ISTAR_QUANTITIES, istar_measurements
from isotropy.workflow.targets import names_pattern


def outputs(section: Istar | None) -> list[str]:
    """runs.csv and Figures 5-7 (7 only when its task is run), each with the table it draws."""
    if not section:
        return []
    figures = ["figure5", "figure6"]
    if section.figure7_task in section.tasks:
        figures.append("figure7")
    files = [paths.istar_figure(figure, ext) for figure in figures for ext in ("pdf", "png", "csv")]
    return [paths.ISTAR_RUNS, *files]


def estimator_outputs(config: Config) -> list[str]:
    """The poster's figures 1-4, its shapes, and their tables (Figure 1: figure1_encoders)."""
    if not config.istar_estimator:
        return []
    names = ["figure4.pdf", "figure4.png", "figure4_zeta.csv", "figure4_batches.csv"]
    names += ["figures2_3.pdf", "figures2_3.png", "figures2_3.csv", "figures2_3_points.csv"]
    names += ["shapes.pdf", "shapes.png", "shapes.csv", "shapes_points.csv"]
    if config.istar_estimator.figure1_encoders:
        names += ["figure1.pdf", "figure1.png", "figure1.csv", "figure1_summary.csv"]
    return [paths.istar_estimator_file(name) for name in names]


def run_files(section: Istar | None) -> list[str]:
    return [paths.istar_run_file("metrics.json", **r) for r in runs(section)]


def wildcards(section: Istar | None) -> dict[str, str]:
    return {
        "model": names_pattern(section.models if section else []),
        "task": "|".join(TASKS),
        "regulariser": "|".join(istar_study.REGULARISERS),
        "lam": r"-?\d+(\.\d+)?(e-?\d+)?",
    }


def runs(section: Istar | None) -> list[dict[str, Any]]:
    return istar_study.run_grid(section) if section else []


def _declared(quantity: str) -> dict[str, Any]:
    """A claim's smallest effect of interest and source, and what a seed drives (the subset not)."""
    return {
        "sesoi": abs(ISTAR_QUANTITIES[quantity][2]),
        "sesoi_source": ISTAR_QUANTITIES[quantity][3],
        "seeds_vary": "the head's start, dropout, batch order and Σ_S's samples; not the encoder",
    }


# Rudman & Eickhoff's claims, one row per λ < 0, each tested over seeds.
CLAIMS = (
    Claim(
        "negative_lambda_lowers_isoscore",
        "istar",
        "istar_isoscore_change",
        "I-STAR with this negative λ gives lower IsoScore* than no regulariser (over seeds, "
        "Holm over the study's family)",
        "seeds_below:0",
        "Rudman & Eickhoff 2024, Figure 5",
        "seeds",
        **_declared("istar_isoscore_change"),
    ),
    Claim(
        "negative_lambda_improves_task",
        "istar",
        "istar_metric_gain",
        "I-STAR with this negative λ scores higher on the task than no regulariser (over "
        "seeds, Holm over the study's family)",
        "seeds_above:0",
        "Rudman & Eickhoff 2024, Figure 6",
        "seeds",
        **_declared("istar_metric_gain"),
    ),
)

STUDIES = (
    StudySpec(
        name="istar",
        outputs=lambda config: outputs(config.istar),
        job_costs={"finetune": finetune_job("istar")},
        # the grid's runs.csv, when the section configures runs
        verdict_inputs=lambda config: (
            {"istar_runs": paths.ISTAR_RUNS} if runs(config.istar) else {}
        ),
        measures={"istar_runs": lambda table, config, stand: istar_measurements(table, config)},
        claims=CLAIMS,
        claims_not_run="the I-STAR study is not part of this run (config studies)",
    ),
    StudySpec(
        name="istar_estimator",
        outputs=estimator_outputs,
        rules="rules/istar.smk",
        rule_all="when_configured",
    ),
)
