"""Shared test fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def mirror_root() -> Path:
    """The offline data mirror: $ISOTROPY_MIRROR, else ../shared/mirror beside the repository.

    Tests that need it are skipped where it is absent, and fail under CI (CI=true).
    """
    import tiny_workflow

    return tiny_workflow.require_mirror().resolve()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """The tiny configuration run through Snakemake once per session.

    Returns (workdir, command, mirror); ``command`` is the Snakemake command line without targets.
    """
    import tiny_workflow

    mirror_source = tiny_workflow.require_mirror()
    base = tmp_path_factory.mktemp("tiny")
    mirror = tiny_workflow.make_tiny_mirror(mirror_source, base / "mirror")
    config = tiny_workflow.write_tiny_config(base / "config.yaml", mirror)
    workdir = base / "work"
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO_ROOT / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(config),
        "--cores",
        os.environ.get("ISOTROPY_TINY_RUN_CORES", "2"),  # 1: every job single-threaded
    ]  # no target: tests add theirs; the fixture builds the default one, rule all
    # 25 min by default; a machine shared with other runs may need more (ISOTROPY_TINY_RUN_TIMEOUT, seconds).
    timeout = int(os.environ.get("ISOTROPY_TINY_RUN_TIMEOUT", "1500"))
    env = tiny_workflow.snakemake_environment(mirror)
    result = subprocess.run(
        command + ["all"], capture_output=True, text=True, env=env, timeout=timeout
    )
    if result.returncode != 0:
        pytest.fail(f"snakemake failed:\n{result.stderr[-6000:]}")
    return workdir, command, mirror
