"""The direct-optimisation studies' runs, settings and verdict inputs, the geometry study's
models and the wildcards every rule shares; the rest is the studies' (:mod:`isotropy.studies`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from isotropy import paths, readers
from isotropy.configuration import Config
from isotropy.configuration.optimisation import Main
from isotropy.readers.glue import GLUE_TASKS

OPTIMISATION_STUDIES = ("main", "glue", "preview")


def settings_stamp(config: Config, study: str) -> str:
    """The line that marks a preview's tables and figures as such ('' for the full studies)."""
    if study != "preview":
        return ""
    section = config.study_section(study)
    seeds = ", ".join(str(seed) for seed in section.seeds)
    plural = "s" if len(section.seeds) > 1 else ""
    return (
        f"PREVIEW (make preview): seed{plural} {seeds}, metrics after "
        f"{every_nth_update(section.metric_stride)}; not the paper's protocol (make run)"
    )


def every_nth_update(stride: int) -> str:
    """'every update', 'every 2nd update', 'every 10th update', ..."""
    if stride == 1:
        return "every update"
    teen = stride % 100 in (11, 12, 13)
    suffix = "th" if teen else {1: "st", 2: "nd", 3: "rd"}.get(stride % 10, "th")
    return f"every {stride}{suffix} update"


def study_runs(config: Config, study: str) -> list[dict[str, Any]]:
    section = config.study_section(study)
    if isinstance(section, Main):
        pairs = [(setup.encoder, dataset) for dataset, setup in section.setups.items()]
    else:  # glue; the rules' study wildcard admits OPTIMISATION_STUDIES only
        pairs = [(encoder, task) for encoder in section.encoders for task in section.tasks]
    return [{"encoder": e, "dataset": d, "seed": s} for e, d in pairs for s in section.seeds]


def table_runs(config: Config, study: str, root: str = ".") -> list[dict[str, Any]]:
    """The runs a study's tables hold (they accumulate): every configured run, then every finished
    run under ``root`` the configuration can still name (a configured encoder and data set)."""
    runs = study_runs(config, study)
    setups = getattr(config.study_section(study), "setups", {})  # GLUE has none
    present = set()
    for summary in (Path(root) / paths.study_file("", study)).glob("*/*/seed*/summary.json"):
        folder, seed = summary.parent, summary.parent.name.removeprefix("seed")
        if not seed.isdigit() or not (folder / "trace.parquet").is_file():
            continue
        encoder, dataset = folder.parent.parent.name, folder.parent.name
        if study == "glue":
            fits = encoder in config.encoders and dataset in GLUE_TASKS
        else:
            fits = dataset in setups and setups[dataset].encoder == encoder
        if fits:
            present.add((encoder, dataset, int(seed)))
    extra = sorted(present - {(r["encoder"], r["dataset"], r["seed"]) for r in runs})
    return runs + [{"encoder": e, "dataset": d, "seed": s} for e, d, s in extra]


def caption_facts(config: Config, study: str, root: str = ".") -> dict[str, Any]:
    """What a study's tables and figures hold, for their captions."""
    section = config.study_section(study)
    setups = getattr(section, "setups", {})  # GLUE has none
    runs = table_runs(config, study, root)
    seeds_per_panel: dict[tuple[str, str], set[int]] = {}
    for run in runs:
        seeds_per_panel.setdefault((run["encoder"], run["dataset"]), set()).add(run["seed"])
    datasets = list(dict.fromkeys(r["dataset"] for r in runs))
    return {
        "seeds": sorted({r["seed"] for r in runs}),
        "encoders": list(dict.fromkeys(r["encoder"] for r in runs)),
        "datasets": datasets,
        "setups": {d: setups[d].model_dump() for d in datasets if d in setups},
        "band": any(len(seeds) >= 2 for seeds in seeds_per_panel.values()),
        "recorded": (
            "after every update"
            if section.metric_stride == 1
            else f"at step 0, after {every_nth_update(section.metric_stride)} and after the last"
        ),
        **{k: getattr(section, k) for k in ("metric_stride", "updates", "learning_rate")},
        "metric_sample_size": section.metric_sample_size,
    }


def optimisation_settings(config: Config, study: str, dataset: str, seed: int) -> dict[str, Any]:
    """Keyword arguments of :class:`isotropy.optimize.OptimisationSettings` for one run."""
    section = config.study_section(study)
    bias = section.setups[dataset].bias if isinstance(section, Main) else True
    keys = ("updates", "learning_rate", "bias", "metric_stride", "metric_sample_size")
    return {
        **{key: bias if key == "bias" else getattr(section, key) for key in keys},
        "seed": seed,
        # only when asked: the settings (and provenance) of runs without them stay as they were
        **({"extra_metrics": extra} if (extra := section.extra_metrics) else {}),
    }


def section2_params(config: Config) -> dict[str, Any]:
    """Rule optimize_embeddings' ``section2_metrics``, only when set (else all would re-run)."""

    def section2_metrics(wildcards: Any) -> bool:
        return config.study_section(wildcards.study).section2_metrics

    used = any(s and s.section2_metrics for s in (config.main, config.glue))
    return {"section2_metrics": section2_metrics} if used else {}


def geometry_models(config: Config) -> list[str]:
    parts = (g.clusters, g.sts, g.classification) if (g := config.geometry) else ()
    return list(dict.fromkeys(m for p in parts for m in p.models))


def verdict_files(config: Config, study: str, folder: str = "") -> dict[str, Any]:
    """An optimisation study's traces and count and correlation tables that the verdicts read,
    from ``folder`` (the preview's under main's names)."""
    folder = folder or study
    runs = study_runs(config, folder)
    if not runs:
        return {}
    tables = (paths.COUNT_TABLES[study], paths.CORRELATION_TABLES[study])
    return {
        f"{study}_traces": [
            paths.optimisation_run_file("trace.parquet", folder, **r) for r in runs
        ],
        **{f"{study}_{t}": paths.study_file(f"{t}.csv", folder) for t in tables},
    }


def optimisation_run_files(config: Config, study: str, artefact: str) -> list[str]:
    return [paths.optimisation_run_file(artefact, study, **r) for r in table_runs(config, study)]


def names_pattern(names: Any) -> str:
    return "|".join(re.escape(name) for name in names) or "^$"


def wildcard_patterns(config: Config) -> dict[str, str]:
    return {
        "study": "|".join(OPTIMISATION_STUDIES),
        "encoder": r"[A-Za-z0-9_\-]+",
        "seed": r"\d+",
        "source": "|".join(re.escape(name) for name in config.sources),
        "dataset": "|".join(re.escape(name) for name in readers.registry.DATASETS),
    }


def sensitivity_settings(config: Config, seed: int, lr_factor: str) -> dict[str, Any]:
    """Keyword arguments of :class:`isotropy.optimize.OptimisationSettings` for one run."""
    section = config.sensitivity
    keys = ("updates", "bias", "metric_stride", "metric_sample_size")
    learning_rate = section.learning_rate * float(lr_factor)
    return {**{k: getattr(section, k) for k in keys}, "learning_rate": learning_rate, "seed": seed}
