"""The geometry and I-STAR studies' time estimates (isotropy.geometry.cost,
isotropy.studies.istar): printed for the offline and tiny configurations from the measured
costs, what is done already counted out, and a missing cost named. Fast, no network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from isotropy import costs, estimate, paths
from isotropy.geometry import cost as geometry_cost
from isotropy.studies import istar as istar_spec
from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = [str(ROOT / "config.yaml"), str(ROOT / "config" / "offline.yaml")]
TINY = [*OFFLINE, str(ROOT / "tests" / "config" / "tiny.yaml")]
DURATION = re.compile(r"time left: about \d+(\.\d+)? (s|min|h)")
# the measuring host's speed, 2 idle cores, no start-ups: the costs as measured
IDLE = costs.Pace(speed=1.0, cores=2, job_overhead=0.0)


@pytest.mark.parametrize("configs", [OFFLINE, TINY], ids=["offline", "tiny"])
@pytest.mark.parametrize("target", ["geometry_study", "istar_study"])
def test_each_study_prints_a_duration(target, configs, capsys):
    assert estimate.main(["--configfile", *configs, "--target", target]) == 0
    out = capsys.readouterr().out
    assert f"{target}: " in out and DURATION.search(out), out
    assert "no time estimate" not in out and "no measured cost" not in out


def test_the_offline_istar_grid_is_said_to_be_gpu_scale():
    config = load_config(OFFLINE)
    lines, total = istar_spec.estimate(config, "cpu", IDLE)
    assert total > 1000 * 3600
    assert any(line.startswith("a GPU-scale grid") for line in lines)


def test_a_done_job_is_counted_out(tmp_path):
    config = load_config(TINY)
    planned = geometry_cost.jobs(config)
    kwargs = {"final_files": []}
    _, before = geometry_cost.describe(config, "cpu", IDLE, workdir=tmp_path, **kwargs)
    label, out, seconds = planned[0]
    (tmp_path / out).parent.mkdir(parents=True)
    (tmp_path / out).write_text("")
    lines, after = geometry_cost.describe(config, "cpu", IDLE, workdir=tmp_path, **kwargs)
    assert after == pytest.approx(before - seconds / 2)
    assert f"1 of {len(planned)} costed jobs done" in lines[1]
    run = paths.istar_run_file("metrics.json", "miniLM", "sst2", "none", "0", 0)
    (tmp_path / run).parent.mkdir(parents=True)
    (tmp_path / run).write_text("{}")
    lines, _ = istar_spec.estimate(config, "cpu", IDLE, workdir=tmp_path)
    assert "1 of 5 runs done" in lines[1]


def test_a_model_without_a_cost_is_named(monkeypatch):
    config = load_config(TINY)
    monkeypatch.delitem(geometry_cost.MODEL_SHAPE, "miniLM")
    monkeypatch.delitem(costs.MODEL_SIZE_FACTOR, "miniLM")
    lines, _ = geometry_cost.describe(config, "cpu", IDLE, final_files=[])
    assert lines[-1].startswith("no measured cost for token embeddings miniLM/polarity")
    lines, _ = istar_spec.estimate(config, "cpu", IDLE)
    assert lines[-1] == "no measured cost for miniLM/sst2: not included above"


def test_a_missing_cost_row_is_a_clear_error(monkeypatch):
    rows = tuple(
        c
        for c in costs.measured_costs()
        if c.quantity != "geometry_lid_cpu_seconds_per_layer_token"
    )
    monkeypatch.setattr(costs, "measured_costs", lambda: rows)
    with pytest.raises(KeyError, match="0 rows of 'geometry_lid_cpu_seconds_per_layer_token'"):
        geometry_cost.jobs(load_config(TINY))


def test_the_geometry_and_istar_rows_validate():
    quantities = {c.quantity for c in costs.read_costs()}
    assert {q for q in costs.QUANTITIES if q.startswith("geometry_")} <= quantities
