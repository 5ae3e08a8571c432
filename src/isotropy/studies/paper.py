"""The records of the main study, its preview, GLUE and the section-2 figure (their runs and
files: isotropy.workflow.targets; their costs: paper_cost)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from isotropy import paths
from isotropy.studies import paper_cost as cost
from isotropy.studies.record import StudySpec, section_files
from isotropy.verdicts.claims import Claim
from isotropy.verdicts.measurements import SEED_SPREAD_LIMIT
from isotropy.verdicts.measurements.optimisation import optimisation_measurements, table_names
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

RULES = "rules/optimize.smk"
SPEARMAN_LIMIT = -0.998  # Mickus et al. §3.2: ρ "always below −0.998"
GLUE_SPEARMAN_LIMIT = -0.5  # appendix A: "strongly negative", its bounds lost from our copy
# Mickus et al. §3.2 prints r from −0.808 (polarity) to −0.978 (supersense): "strongly
# negative" at the paper's own level is below −0.8, its weakest value to one decimal
PEARSON_LIMIT = -0.8
# The tables and figures of the main study (and of its preview) and of GLUE (paths.study_file).
MAIN_FILES = [
    "table1.csv",
    "correlations.csv",
    *(f"figure{n}.{e}" for n in (2, 3) for e in ("pdf", "png")),
]
GLUE_FILES = ["table2.csv", "table3.csv", "figure4.pdf", "figure4.png"]
# The section 2 figure and its tables.
SECTION2_FILES = ("figure.pdf", "figure.png", "trace.csv", "classes.csv")


def optimisation_verdicts(study: str) -> dict[str, Any]:
    """What the claims and the comparison read of a direct-optimisation study (main, glue): its
    inputs, every run's trace and the study's count and correlation tables (none without runs),
    and what measures them, the three together (the correlations' per-seed values come from the
    traces)."""
    tables = (paths.COUNT_TABLES[study], paths.CORRELATION_TABLES[study])

    def inputs(config: Mapping[str, Any]) -> dict[str, Any]:
        runs = targets.study_runs(dict(config), study)
        if not runs:
            return {}
        return {
            f"{study}_traces": [
                paths.optimisation_run_file("trace.parquet", study, **r) for r in runs
            ],
            **{f"{study}_{t}": paths.study_file(f"{t}.csv", study) for t in tables},
        }

    measures = {table_names(study): functools.partial(optimisation_measurements, study)}
    return dict(verdict_inputs=inputs, measures=measures)


def optimisation_claims(
    study: str, curves: str, correlation: str, seeds: str, rho: float, r: tuple[float, str]
) -> tuple[Claim, ...]:
    """The five claims of one optimisation study; ``r``: the Pearson level and its source."""
    return (
        Claim(
            "silhouette_rises",
            study,
            "silhouette_change",
            "silhouette rises over training (last step − step 0) in every seed",
            "above:0",
            curves,
            "direction",
        ),
        Claim(
            "isoscore_falls",
            study,
            "isoscore_change",
            "IsoScore falls over training (last step − step 0) in every seed",
            "below:0",
            curves,
            "direction",
        ),
        Claim(
            "spearman_strongly_negative",
            study,
            "spearman_rho",
            f"Spearman ρ between IsoScore and silhouette is below {rho:g} in every seed",
            f"below:{rho}",
            correlation,
            "every_run",
        ),
        Claim(
            "pearson_negative",
            study,
            "pearson_r",
            f"Pearson r between IsoScore and silhouette is below {r[0]:g} in every seed ({r[1]})",
            f"below:{r[0]}",
            correlation,
            "direction",
        ),
        Claim(
            "seeds_agree",
            study,
            "seed_spread",
            "the spread across seeds is negligible against the change (std of the final "
            f"IsoScore and silhouette below {SEED_SPREAD_LIMIT:g} of its mean change)",
            f"seeds_below:{SEED_SPREAD_LIMIT}",
            seeds,
            "seeds",
            test="confidence bounds of std / |mean change| (chi-square, t) over "
            "{seeds} seeds, both metrics",
        ),
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
    claims=optimisation_claims(
        "main",
        "Mickus et al. 2024, §3 and Figure 2",
        "Mickus et al. 2024, §3.2 (ρ always below −0.998)",
        "Mickus et al. 2024, §3",
        SPEARMAN_LIMIT,
        (PEARSON_LIMIT, "the paper's own level: its weakest printed r, −0.808, to one decimal"),
    ),
    claims_not_run="the main study is not configured in this run",
)
# the main study's setups with the preview's seeds and stride; a stride that leaves main's runs
# too few metric evaluations is refused only when the preview is the target (python -m
# isotropy.estimate), since its default (10) would refuse a small main study no preview is asked of
PREVIEW = StudySpec(
    name="preview",
    outputs=lambda config: [paths.study_file(name, "preview") for name in MAIN_FILES],
    rules=RULES,
    rule_all="never",
    check=functools.partial(workflow_config.stride_problem, study="preview", of="main"),
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
        (GLUE_SPEARMAN_LIMIT, "our reading of 'strongly negative', its bounds lost from our copy"),
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
