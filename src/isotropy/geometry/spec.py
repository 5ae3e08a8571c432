"""The geometry study's record (:class:`isotropy.studies.StudySpec`): Cai et al. (2021)'s
clusters, LID and STS analyses and the slides' SST-2 classification."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy import costs, paths
from isotropy.geometry import cost
from isotropy.studies import StudySpec
from isotropy.workflow import inputs, targets

# The collected tables the claims and the paper comparison read, when the run makes them.
VERDICT_TABLES = {
    "geometry_lid": paths.GEOMETRY_LID,
    "geometry_cosine": paths.GEOMETRY_COSINE,
    "geometry_sts": paths.GEOMETRY_STS,
    "geometry_classification": paths.GEOMETRY_CLASSIFICATION,
}


def verdict_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The collected tables this configuration makes (none without the section)."""
    made = targets.geometry_targets(dict(config)) if config.get("geometry") else []
    return {name: path for name, path in VERDICT_TABLES.items() if path in made}


def describe(config: Mapping[str, Any], device: str) -> list[str]:
    """The lines of :func:`isotropy.geometry.cost.describe` at this machine's pace, for the STS
    data sets the run plans (one the data mirror lacks gets no job)."""
    final = targets.geometry_targets(dict(config))
    sts = inputs.geometry_sts_datasets(config)
    return costs.scaled(
        cost.describe, config, device, costs.JOB_THREADS, final_files=final, sts_datasets=sts
    )


STUDIES = (
    StudySpec(
        name="geometry",
        section="geometry",
        target="geometry_study",
        outputs=targets.geometry_targets,
        rules="rules/geometry.smk",
        job_costs=cost.JOB_COSTS,
        describe=describe,
        verdict_inputs=verdict_inputs,
        gpu_rules=(
            "geometry_token_embeddings",
            "geometry_sentence_embeddings",
            "geometry_classification_features",
        ),
    ),
)
