"""The measured costs as data (config/costs.csv, isotropy.costs): every number with the date,
machine and command that measured it, and a table that says less refused."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd
import pytest
from tiny_workflow import load_script

from isotropy import costs, estimate, studies
from isotropy.extensions import design
from isotropy.studies import paper_cost
from isotropy.workflow.config import load_config


def test_every_measured_cost_says_when_where_and_how_it_was_measured():
    costs.read_costs()  # refuses a row without its date, machine or command (planted below)
    # every data set counted has a cost per update: full metrics, or on a sample (GLUE's)
    sampled = {dataset for _, dataset in paper_cost.SAMPLED_UPDATE_CPU_SECONDS}
    updated = set(costs.by_dataset("update_cpu_seconds")) | sampled
    assert set(paper_cost.MIRROR_UNIQUE_TEXTS) == updated
    # every main setup's data set has both costs a run of it is estimated from
    setups = load_config([str(costs.COSTS_TABLE.parents[1] / "config.yaml")]).settings.main.setups
    for quantity in ("update_cpu_seconds", "evaluation_cpu_seconds"):
        assert set(setups) <= set(costs.by_dataset(quantity)), quantity


def _planted(tmp_path: Path, **change: str) -> Path:
    table = pd.read_csv(costs.COSTS_TABLE, dtype=str, keep_default_na=False)
    table.loc[0, list(change)] = list(change.values())
    table.to_csv(path := tmp_path / "costs.csv", index=False)
    return path


@pytest.mark.parametrize(
    "change, named",
    [
        ({"command": ""}, "no command"),
        ({"machine": " "}, "no machine"),
        ({"measured": "yesterday"}, "line 2: Invalid isoformat string: 'yesterday'"),
        ({"value": "fast"}, "could not convert string to float: 'fast'"),
        ({"value": "nan"}, "not a finite positive number"),
        ({"dataset": "snli"}, "measured twice"),
    ],
)
def test_a_cost_without_its_record_is_refused(tmp_path, change, named):
    with pytest.raises(ValueError, match=named):
        costs.read_costs(_planted(tmp_path, **change))


def _without(monkeypatch, drop) -> None:
    """The costs table without the rows ``drop`` selects, as the estimate reads it."""
    rows = tuple(c for c in costs.measured_costs() if not drop(c))
    monkeypatch.setattr(costs, "measured_costs", lambda: rows)


def _extensions_config():
    root = Path(__file__).resolve().parents[1]
    return load_config([str(root / "config.yaml"), str(root / "config" / "offline.yaml")])


def test_the_extension_costs_are_rows_of_the_table():
    config, settings = _extensions_config()
    for dataset in config["extensions"]["setups"]:
        for head in design.heads(settings.extensions):
            assert design.run_cost(dataset, head) == (
                costs.by_model("extensions_update_cpu_seconds")[(head, dataset)],
                costs.by_model("extensions_evaluation_cpu_seconds")[(head, dataset)],
            )
    # at the measured item count: the start-up, the updates and the evaluations (the first too)
    section = config["extensions"]
    assert section["items"] == costs.value("extensions_benchmark_items")
    per_update, per_evaluation = design.run_cost("polarity", "linear")
    evaluations = 1 + math.ceil(section["updates"] / section["metric_stride"])
    expected = design.RUN_STARTUP_SECONDS + section["updates"] * per_update
    expected += evaluations * per_evaluation
    assert design.run_seconds(settings, "polarity", "linear") == pytest.approx(expected)


HALF = ("extensions_evaluation_cpu_seconds", "deep2", "snli")  # a run measured by half


@pytest.mark.parametrize(
    "missing", ["extensions_heldout_train_cpu_seconds", "extensions_benchmark_items", HALF]
)
def test_a_missing_extension_cost_row_is_a_clear_error(monkeypatch, missing):
    _without(
        monkeypatch,
        lambda c: missing in (c["quantity"], (c["quantity"], c["model"], c["dataset"])),
    )
    named = "no extensions_evaluation_cpu_seconds row for model 'deep2', dataset 'snli'"
    if missing != HALF:
        named = f"0 rows of '{missing}'"
    config = _extensions_config().settings
    with pytest.raises(KeyError, match=named):
        design.heldout_seconds(config) + design.run_seconds(config, "snli", "deep2")


@pytest.mark.parametrize(
    "change", [{"quantity": "update_seconds"}, {"dataset": ""}, {"model": "someone/model"}]
)
def test_a_cost_under_a_wrong_name_or_not_measured_is_named_by_the_estimate(
    tmp_path, monkeypatch, change
):
    """Row 0 (polarity's per-update cost) under an unknown quantity, without its data set or
    for a model, and head deep3 measured not at all: the table is read, and the estimate names
    the runs without a measured cost rather than guessing (the table does not list quantities)."""
    rows = costs.read_costs(_planted(tmp_path, **change))
    deep3 = [c for c in rows if c["quantity"].startswith("extensions_") and c["model"] == "deep3"]
    rows = tuple(c for c in rows if c not in deep3)
    monkeypatch.setattr(costs, "measured_costs", lambda: rows)
    monkeypatch.setattr(costs, "speed_probe", lambda: costs.PROBE_CPU_SECONDS)
    config = _extensions_config().settings
    main = {"study": "main", "encoder": "miniLM", "dataset": "polarity", "seed": "0"}
    jobs = [("optimize_embeddings", main)] + [
        (
            "extensions_optimize",
            {"dataset": r["dataset"], "head": r["head"], "seed": str(r["seed"])},
        )
        for r in studies.extensions.runs(config)
    ]
    lines, _ = estimate.describe(config, jobs, "cpu", "x")
    named = next(line for line in lines if line.startswith("no measured cost for "))
    assert named.startswith(
        "no measured cost for optimize_embeddings main/miniLM/polarity/0, "
        "extensions_optimize polarity/deep3/0, "
    )
    assert "extensions_optimize snli/deep3/0" in named and "linear" not in named


def test_the_extension_benchmark_prints_the_table_rows():
    """benchmarks/extensions_cost.py prints rows to paste over the table's extensions_* rows:
    given the table's own numbers and machine, it prints those rows exactly."""
    benchmark = load_script("benchmarks/extensions_cost.py")
    with costs.COSTS_TABLE.open(encoding="utf-8", newline="") as handle:
        table = [r for r in csv.reader(handle) if r[0].startswith("extensions_")]
    updates = costs.by_model("extensions_update_cpu_seconds")
    evaluations = costs.by_model("extensions_evaluation_cpu_seconds")
    run_cost = {(d, h): (u, evaluations[(h, d)]) for (h, d), u in updates.items()}
    held = {
        "train_sentence_epoch": costs.value("extensions_heldout_train_cpu_seconds"),
        "scored_sentence": costs.value("extensions_heldout_score_cpu_seconds"),
    }
    rows = benchmark.table_rows(
        run_cost,
        held,
        updates=10,
        items=int(costs.value("extensions_benchmark_items")),
        sentences=128,
        heldout=_extensions_config().config["extensions"]["heldout"],
        machine=table[0][6],
        today=table[0][5],
    )
    assert [[str(value) for value in row] for row in rows] == table
    assert "torch" not in benchmark.__dict__  # imported where the measuring needs it
