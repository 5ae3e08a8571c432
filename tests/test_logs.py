"""A step's failure is said once: the cause on stderr, its traceback in the rule's log only."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from tiny_workflow import snakemake

STEP = textwrap.dedent(
    """
    import sys, types
    from isotropy.logs import configure_from_snakemake
    configure_from_snakemake(types.SimpleNamespace(log=sys.argv[1:]))
    def load():
        raise ValueError("resources/x.npy is truncated; re-make it with snakemake --forcerun embed")
    load()
    """
)


def test_uncaught_error_is_one_line_on_stderr_and_a_traceback_in_the_log(tmp_path):
    log = tmp_path / "step.log"
    result = subprocess.run(
        [sys.executable, "-c", STEP, str(log)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].endswith(
        "ValueError: resources/x.npy is truncated; re-make it with snakemake --forcerun embed "
        f"(traceback in {log})"
    )
    text = log.read_text()
    assert text.count("Traceback (most recent call last)") == 1 and "in load" in text
    # without a log file, the traceback stays on stderr
    result = subprocess.run(
        [sys.executable, "-c", STEP], capture_output=True, text=True, timeout=60
    )
    assert result.stderr.count("Traceback (most recent call last)") == 1


SNAKEFILE = """
rule fail:
    output: "out.txt"
    log: "logs/fail.log"
    script: "fail.py"
"""

SCRIPT = """
from isotropy.logs import configure_from_snakemake
configure_from_snakemake(snakemake)
raise ValueError("the cause, and what to do")
"""


@pytest.mark.slow
def test_a_failed_snakemake_job_prints_its_traceback_once(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "fail.py").write_text(SCRIPT)
    snakefile = str(tmp_path / "Snakefile")
    result = snakemake("--show-failed-logs", "-d", str(tmp_path), "-s", snakefile, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert output.count("Traceback (most recent call last)") == 1, output
    assert "ValueError: the cause, and what to do (traceback in logs/fail.log)" in output
