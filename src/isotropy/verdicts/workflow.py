"""Rules ``check_claims`` and ``compare_with_papers`` (rules/provenance.smk): their inputs, the
configuration they read, and loading the result tables for :func:`measurements.measure`.

Both rules take the same inputs and measure them with the same function, so the two pages
cannot disagree about a number.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.verdicts.measurements import CORRELATION_TABLES, COUNT_TABLES

ISTAR_TABLE = "results/istar/runs.csv"
GEOMETRY_TABLES = {
    "geometry_lid": "results/geometry/lid.csv",
    "geometry_cosine": "results/geometry/cosine_by_layer.csv",
    "geometry_sts": "results/geometry/sts.csv",
}


def configured_studies(config: Mapping[str, Any]) -> list[str]:
    """The studies this run builds: config ``studies`` (all four when absent) that have a section."""
    wanted = config.get("studies", ["main", "glue", "istar", "geometry"])
    return [study for study in wanted if config.get(study)]


def _optimisation_studies(config: Mapping[str, Any]) -> list[str]:
    from isotropy.studies import study_runs

    return [
        study
        for study in CORRELATION_TABLES
        if study in configured_studies(config) and study_runs(dict(config), study)
    ]


def workflow_run_keys(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per configured optimisation study, the key (encoder, dataset, seed) of each trace input."""
    from isotropy.studies import study_runs

    return {
        study: [dict(r) for r in study_runs(dict(config), study)]
        for study in _optimisation_studies(config)
    }


def workflow_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The named inputs of both rules: the result tables of the studies this run builds.

    A study counts when config ``studies`` lists it (see :func:`configured_studies`), so the
    verdicts judge exactly what ``snakemake`` (rule all) made; a study left out is "not run".
    """
    from isotropy.paths import optimisation_run_file

    studies = configured_studies(config)
    inputs: dict[str, Any] = {}
    for study, runs in workflow_run_keys(config).items():
        inputs[f"{study}_traces"] = [
            optimisation_run_file("trace.parquet", study, r["encoder"], r["dataset"], r["seed"])
            for r in runs
        ]
        inputs[f"{study}_{COUNT_TABLES[study]}"] = f"results/{study}/{COUNT_TABLES[study]}.csv"
        inputs[f"{study}_{CORRELATION_TABLES[study]}"] = (
            f"results/{study}/{CORRELATION_TABLES[study]}.csv"
        )
    if "istar" in studies:
        from isotropy.istar.grid import run_grid

        if run_grid(dict(config["istar"])):
            inputs["istar_runs"] = ISTAR_TABLE
    if "geometry" in studies:
        from isotropy.studies import geometry_targets

        targets = geometry_targets(dict(config))
        inputs.update({name: path for name, path in GEOMETRY_TABLES.items() if path in targets})
    return inputs


def load_tables(
    inputs: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]],
    run_keys: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, pd.DataFrame]:
    """The result tables named by :func:`workflow_inputs`, read (traces tagged with their keys)."""
    from isotropy.summaries import read_traces

    tables = {}
    for name, value in inputs.items():
        if name.endswith("_traces"):
            study = name.removesuffix("_traces")
            keys = run_keys[study]
            files = [str(v) for v in value]
            if len(keys) != len(files):
                raise ValueError(f"{study}: {len(keys)} run keys for {len(files)} traces")
            tables[name] = read_traces(files, [{k: v for k, v in key.items() if k != "seed"} for key in keys])  # fmt: skip
        elif name != "published":
            tables[name] = pd.read_csv(Path(value))
    return tables


def config_subset(config: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of the configuration the measurements read (rule params: a change re-runs)."""
    geometry = config.get("geometry") or {}
    clusters = geometry.get("clusters") or {}
    return {
        "encoders": dict(config.get("encoders") or {}),
        "main": {"setups": dict((config.get("main") or {}).get("setups") or {})},
        "geometry": {
            "models": dict(geometry.get("models") or {}),
            "clusters": {
                "models": list(clusters.get("models") or []),
                "max_per_type": clusters.get("max_per_type", 20),
            },
            "sts": {"models": list((geometry.get("sts") or {}).get("models") or [])},
        },
        "istar": {"models": dict((config.get("istar") or {}).get("models") or {})},
    }
