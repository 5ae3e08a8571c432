"""The inputs and settings of the verdict rules (rules/provenance.smk: check_claims and
compare_with_papers take the same ones), and the studies the report covers.

Plain Python: the workflow imports it while it parses; the verdicts themselves are
:mod:`isotropy.verdicts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from isotropy import paths
from isotropy.defaults import setting_or_default
from isotropy.verdicts.measurements import CORRELATION_TABLES, COUNT_TABLES
from isotropy.workflow.config import model_spec
from isotropy.workflow.targets import (
    geometry_models,
    geometry_targets,
    istar_runs,
    study_runs,
    study_targets,
)

# Claims and paper comparison (rules/provenance.smk): both rules take the same inputs and
# measure them with the same function, so the two pages cannot disagree about a number.

GEOMETRY_VERDICT_TABLES = {
    "geometry_lid": paths.GEOMETRY_LID,
    "geometry_cosine": paths.GEOMETRY_COSINE,
    "geometry_sts": paths.GEOMETRY_STS,
}


def configured_studies(config: Mapping[str, Any]) -> list[str]:
    """The studies this run builds: config ``studies`` (all four when absent) that have a section."""
    wanted = setting_or_default(config, "studies")
    return [study for study in wanted if config.get(study)]


def _measured_optimisation_studies(config: Mapping[str, Any]) -> list[str]:
    return [
        study
        for study in CORRELATION_TABLES
        if study in configured_studies(config) and study_runs(dict(config), study)
    ]


def workflow_run_keys(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per configured optimisation study, the key (encoder, dataset, seed) of each trace input."""
    return {
        study: [dict(r) for r in study_runs(dict(config), study)]
        for study in _measured_optimisation_studies(config)
    }


def workflow_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The named inputs of rules check_claims and compare_with_papers: the result tables of the
    studies this run builds.

    A study counts when config ``studies`` lists it (see :func:`configured_studies`), so the
    verdicts judge exactly what ``snakemake`` (rule all) made; a study left out is "not run".
    """
    studies = configured_studies(config)
    inputs: dict[str, Any] = {}
    for study, runs in workflow_run_keys(config).items():
        inputs[f"{study}_traces"] = [
            paths.optimisation_run_file(
                "trace.parquet", study, r["encoder"], r["dataset"], r["seed"]
            )
            for r in runs
        ]
        for table in (COUNT_TABLES[study], CORRELATION_TABLES[study]):
            inputs[f"{study}_{table}"] = paths.study_file(f"{table}.csv", study)
    if "istar" in studies and istar_runs(config["istar"]):
        inputs["istar_runs"] = paths.ISTAR_RUNS
    if "geometry" in studies:
        made = geometry_targets(dict(config))
        inputs.update(
            {name: path for name, path in GEOMETRY_VERDICT_TABLES.items() if path in made}
        )
    return inputs


def preview_run_keys(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A preview's runs, measured as the main study's (its setups, with the preview's seeds)."""
    return {"main": [dict(r) for r in study_runs(dict(config), "preview")]}


def preview_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of the preview's verdict rules: results/preview/ under the main study's names,
    so that its claims and paper comparison are the main study's, judged on the preview."""
    keys = preview_run_keys(config)["main"]
    return {
        "main_traces": [
            paths.optimisation_run_file(
                "trace.parquet", "preview", r["encoder"], r["dataset"], r["seed"]
            )
            for r in keys
        ],
        **{
            f"main_{table}": paths.study_file(f"{table}.csv", "preview")
            for table in (COUNT_TABLES["main"], CORRELATION_TABLES["main"])
        },
    }


def report_tables(config: Mapping[str, Any], preview: bool = False) -> list[str]:
    """The tables the report's opening page shows in full: every CSV of the studies this run
    builds (of the preview alone for a preview)."""
    if preview:
        return [path for path in paths.main_study_outputs("preview") if path.endswith(".csv")]
    made = study_targets(dict(config), configured_studies(config))
    return [path for path in made if path.endswith(".csv")]


def config_subset(config: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of the configuration the measurements read, in the configuration's own shape
    (rule params: a change re-runs): the encoders as configured, the ``models`` records they,
    the geometry study and I-STAR name (what loads them, the papers' names, the dimension), the
    main study's setups and the geometry settings the verdicts quote."""
    geometry = config.get("geometry") or {}
    clusters = geometry.get("clusters") or {}
    encoders = dict(config.get("encoders") or {})
    istar_models = list((config.get("istar") or {}).get("models") or [])
    used = [
        *(spec["model"] for spec in encoders.values() if spec["kind"] == "sentence-transformer"),
        *geometry_models(config),
        *istar_models,
    ]
    return {
        "encoders": {name: dict(spec) for name, spec in encoders.items()},
        "models": {name: _model_record(config, name) for name in dict.fromkeys(used)},
        "main": {"setups": dict((config.get("main") or {}).get("setups") or {})},
        "geometry": {
            "clusters": {
                "models": list(clusters.get("models") or []),
                "max_per_type": setting_or_default(config, "geometry", "clusters", "max_per_type"),
                "lid_sample_size": setting_or_default(
                    config, "geometry", "clusters", "lid_sample_size"
                ),
                "static": {
                    "sample_size": setting_or_default(
                        config, "geometry", "clusters", "static", "sample_size"
                    )
                },
            },
            "sts": {"models": list((geometry.get("sts") or {}).get("models") or [])},
        },
        "istar": {"models": istar_models},
    }


def _model_record(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``models.<name>`` as the measurements read it."""
    spec = model_spec(config, name)
    return {**spec.as_record(), "paper": spec.paper, "dimension": spec.dimension}
