"""The whole run's progress: one line per finished job with the done share and the time left."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from isotropy import estimate
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

ROOT = Path(__file__).resolve().parents[1]


def _finished(handler, jobid):
    record = logging.LogRecord("snakemake.logging", logging.INFO, __file__, 0, "x", None, None)
    record.event, record.job_id = "job_finished", jobid
    handler.handle(record)


def test_each_finished_job_prints_the_weighted_share_and_the_time_left():
    now = [0.0]
    jobs = {
        1: estimate.PlannedJob("download_source", "download_source polarity", 10.0),
        2: estimate.PlannedJob("optimize_embeddings", "optimize_embeddings a", 290.0),
        3: estimate.PlannedJob("tabulate_parameters", "tabulate_parameters main", 100.0),
    }
    out = io.StringIO()
    progress = estimate.RunProgress(jobs, prior_factor=4.0, out=out, clock=lambda: now[0])
    now[0] = 30.0
    _finished(progress, 1)
    # 10 s of 400 expected done in 30 s: the rate (30 + 4 x 60) / (10 + 60) = 3.857 wall
    # seconds per expected second, for 390 s left.
    now[0] = 630.0
    _finished(progress, 2)  # 300 of 400 in 630 s: (630 + 240) / 360 per second, for 100 s
    _finished(progress, 2)  # counted once
    _finished(progress, 99)  # a job the plan does not hold (not run by this run): no line
    lines = out.getvalue().splitlines()
    assert lines == [
        "run: 1/3 jobs done (download_source polarity), 2% of the expected work, 30 s elapsed, "
        f"about {estimate.duration(390 * 270 / 70)} left",
        "run: 2/3 jobs done (optimize_embeddings a), 75% of the expected work, 10 min elapsed, "
        f"about {estimate.duration(100 * 870 / 360)} left",
    ]
    assert estimate.duration(390 * 270 / 70) == "25 min"


def test_jobs_are_weighed_by_the_estimate_costs():
    config = workflow_config.load_config(
        [str(ROOT / "config.yaml"), str(ROOT / "config/offline.yaml")]
    )
    config["device"] = "cpu"
    planned = estimate.plan(
        config,
        [
            (
                5,
                "optimize_embeddings",
                {"study": "preview", "encoder": "miniLM", "dataset": "polarity", "seed": "0"},
            ),
            (6, "embed_sentences", {"encoder": "miniLM", "dataset": "snli"}),
            (7, "download_source", {"source": "polarity"}),
        ],
        ROOT / "no-such-dir",
    )
    settings = targets.optimisation_settings(config, "preview", "polarity", 0)
    overhead = estimate.JOB_OVERHEAD_SECONDS
    assert planned[5].seconds == estimate.run_seconds("polarity", settings, "cpu") + overhead
    assert planned[5].label == "optimize_embeddings preview/miniLM/polarity/0"
    snli = estimate.embedding_seconds(config, "miniLM", "snli", ROOT / "no-such-dir")
    assert planned[6].seconds == snli + overhead
    assert planned[7].seconds == overhead


@pytest.mark.slow
def test_snakemake_reports_finished_jobs_to_the_handler(tmp_path):
    """Snakemake 9 logs each finished job on its logger; the handler that onstart attaches (as
    rules/common.smk does) sees them all and prints one line for each. The run, not its dry
    run, records the effective configuration of its target."""
    (tmp_path / "Snakefile").write_text(
        textwrap.dedent(
            """
            from isotropy.workflow import run

            onstart:
                run.started(workflow, {"device": "cpu"})

            rule all:
                input: "b.txt"

            rule a:
                output: "a.txt"
                shell: "echo a > {output}"

            rule b:
                input: "a.txt"
                output: "b.txt"
                shell: "cat {input} > {output}"
            """
        )
    )
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "all",
        "--cores",
        "1",
        "--workflow-profile",
        "none",
    ]
    dry = subprocess.run(
        [*command, "-n"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "run: " not in dry.stderr and not (tmp_path / "logs").exists()  # a dry run: nothing
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert yaml.safe_load((tmp_path / "logs/effective-config/all.yaml").read_text()) == {
        "device": "cpu"
    }
    lines = [line for line in result.stderr.splitlines() if line.startswith("run: ")]
    assert [line.split(",")[0] for line in lines] == [
        "run: 1/3 jobs done (a)",
        "run: 2/3 jobs done (b)",
        "run: 3/3 jobs done (all)",
    ], result.stderr
    assert lines[-1].endswith("about 0 s left")


def test_a_progress_plan_that_fails_never_stops_the_run(tmp_path, capsys, monkeypatch):
    from types import SimpleNamespace

    from isotropy.workflow import run

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # a user's own: started() adds nothing

    class BrokenDag:
        def needrun_jobs(self):
            raise RuntimeError("no jobs today")

    workflow = SimpleNamespace(dag=BrokenDag(), dag_settings=SimpleNamespace(targets={"all"}))
    run.started(workflow, {"device": "cpu"})
    assert capsys.readouterr().err == "run progress lines off: RuntimeError: no jobs today\n"
    assert (tmp_path / "logs/effective-config/all.yaml").is_file()
