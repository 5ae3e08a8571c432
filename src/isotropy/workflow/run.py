"""What a run does when it starts (``onstart`` in rules/common.smk), never in a dry run or a
report: set how the jobs' idle threads wait (:mod:`isotropy.compute`), record its effective
configuration for ``make report`` and print the whole run's progress after every finished job
(:mod:`isotropy.estimate`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from isotropy import paths


def record_effective_config(
    config: Mapping[str, Any], requested: Iterable[str], workdir: str | Path = "."
) -> list[Path]:
    """Write the run's effective configuration to ``logs/effective-config/<target>.yaml`` for
    every requested target named by a plain word (main_study, preview_study, ...; a file target
    has no such record). Only a run that starts writes it, never an estimate, so ``make report``
    describes the results the last real run made with the settings that made them."""
    written = []
    for target in sorted(requested):
        if not re.fullmatch(r"\w+", target):
            continue
        path = Path(workdir) / paths.EFFECTIVE_CONFIG / f"{target}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(dict(config), sort_keys=False))
        written.append(path)
    return written


def started(workflow: Any, config: Mapping[str, Any]) -> None:
    """The run starts: the jobs' thread wait policy in the environment they inherit (here, as
    no job has started yet), its configuration recorded, then the progress lines attached."""
    from isotropy import estimate  # here: the cost model, which the parse never needs
    from isotropy.compute import apply_job_environment

    if added := apply_job_environment():
        print(
            "jobs' idle threads sleep instead of spinning: "
            + ", ".join(f"{k}={v}" for k, v in added.items())
            + " (isotropy.compute; set OMP_WAIT_POLICY yourself to choose otherwise)",
            file=sys.stderr,
        )
    record_effective_config(config, workflow.dag_settings.targets)
    try:
        estimate.attach(workflow, config)
    except Exception as error:  # the progress lines are a help: never the reason a run stops
        print(f"run progress lines off: {type(error).__name__}: {error}", file=sys.stderr)
