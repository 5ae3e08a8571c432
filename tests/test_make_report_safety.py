"""`make report` reads logs/last_run.txt as text, never as shell; it and `make audit` refuse
while a run is in progress in the folder."""

from __future__ import annotations

import fnmatch
import subprocess
import sys

import pytest
from tiny_workflow import make_workdir, run_make


@pytest.mark.parametrize(
    "last_run",
    [
        "TARGET=preview_study ; touch INJECTED #\nCONFIG_FILES=config.yaml\n",
        "TARGET=preview_study$(shell touch INJECTED)\n",
        "TARGET=`touch INJECTED`\n",
        "TARGET=$$(touch INJECTED)\n",
    ],
)
def test_shell_in_last_run_is_never_run(tmp_path, last_run):
    workdir = make_workdir(tmp_path, last_run)
    result = run_make(workdir, "report")
    assert not (workdir / "INJECTED").exists(), result.stdout + result.stderr
    calls = (workdir / "calls.txt").read_text() if (workdir / "calls.txt").exists() else ""
    assert "INJECTED" not in calls
    if result.returncode != 0:  # refused: one line naming the file and what to give instead
        assert "logs/last_run.txt) is not one of" in result.stderr, result.stderr
        assert "REPORT_TARGET=" in result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["report"], "(from logs/last_run.txt) is not one of: *; give REPORT_TARGET=<one of them>"),
        (["audit"], "make audit: target 'rm_everything' (from logs/last_run.txt) is not one of"),
        (["report", "REPORT_TARGET=main_study; touch INJECTED"], "(from REPORT_TARGET) is not one"),
        (["report", "REPORT=x"], "REPORT='x' must be one file name ending in .html or .zip"),
        (["report", "REPORT=folder.html"], "REPORT='folder.html' must be one *, not a folder"),
        (["figures"], "traces in results/main/ (*/*/seed*/trace.parquet), *run `make run` first"),
    ],
)
def test_a_bad_target_or_report_name_or_no_trace_is_refused_first(tmp_path, args, said):
    """Before install or Snakemake (whose --report refuses a name only after the work)."""
    workdir = make_workdir(tmp_path, "TARGET=rm_everything\n")
    (workdir / "folder.html").mkdir()
    result = run_make(workdir, *args)
    assert result.returncode != 0 and not (workdir / "calls.txt").exists()
    line, *rest = result.stderr.splitlines()  # and make's own "*** [...] Error 1", if any
    assert fnmatch.fnmatchcase(line, f"*{said}*") and not (workdir / "INJECTED").exists()
    assert all(" Error " in more for more in rest) and len(rest) <= 1


def test_figures_are_drawn_once_a_trace_is_stored(tmp_path):
    trace = make_workdir(tmp_path, "") / "results/main/miniLM/polarity/seed0/trace.parquet"
    trace.parent.mkdir(parents=True)
    trace.write_bytes(b"")
    assert run_make(tmp_path, "figures").returncode == 0  # its snakemake ran: nothing refused


@pytest.mark.parametrize("target", ["report", "audit"])
def test_a_report_or_audit_while_a_run_is_in_progress_is_refused(tmp_path, target):
    workdir = make_workdir(tmp_path, "TARGET=preview_study\n")
    (workdir / "snakemake").write_text("import time\ntime.sleep(60)\n")
    run = subprocess.Popen([sys.executable, str(workdir / "snakemake")], cwd=workdir)
    try:
        result = run_make(workdir, target, timeout=60)
    finally:
        run.kill()
        run.wait()
    assert result.returncode != 0 and not (workdir / "calls.txt").exists()
    said = f"{target}: Snakemake still runs in {workdir.resolve()} (pid {run.pid}"
    assert said in result.stderr and f"then make {target}" in result.stderr
    assert f"may be re-making the files the {target} reads" in result.stderr


PREVIEW_RULES = "check_claims_preview compare_with_papers_preview report_overview_preview"
MAIN = ("results/report/overview.html", "check_claims compare_with_papers report_overview")


@pytest.mark.parametrize(
    ("target", "overview", "rules"),
    [
        ("preview_study", "results/preview/report/overview.html", PREVIEW_RULES),
        ("main_study", *MAIN),
        ("glue_study", *MAIN),
        ("all", *MAIN),
        ("sensitivity_study", None, None),
    ],
)
def test_the_report_forces_only_the_rules_of_its_target(tmp_path, target, overview, rules):
    """A forced rule's jobs are planned whether the target needs them or not (end to end:
    tests/test_quickstart.py). The sensitivity study makes no claims: no overview."""
    workdir = make_workdir(tmp_path, f"TARGET={target}\n")
    result = run_make(workdir, "report")
    assert result.returncode == 0, result.stderr
    plan, first, *rest = (workdir / "calls.txt").read_text().splitlines()
    # First a dry run that may make nothing upstream: are the target's results there?
    assert plan.startswith(f"snakemake -n {target} ") and f"--allowed-rules {target} " in plan
    if overview is None:
        assert rest == [] and "--report report.partial.html" in first and "--forcerun" not in first
        return
    assert f"snakemake --cores 1 {overview} " in first
    assert f"--forcerun {rules} --allowed-rules {rules} " in first + " "
    assert "--report report.partial.html" in rest[0] and f" {target} {overview} " in rest[0] + " "


def test_a_full_disk_while_the_report_is_written_is_one_line(tmp_path):
    """Snakemake's report writer meets ENOSPC: one line naming the file, not its traceback."""
    workdir = make_workdir(tmp_path, "TARGET=sensitivity_study\n")
    full = "OSError: [Errno 28] No space left on device"
    (workdir / ".venv/bin/snakemake").write_text(
        f'#!/bin/sh\ncase "$*" in *--report*) printf "Traceback\\n{full}\\n" >&2; exit 1;; esac\n'
    )
    result = run_make(workdir, "report")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    line, *rest = result.stderr.splitlines()
    assert line.startswith("make report: no space left on the device of report.partial.html")
    assert line.endswith("free some space and run again") and len(rest) <= 1
