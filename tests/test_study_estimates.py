"""The studies' time estimates (isotropy.estimate over the dry run's jobs): the measured costs
summed, what is done counted out, a missing cost named. No network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from isotropy import costs, estimate
from isotropy.configuration import Config
from isotropy.studies import istar as istar_spec
from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = [str(ROOT / "config.yaml"), str(ROOT / "config" / "offline.yaml")]
TINY = [*OFFLINE, str(ROOT / "tests" / "config" / "tiny.yaml")]
DURATION = re.compile(r"time left: about \d+(\.\d+)? (s|min|h)")
# the measuring host's speed, 2 idle cores, no start-ups: the costs as measured
IDLE = costs.Pace(speed=1.0, cores=2, job_overhead=0.0)


# The offline I-STAR grid names tasks the mirror lacks (qnli, ...): its dry run stops there.
MIRROR_TASKS = {"istar": {"tasks": ["sst2", "rte", "mrpc", "cola"]}}


def _files(configs, target, tmp_path):
    """``configs``, with the mirror's tasks for the offline I-STAR grid."""
    if target != "istar_study" or configs is TINY:
        return configs
    overlay = tmp_path / "tasks.yaml"
    overlay.write_text(yaml.safe_dump(MIRROR_TASKS))
    return [*configs, str(overlay)]


def _seconds(printed: str) -> float:
    """The seconds of a duration as isotropy.logs.duration writes it (within its rounding)."""
    if match := re.fullmatch(r"(\d+) h (\d+) min", printed):
        return 3600 * int(match.group(1)) + 60 * int(match.group(2))
    number, unit = printed.split()
    return float(number) * (60 if unit == "min" else 1)


@pytest.mark.parametrize(
    ("target", "configs"),
    [
        ("extensions_study", OFFLINE),
        ("geometry_study", OFFLINE),
        ("rajaee_cls_study", OFFLINE),
        ("istar_study", OFFLINE),
        ("geometry_study", TINY),
    ],
)
def test_each_study_prints_the_sum_of_its_jobs_costs(
    target, configs, capsys, tmp_path, monkeypatch
):
    """The printed total is the dry run's jobs, each at its record's cost (JOB_COSTS) or its
    start-up, on 2 idle cores at the measured speed, within the printed duration's rounding
    (2 significant digits): one job list, one cost per job, every study with costed jobs."""
    monkeypatch.setattr(costs, "speed_probe", lambda: costs.PROBE_CPU_SECONDS)
    monkeypatch.setattr(costs, "available_cores", lambda: 2)
    files = _files(configs, target, tmp_path)
    workdir = tmp_path / "work"  # nothing written here: every job is to run
    jobs = estimate.dry_run_jobs(files, target, workdir)
    config = load_config(files).settings
    idle = costs.Pace(1.0, 2, costs.JOB_OVERHEAD_SECONDS)
    short = idle.share(0.0, costs.JOB_THREADS)
    cost = estimate.JOB_COSTS
    expected = sum(cost[r](config, w, idle) if r in cost else short for r, w in jobs)
    assert any(rule in cost for rule, _ in jobs)
    monkeypatch.chdir(workdir)
    capsys.readouterr()
    assert estimate.main(["--configfile", *files, "--target", target]) == 0
    out = capsys.readouterr().out
    assert f"{target}: " in out and DURATION.search(out), out
    assert "no time estimate" not in out and "no measured cost" not in out
    # only the run records its configuration, so that `make report` describes what it made
    assert f"effective configuration in logs/effective-config/{target}.yaml when it" in out
    assert not (workdir / "logs").exists()
    printed = _seconds(re.search(r"time left: about (\d+ h \d+ min|[\d.]+ (?:s|min))", out)[1])
    assert abs(expected - printed) <= 0.02 * printed, (expected, printed, out)


def _istar_jobs(settings: Config):
    """The finetune jobs of the I-STAR grid, as the dry run names them."""
    keys = ("model", "task", "regulariser", "lam", "seed")
    return [("finetune", {k: str(r[k]) for k in keys}) for r in istar_spec.runs(settings.istar)]


def test_the_offline_istar_grid_is_said_to_be_gpu_scale():
    settings = load_config(OFFLINE).settings
    lines, total = estimate.describe(settings, _istar_jobs(settings), "cpu", "istar_study", IDLE)
    assert total > 1000 * 3600
    assert any(line.startswith("a GPU-scale run") for line in lines)


def test_a_model_without_a_cost_is_named(monkeypatch, tmp_path):
    settings = load_config(TINY).settings
    jobs = estimate.dry_run_jobs(TINY, "geometry_study", tmp_path)
    monkeypatch.delitem(costs.MODEL_SHAPE, "miniLM")
    lines, _ = estimate.describe(settings, jobs, "cpu", "geometry_study", IDLE)
    named = next(line for line in lines if line.startswith("no measured cost for "))
    # the dry run's job order is Snakemake's: name the job, not its place in the line
    assert "geometry_token_embeddings miniLM/polarity," in named
    lines, _ = estimate.describe(settings, _istar_jobs(settings), "cpu", "istar_study", IDLE)
    named = next(line for line in lines if line.startswith("no measured cost for "))
    assert named.startswith("no measured cost for finetune miniLM/sst2/")
    assert named.endswith(": not included above")
