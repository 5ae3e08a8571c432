"""A step's failure is said once: the cause on stderr, its traceback in the rule's log only;
progress lines of long jobs and runs: done/total and the time left at the rate so far."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest
from snakemake_interface_logger_plugins.common import LogEvent
from tiny_workflow import snakemake

from isotropy.logs import ProgressLog, TimeLeft

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
    bare = subprocess.run([sys.executable, "-c", STEP], capture_output=True, text=True, timeout=60)
    assert bare.stderr.count("Traceback (most recent call last)") == 1


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


@pytest.mark.parametrize(
    ("total", "steps", "said"),
    [  # 10 s since the last line: nothing yet; 250 of 1000 in 60 s: 180 s to go; the end
        (
            1000,
            [(10, 100, None), (60, 150, None), (70, 250, None), (200, 500, None)],
            [
                "texts: 250/1,000 (25.0%), elapsed 1.0 min, about 3.0 min left",
                "texts: 1,000/1,000 (100.0%), elapsed 3.3 min, about 0 s left",
            ],
        ),  # a loop that may stop early: 100 of 5,000 read, but 40% of the token cap kept
        (
            5000,
            [(40, 100, 0.4), (100, 150, 1.0)],
            [
                "texts: 100/5,000, 40.0% of the work, elapsed 40 s, about 1.0 min left",
                "texts: 250/5,000, 100.0% of the work, elapsed 1.7 min, about 0 s left",
            ],
        ),
    ],
)
def test_progress_logs_the_time_left_at_most_every_interval_and_at_the_end(
    caplog, total, steps, said
):
    now = [0.0]
    progress = ProgressLog(total, "texts", every=30, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="isotropy.progress"):
        for now[0], done, share in steps:
            progress.update(done, share=share)
    assert [record.getMessage() for record in caplog.records] == said
    assert ProgressLog(10, "x").line(0.0).endswith("about ? left")
    assert "1 h 02 min" in ProgressLog(2, "x").line(3700.0)


def test_a_run_says_the_time_left_after_each_finished_job_but_the_last(capsys):
    now = [0.0]
    handler = TimeLeft(clock=lambda: now[0])
    for now[0], done in [(60.0, 1), (90.0, 3), (120.0, 4)]:
        handler.emit(logging.makeLogRecord({"event": LogEvent.PROGRESS, "done": done, "total": 4}))
    handler.emit(logging.makeLogRecord({"event": LogEvent.JOB_INFO, "done": 1, "total": 4}))
    assert capsys.readouterr().err.splitlines() == [
        "jobs: 1/4 (25.0%), elapsed 1.0 min, about 3.0 min left at the rate so far",
        "jobs: 3/4 (75.0%), elapsed 1.5 min, about 30 s left at the rate so far",
    ]
    # Weighed by the estimate: 11 downloads of 2 s done in 30 s, 12 optimisations of 27.5 s to
    # go: 7.5 min left (every job the same said "about 33 s").
    now[0], costs = 0.0, {job: 2.0 if job < 12 else 27.5 for job in range(1, 24)}
    handler = TimeLeft(clock=lambda: now[0], costs=costs)
    for job in range(1, 12):
        handler.emit(logging.makeLogRecord({"event": LogEvent.JOB_FINISHED, "job_id": job}))
    now[0] = 30.0
    handler.emit(logging.makeLogRecord({"event": LogEvent.PROGRESS, "done": 11, "total": 23}))
    said = capsys.readouterr().err
    assert "11/23, 6.2% of the work, elapsed 30 s, about 7.5 min left" in said, said
