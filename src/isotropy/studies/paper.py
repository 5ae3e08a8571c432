"""The records of the main study, its preview, GLUE and the section-2 figure."""

from __future__ import annotations

import functools
from typing import Any

from isotropy import paths
from isotropy.configuration import stride_problem
from isotropy.studies import paper_cost as cost
from isotropy.studies.record import StudySpec, section_files
from isotropy.verdicts.measurements.optimisation import (
    MAIN_CLAIMS,
    optimisation_claims,
    optimisation_measurements,
    table_names,
)
from isotropy.workflow import targets

RULES = "rules/optimize.smk"
GLUE_SPEARMAN_LIMIT = -0.5  # appendix A: "strongly negative", its bounds lost from our copy
MAIN_FILES = [
    "table1.csv",
    "correlations.csv",
    *(f"figure{n}.{e}" for n in (2, 3) for e in ("pdf", "png")),
]
GLUE_FILES = ["table2.csv", "table3.csv", "figure4.pdf", "figure4.png"]
SECTION2_FILES = ("figure.pdf", "figure.png", "trace.csv", "classes.csv")


def optimisation_verdicts(study: str) -> dict[str, Any]:
    """A direct-optimisation study's verdict inputs and what measures them, together."""
    measures = {table_names(study): functools.partial(optimisation_measurements, study)}
    return dict(
        verdict_inputs=lambda config: targets.verdict_files(config, study), measures=measures
    )


MAIN = StudySpec(
    name="main",
    outputs=lambda config: [paths.study_file(name, "main") for name in MAIN_FILES],
    rules=RULES,
    job_costs={
        "optimize_embeddings": cost.optimisation_job_seconds,
        "embed_sentences": cost.embedding_job_seconds,
        "lookup_word_vectors": cost.embedding_job_seconds,
    },
    **optimisation_verdicts("main"),
    claims=MAIN_CLAIMS,
    claims_not_run="the main study is not configured in this run",
)
# a stride too coarse for main's updates is refused only when the preview is the target: its
# default (10) would refuse a small main study no preview is asked of
PREVIEW = StudySpec(
    name="preview",
    outputs=lambda config: [paths.study_file(name, "preview") for name in MAIN_FILES],
    rules=RULES,
    rule_all="never",
    check=lambda config: stride_problem(
        "preview", config.preview.metric_stride, "main", config.main.updates
    ),
)
GLUE = StudySpec(
    name="glue",
    outputs=lambda config: [paths.study_file(name, "glue") for name in GLUE_FILES],
    rules=RULES,
    **optimisation_verdicts("glue"),
    claims=optimisation_claims(
        "glue",
        "Mickus et al. 2024, appendix A, Figure 4",
        "Mickus et al. 2024, appendix A, Table 3 (strongly negative; our reading −0.5)",
        "Mickus et al. 2024, §3 / appendix A",
        GLUE_SPEARMAN_LIMIT,
        GLUE_SPEARMAN_LIMIT,
        "our reading of 'strongly negative', its bounds lost from our copy",
        "Mickus et al. 2024, appendix A, Table 3, column Pearson r (strongly negative; our "
        "reading −0.5)",
    ),
    claims_not_run="the glue study is not configured in this run",
)
SECTION2 = StudySpec(
    name="section2",
    # from a main-study data set's embeddings (polarity with MiniLM by default): seconds on a CPU
    outputs=section_files("section2", paths.section2_file, SECTION2_FILES),
    rules=RULES,
    rule_all="when_configured",
)
STUDIES = (MAIN, PREVIEW, GLUE, SECTION2)
