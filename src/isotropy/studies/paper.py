"""The records of the main study, its preview, GLUE, the section-2 figure and the sensitivity
grid (their runs and files: isotropy.workflow.targets; their costs: paper_cost)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy import paths
from isotropy.studies import embedding_cost
from isotropy.studies import paper_cost as cost
from isotropy.studies.record import StudySpec
from isotropy.verdicts.measurements.optimisation import CORRELATION_TABLES, COUNT_TABLES
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

RULES = "rules/optimize.smk"


def section2_outputs(config: Mapping[str, Any]) -> list[str]:
    """The section 2 figure and its tables; none without the ``section2`` section. Its input is
    a main-study data set's embeddings (polarity with MiniLM by default): seconds on a CPU."""
    if not config.get("section2"):
        return []
    return [
        paths.section2_file(name)
        for name in ("figure.pdf", "figure.png", "trace.csv", "classes.csv")
    ]


def optimisation_verdict_inputs(study: str):
    """The claims' and comparison's inputs of a direct-optimisation study (main, glue): every
    run's trace and the study's count and correlation tables (none without runs)."""

    def inputs(config: Mapping[str, Any]) -> dict[str, Any]:
        runs = targets.study_runs(dict(config), study) if config.get(study) else []
        if not runs:
            return {}
        traces = [
            paths.optimisation_run_file(
                "trace.parquet", study, r["encoder"], r["dataset"], r["seed"]
            )
            for r in runs
        ]
        tables = (COUNT_TABLES[study], CORRELATION_TABLES[study])
        return {
            f"{study}_traces": traces,
            **{f"{study}_{t}": paths.study_file(f"{t}.csv", study) for t in tables},
        }

    return inputs


def preview_problem(config: Mapping[str, Any]) -> str | None:
    """A preview whose metric stride the main study's cannot be compared with."""
    return workflow_config.preview_stride_problem(config) if "main" in config else None


def optimisation_study(name: str, section: str, outputs, **record: Any) -> StudySpec:
    """The record of a study of direct-optimisation runs (rules/optimize.smk): its target and
    its estimate (:func:`isotropy.studies.paper_cost.describe`) named after it."""
    return StudySpec(
        name=name,
        section=section,
        target=f"{name}_study",
        outputs=outputs,
        rules=RULES,
        describe=lambda config, device: cost.describe(config, name, device),
        **record,
    )


MAIN = optimisation_study(
    "main",
    "main",
    lambda config: paths.main_study_outputs(),
    job_costs={
        "optimize_embeddings": cost.optimisation_job_seconds,
        "embed_sentences": embedding_cost.embedding_job_seconds,
        "lookup_word_vectors": embedding_cost.embedding_job_seconds,
    },
    verdict_inputs=optimisation_verdict_inputs("main"),
    gpu_rules=("embed_sentences", "optimize_embeddings"),
)
# the main study's setups with the preview's seeds and stride
PREVIEW = optimisation_study(
    "preview",
    "main",
    lambda config: paths.main_study_outputs("preview"),
    rule_all="never",
    gpu_rules=("optimize_embeddings",),
    check=preview_problem,
)
GLUE = optimisation_study(
    "glue",
    "glue",
    lambda config: paths.glue_study_outputs(),
    verdict_inputs=optimisation_verdict_inputs("glue"),
    gpu_rules=("optimize_embeddings",),
)
SECTION2 = StudySpec(
    name="section2",
    section="section2",
    target=None,
    outputs=section2_outputs,
    rules=RULES,
    rule_all="when_configured",  # seconds on a CPU
)
STUDIES = (MAIN, PREVIEW, GLUE, SECTION2)
