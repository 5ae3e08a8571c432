"""Which states a run evaluates (step 0, every metric_stride-th update, the last): one definition,
isotropy.traces.evaluates, read by the optimisation, the trace checks and the costs."""

from pathlib import Path

import pytest

from isotropy import optimize, traces
from isotropy.extensions import design
from isotropy.optimize import OptimisationSettings
from isotropy.workflow import config as workflow_config

ROOT = Path(__file__).resolve().parents[1]
GRID = [(u, s) for u in (1, 2, 3, 7, 10, 50, 99, 100, 101) for s in (1, 2, 3, 10, 50, 100, 200)]


def test_the_schedule_is_step_0_every_stride_th_update_and_the_last():
    assert traces.evaluation_steps(10, 3) == [0, 3, 6, 9, 10]
    assert traces.evaluation_steps(9, 3) == [0, 3, 6, 9]  # the last is a multiple: once
    assert traces.evaluation_steps(5, 50) == [0, 5]  # a stride past the end: the ends only
    assert traces.evaluation_steps(4, 1) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("updates,stride", GRID)
def test_the_count_and_the_settings_follow_the_one_definition(updates, stride):
    steps = traces.evaluation_steps(updates, stride)
    assert steps == sorted(set(steps)) and steps[0] == 0 and steps[-1] == updates
    assert all(b - a <= stride for a, b in zip(steps, steps[1:]))
    assert traces.evaluation_count(updates, stride) == len(steps)
    settings = OptimisationSettings(updates=updates, metric_stride=stride, progress=False)
    assert [s for s in range(updates + 1) if settings.records(s)] == steps
    assert settings.evaluations == len(steps)


def test_the_optimisation_and_the_extension_costs_ask_the_one_definition(monkeypatch):
    # A changed schedule reaches every reader: none of them spells it again.
    monkeypatch.setattr(optimize, "evaluates", lambda step, updates, stride: step == 5)
    settings = OptimisationSettings(updates=10, metric_stride=3, progress=False)
    assert [s for s in range(11) if settings.records(s)] == [5]

    config, settings = workflow_config.load_config(
        [str(ROOT / "config.yaml"), str(ROOT / "config/offline.yaml")]
    )
    before = design.run_seconds(settings, "polarity", "linear")
    assert before is not None
    counted = []

    def count(updates, stride):
        counted.append((updates, stride))
        return traces.evaluation_count(updates, stride) + 100

    monkeypatch.setattr(design, "evaluation_count", count)
    section = config["extensions"]
    assert design.run_seconds(settings, "polarity", "linear") > before
    assert counted == [(section["updates"], section["metric_stride"])]
