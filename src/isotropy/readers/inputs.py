"""What Snakemake asks of the readers at parse time, from the configuration.

Each function maps the configuration (and a wildcard) to the sources a data set, an I-STAR task
split, the cluster corpus or an STS split reads, or to the options a data set depends on. With a
mirror set, a needed file the mirror lacks fails here, while the DAG is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from isotropy.paths import RAW_ROOT
from isotropy.readers.registry import dataset_spec
from isotropy.readers.sts import OPTIONAL_STS, sts_source
from isotropy.readers.tasks import ISTAR_SPLITS, TASKS, task_source, task_spec
from isotropy.sources import (
    MIRROR_ENV,
    check_sources_available,
    missing_mirror_files,
    resolve_mirror,
    source_outputs,
)

# ---------------------------------------------------------------------------------------------
# Any registered data set


def dataset_sources(config: Mapping[str, Any], dataset: str) -> dict[str, str]:
    """Reader argument → source name, for ``dataset`` under ``config``."""
    return dataset_spec(dataset).sources(config)


def required_sources(dataset: str, config: Mapping[str, Any]) -> list[str]:
    """Names of the sources ``dataset`` is built from (keys of config ``sources``)."""
    names = list(dict.fromkeys(dataset_sources(config, dataset).values()))
    unknown = [n for n in names if n not in config.get("sources", {})]
    if unknown:
        raise ValueError(
            f"data set {dataset!r} needs source(s) {unknown}, which config 'sources' lacks"
        )
    return names


def dataset_inputs(
    config: Mapping[str, Any], dataset: str, root: str | os.PathLike = RAW_ROOT
) -> dict[str, str]:
    """Snakemake inputs of ``dataset``: source name → that source's manifest.

    With a mirror set, a needed source the mirror lacks fails here, while the DAG is built, with
    a message naming the missing file.
    """
    names = required_sources(dataset, config)
    check_sources_available(names, config)
    return {name: source_outputs(name, root)[0] for name in names}


def dataset_options(config: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """Config values the building of ``dataset`` depends on (besides its sources)."""
    return dataset_spec(dataset).options(config)


# ---------------------------------------------------------------------------------------------
# I-STAR task splits


def _task_problem(task: str, config: Mapping[str, Any], mirror: Path) -> str | None:
    """Why the mirror cannot serve ``task`` (a split missing), or None when it holds both splits."""
    spec = task_spec(task)
    for split in ISTAR_SPLITS:
        name = task_source(task, split)
        if name not in config["sources"]:
            return f"I-STAR task {task!r} needs source {name!r}, which config 'sources' lacks"
        files = config["sources"][name].get("mirror") or []
        if not files:
            return (
                f"I-STAR task {task!r} is not part of the offline mirror {mirror} (only GLUE tsv "
                f"files are); unset mirror/{MIRROR_ENV} to load {spec.hub_path!r} from the Hugging "
                "Face hub"
            )
        missing = [rel for rel in files if not (mirror / rel).is_file()]
        if missing:
            return (
                f"I-STAR task {task!r} needs its {split} split, {mirror / missing[0]}, which the "
                f"mirror {mirror} does not have; unset mirror/{MIRROR_ENV} to load it from the "
                "Hugging Face hub, or choose another task"
            )
    return None


def check_tasks_available(tasks: Sequence[str], config: Mapping[str, Any]) -> None:
    """With a mirror set, every task needs both its splits there: one error naming all that do not.

    Called by rule ``finetune``'s input function while the workflow builds its DAG, so a missing
    file stops the run before any job starts, with the tasks the mirror does hold; a DAG that
    needs no I-STAR run is not concerned. Without a mirror (the hub) nothing is checked.
    """
    mirror = resolve_mirror(config.get("mirror"))
    if mirror is None:
        return
    problems = [
        problem for problem in (_task_problem(task, config, mirror) for task in tasks) if problem
    ]
    if problems:
        held = [task for task in TASKS if _task_problem(task, config, mirror) is None]
        raise FileNotFoundError(
            "; ".join(problems)
            + f". Tasks the mirror holds: {', '.join(held) or 'none'} (set istar.tasks to those)"
        )


def task_inputs(
    config: Mapping[str, Any], task: str, root: str | os.PathLike = RAW_ROOT
) -> dict[str, str]:
    """Rule ``finetune``'s inputs: split → the manifest of its download (after
    :func:`check_tasks_available`)."""
    check_tasks_available([task], config)
    sources = [task_source(task, split) for split in ISTAR_SPLITS]
    check_sources_available(sources, config)  # files the mirror holds but nothing can verify
    return dict(zip(ISTAR_SPLITS, (source_outputs(name, root)[0] for name in sources), strict=True))


# ---------------------------------------------------------------------------------------------
# Geometry study: the cluster corpus and the STS splits


def corpus_inputs(config: Mapping[str, Any], root: str | os.PathLike = RAW_ROOT) -> dict[str, str]:
    """Rule geometry_token_embeddings' input: the download of the corpus's source (checked
    against the mirror while the DAG is built)."""
    source = config["geometry"]["clusters"]["corpus"]["source"]
    check_sources_available([source], config)
    return {"corpus": source_outputs(source, root)[0]}


def sts_inputs(
    config: Mapping[str, Any], name: str, split: str, root: str | os.PathLike = RAW_ROOT
) -> dict[str, str]:
    """Rule geometry_sentence_embeddings' input: the download of the STS split, or nothing for
    SICK-R when the mirror lacks it (SICK-R is optional: the job marks it unavailable)."""
    source = sts_source(name, split)
    if source not in config["sources"]:
        raise ValueError(
            f"geometry.sts.splits.{name}: {split!r} needs source {source!r}, which config "
            "'sources' lacks"
        )
    mirror = resolve_mirror(config.get("mirror"))
    if name in OPTIONAL_STS and mirror is not None and missing_mirror_files(source, config, mirror):
        return {}
    check_sources_available([source], config)
    return {"data": source_outputs(source, root)[0]}
