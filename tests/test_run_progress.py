"""The whole run's progress: one line per finished job with the done share and the time left."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

import pytest
import tiny_workflow
import yaml

from isotropy import costs, estimate
from isotropy.studies import paper_cost
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
    )
    settings = targets.optimisation_settings(config, "preview", "polarity", 0)
    overhead = costs.JOB_OVERHEAD_SECONDS
    assert planned[5].seconds == paper_cost.run_seconds("polarity", settings, "cpu") + overhead
    assert planned[5].label == "optimize_embeddings preview/miniLM/polarity/0"
    snli = paper_cost.embedding_seconds(config, "miniLM", "snli", ROOT / "no-such-dir")
    assert planned[6].seconds == snli + overhead
    assert planned[7].seconds == overhead


@pytest.mark.slow
def test_snakemake_reports_finished_jobs_to_the_handler(tmp_path):
    """Snakemake 9 logs each finished job on its logger; the handler that onstart attaches (as
    rules/common.smk does) sees them all and prints one line for each. The run, not its dry
    run, records the effective configuration of its target."""
    tiny_workflow.write_started_snakefile(
        tmp_path,
        """
        rule all:
            input: "b.txt"

        rule a:
            output: "a.txt"
            shell: "echo a > {output}"

        rule b:
            input: "a.txt"
            output: "b.txt"
            shell: "cat {input} > {output}"
        """,
    )
    command = ["all", "--cores", "1"]
    dry = tiny_workflow.snakemake_in(tmp_path, *command, "-n")
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "run: " not in dry.stderr and not (tmp_path / "logs").exists()  # a dry run: nothing
    result = tiny_workflow.snakemake_in(tmp_path, *command)
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

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # a user's own: started() adds nothing

    class BrokenDag:
        def needrun_jobs(self):
            raise RuntimeError("no jobs today")

    workflow = SimpleNamespace(dag=BrokenDag(), dag_settings=SimpleNamespace(targets={"all"}))
    estimate.started(workflow, {"device": "cpu"})
    assert capsys.readouterr().err == "run progress lines off: RuntimeError: no jobs today\n"
    assert (tmp_path / "logs/effective-config/all.yaml").is_file()


OFFLINE = [ROOT / "config.yaml", ROOT / "config" / "offline.yaml"]
TINY = [*OFFLINE, ROOT / "tests" / "config" / "tiny.yaml"]
# The offline I-STAR grid names tasks the mirror lacks (qnli, ...): its dry run stops there.
MIRROR_TASKS = {"istar": {"tasks": ["sst2", "rte", "mrpc", "cola"]}}


def _seconds(printed: str) -> float:
    """The seconds of a duration as isotropy.logs.duration writes it (within its rounding)."""
    if match := re.fullmatch(r"(\d+) h (\d+) min", printed):
        return 3600 * int(match.group(1)) + 60 * int(match.group(2))
    number, unit = printed.split()
    return float(number) * (60 if unit == "min" else 1)


@pytest.mark.parametrize(
    ("target", "configs", "overlay"),
    [
        ("extensions_study", OFFLINE, None),
        ("geometry_study", OFFLINE, None),
        ("rajaee_cls_study", OFFLINE, None),
        ("istar_study", OFFLINE, MIRROR_TASKS),
        ("extensions_study", TINY, None),
        ("geometry_study", TINY, None),
        ("istar_study", TINY, None),
    ],
)
def test_the_run_plans_each_study_as_its_printed_estimate(
    target, configs, overlay, tmp_path, monkeypatch, capsys
):
    """The jobs a run plans (isotropy.estimate.plan, weighed by JOB_COSTS) add up to the total
    the estimate printed for them before the run, on 2 idle cores at the measured speed, within
    the printed duration's rounding (2 significant digits): one job list, one cost per job.
    Before JOB_COSTS, the plan costed the extension study's runs as start-ups only: 7.5 min
    against the printed 57."""
    files = [*configs]
    if overlay:
        files.append(tmp_path / "overlay.yaml")
        files[-1].write_text(yaml.safe_dump(overlay))
    workdir = tmp_path / "work"
    tiny_workflow.require_mirror()
    jobs = estimate.dry_run_jobs([str(f) for f in files], target, workdir)
    config = workflow_config.load_config([str(f) for f in files])
    planned = estimate.plan(
        config, [(i, rule, wildcards) for i, (rule, wildcards) in enumerate(jobs)]
    )
    monkeypatch.chdir(workdir)  # the estimate counts what is written in the working directory
    monkeypatch.setattr(costs, "speed_probe", lambda: costs.PROBE_CPU_SECONDS)
    monkeypatch.setattr(costs, "available_cores", lambda: 2)
    monkeypatch.setattr(costs, "recent_load", lambda: 0.0)
    capsys.readouterr()
    assert estimate.main(["--configfile", *map(str, files), "--target", target]) == 0
    out = capsys.readouterr().out
    printed = _seconds(re.search(r"time left: about (\d+ h \d+ min|[\d.]+ (?:s|min))", out)[1])
    plan_total = sum(job.seconds for job in planned.values())
    assert abs(plan_total - printed) <= 0.02 * printed, (plan_total, printed, out)
    assert any(job.rule in estimate.JOB_COSTS for job in planned.values())
