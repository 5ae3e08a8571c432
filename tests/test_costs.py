"""The measured costs as data (config/costs.csv, isotropy.costs): every number with the date,
machine and command that measured it, and a table that says less refused."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from isotropy import costs, estimate


def test_every_measured_cost_says_when_where_and_how_it_was_measured():
    rows = costs.read_costs()
    assert {row.quantity for row in rows} == set(costs.QUANTITIES)
    for row in rows:
        assert row.measured.startswith("2026-") and row.machine and row.command, row
    # The estimate's numbers are the table's.
    assert estimate.CPU_SECONDS["polarity"] == (
        costs.by_dataset("update_cpu_seconds")["polarity"],
        costs.by_dataset("evaluation_cpu_seconds")["polarity"],
    )
    assert estimate.PROBE_CPU_SECONDS == costs.value("probe_cpu_seconds")
    assert set(estimate.MIRROR_UNIQUE_TEXTS) == set(estimate.CPU_SECONDS)


def _planted(tmp_path: Path, **change: str) -> Path:
    rows = list(csv.DictReader(costs.COSTS_TABLE.open(encoding="utf-8")))
    rows[0].update(change)
    path = tmp_path / "costs.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=costs.COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize(
    "change, named",
    [
        ({"command": ""}, "no command"),
        ({"machine": " "}, "no machine"),
        ({"measured": "yesterday"}, "is not a date"),
        ({"value": "fast"}, "is not a number"),
        ({"value": "nan"}, "not a finite positive number"),
        ({"quantity": "update_seconds"}, "unknown quantity"),
        ({"dataset": ""}, "needs a dataset"),
        ({"model": "someone/model"}, "takes no model"),
        ({"dataset": "snli"}, "measured twice"),
    ],
)
def test_a_cost_without_its_record_is_refused(tmp_path, change, named):
    with pytest.raises(ValueError, match=named):
        costs.read_costs(_planted(tmp_path, **change))
