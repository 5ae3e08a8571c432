"""Regression baseline: every table of the tiny end-to-end run equals the stored golden files.

Refactors must leave results untouched; this test proves it. A change that is meant to move
numbers regenerates the golden files on purpose (see tests/golden_tables.py) and the diff of
tests/golden/ is reviewed with it.
"""

import os

import golden_tables
import pytest


@pytest.mark.slow
def test_every_table_equals_its_golden_file(tiny_run):
    workdir, _, _ = tiny_run
    tables = golden_tables.result_tables(workdir)
    if os.environ.get(golden_tables.UPDATE_ENV):
        golden_tables.write_golden(tables)
        pytest.skip(
            f"golden files rewritten from {workdir}: review `git diff tests/golden/` before committing"
        )
    golden = golden_tables.golden_tables()
    assert golden, (
        f"no golden files in {golden_tables.GOLDEN}; create them with {golden_tables.UPDATE_ENV}=1"
    )
    missing, extra = sorted(set(golden) - set(tables)), sorted(set(tables) - set(golden))
    assert not missing and not extra, (
        f"tables missing from the run: {missing}; tables without a golden file: {extra}"
    )
    problems = [
        p for name in golden for p in golden_tables.differences(name, golden[name], tables[name])
    ]
    assert not problems, "results differ from the golden files:\n" + "\n".join(problems[:40])


def test_the_comparison_catches_what_it_must_and_only_that():
    import pandas as pd

    golden = pd.DataFrame(
        {"dataset": ["rte", "wnli"], "items": [80, 80], "pearson_r": [0.123456789, -0.5]}
    )
    assert golden_tables.differences("t.csv", golden, golden.copy()) == []
    jitter = golden.assign(pearson_r=golden["pearson_r"] * (1 + 1e-9))  # last bits: another BLAS
    assert golden_tables.differences("t.csv", golden, jitter) == []
    moved = golden.assign(pearson_r=[0.1235, -0.5])
    assert "column 'pearson_r'" in golden_tables.differences("t.csv", golden, moved)[0]
    relabelled = golden.assign(dataset=["rte", "mnli"])
    assert golden_tables.differences("t.csv", golden, relabelled) == [
        "t.csv, column 'dataset', row 1: 'mnli', golden 'wnli' (1 rows differ)"
    ]
    assert "rows" in golden_tables.differences("t.csv", golden, golden.iloc[:1])[0]
    assert "columns" in golden_tables.differences("t.csv", golden, golden.drop(columns="items"))[0]
