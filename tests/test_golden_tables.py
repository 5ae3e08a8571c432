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


def _through_csv(table):
    """A table as a run writes it and the golden files keep it (CSV text: no dtypes)."""
    import pandas as pd

    return pd.read_csv(pd.io.common.StringIO(table.to_csv(index=False)))


def test_float32_columns_allow_rounding_noise_but_not_a_change_of_1e_4():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    # Like pca_view.csv's pc3: float32 projections of scale ~6 crossing zero.
    pc = rng.normal(scale=2.0, size=200).astype(np.float32)
    golden = _through_csv(pd.DataFrame({"layer": 6, "pc3": pc, "token": "the"}))
    assert golden_tables.is_float32(golden["pc3"])
    eps = np.finfo(np.float32).eps
    scale = float(np.abs(pc).max())
    # Thread-count noise as measured (issue 21): up to 10 epsilons of the column's largest value,
    # in every row, near zero too (where it is 3e-4 relative: what rtol 1e-6 used to fail).
    noise = (pc + rng.uniform(-10, 10, size=pc.size) * eps * scale).astype(np.float32)
    assert (
        golden_tables.differences(
            "pca_view.csv", golden, pd.DataFrame({"layer": 6, "pc3": noise, "token": "the"})
        )
        == []
    )
    # A real change of 1e-4 relative: the whole column, or one typical value, is caught.
    scaled = (pc.astype(np.float64) * (1 + 1e-4)).astype(np.float32)
    problems = golden_tables.differences(
        "pca_view.csv", golden, pd.DataFrame({"layer": 6, "pc3": scaled, "token": "the"})
    )
    assert len(problems) == 1 and "column 'pc3' (float32)" in problems[0], problems
    one = pc.copy()
    i = int(np.argsort(np.abs(pc))[100])  # the median |value|
    one[i] = np.float32(pc[i] * (1 + 1e-4))
    problems = golden_tables.differences(
        "pca_view.csv", golden, pd.DataFrame({"layer": 6, "pc3": one, "token": "the"})
    )
    assert problems and f"worst row {i}:" in problems[0], problems
    # A float32 column read back from a trace's parquet keeps its dtype: the same slack.
    assert golden_tables.is_float32(pd.Series(pc))
    assert not golden_tables.is_float32(
        _through_csv(pd.DataFrame({"x": pc.astype(np.float64) / 3}))["x"]
    )


def test_float64_columns_and_special_values():
    import numpy as np
    import pandas as pd

    golden = _through_csv(
        pd.DataFrame({"r": [0.8123456789012345, -0.31234567890123456, np.nan, np.inf]})
    )
    assert not golden_tables.is_float32(golden["r"])
    same = golden.assign(r=golden["r"] * (1 + 1e-9))
    assert golden_tables.differences("t.csv", golden, same) == []
    for moved in ([0.8123456789012345 * (1 + 1e-4), -0.31234567890123456, np.nan, np.inf],
                  [0.8123456789012345, -0.31234567890123456, 0.0, np.inf],
                  [0.8123456789012345, -0.31234567890123456, np.nan, 1e300]):  # fmt: skip
        assert golden_tables.differences("t.csv", golden, pd.DataFrame({"r": moved})), moved
