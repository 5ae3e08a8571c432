"""After a killed run, `make resume` (snakemake --unlock, then the run again, with the workflow
profile's rerun-incomplete) finishes the job a SIGKILL cut off."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from tiny_workflow import SNAKEMAKE, snakemake

ROOT = Path(__file__).resolve().parents[1]
SNAKEFILE = """
rule all:
    input: "done.txt"

rule slow:
    output: "done.txt"
    shell: "echo partial > {output}; echo started > started.txt; sleep 20; echo finished > {output}"
"""


PROFILE = ["--workflow-profile", str(ROOT / "profiles" / "default")]


@pytest.mark.slow
def test_killed_run_is_resumed_by_unlock_and_rerun(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    killed = subprocess.Popen(
        [*SNAKEMAKE, "--cores", "1", *PROFILE],
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not (tmp_path / "started.txt").exists():
        assert killed.poll() is None and time.monotonic() < deadline, "the toy job never started"
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)  # the whole run, job included, as a lost session would
    killed.wait(timeout=30)

    rerun = snakemake(*PROFILE, cwd=tmp_path, timeout=120)
    output = rerun.stderr + rerun.stdout
    assert rerun.returncode != 0 and "LockException" in output, output[-2000:]

    # make resume: unlock, then the run again; the job cut off after writing "partial" is made
    # again (rerun-incomplete), not taken for finished.
    unlock = snakemake(*PROFILE, "--unlock", cwd=tmp_path, timeout=120)
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    resumed = snakemake(*PROFILE, cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (tmp_path / "done.txt").read_text() == "finished\n"
