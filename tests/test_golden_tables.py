"""Regression baseline: every table of the tiny end-to-end run equals the stored golden files.

Refactors must leave results untouched; this test proves it. A change that is meant to move
numbers regenerates the golden files on purpose (see tests/golden_tables.py) and the diff of
tests/golden/ is reviewed with it.
"""

import os
from pathlib import Path

import golden_recompute
import golden_tables
import numpy as np
import pandas as pd
import pytest
import tiny_workflow
import yaml


@pytest.mark.slow
def test_every_table_equals_its_golden_file(tiny_run):
    workdir, command, _ = tiny_run
    tables = golden_tables.result_tables(workdir)
    if os.environ.get(golden_tables.UPDATE_ENV):
        golden_tables.write_golden(tables)
        pytest.skip(
            f"golden files rewritten from {workdir}: "
            "review `git diff tests/golden/` before committing"
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
    config = yaml.safe_load(Path(command[command.index("--configfile") + 1]).read_text())
    problems = [
        p
        for name, table in tables.items()
        for checker, columns in golden_tables.recomputed_columns(name, list(table.columns)).items()
        for p in golden_recompute.CHECKERS[checker](workdir, name, table, columns, config)
    ]
    assert not problems, "recomputed columns disagree with the run's:\n" + "\n".join(problems[:40])


@pytest.mark.slow
def test_goldens_are_compared_across_thread_counts_in_ci(tiny_run):
    """CI (.ci/run) makes the shared tiny run with one thread per job, the golden files were
    written with the defaults: the comparison above is then made across thread counts."""
    written = yaml.safe_load(golden_tables.WRITTEN_WITH.read_text())
    now = golden_tables.machine_state()
    if not tiny_workflow.IN_CI:
        pytest.skip(f"outside CI the tiny run's threads are the caller's: {now}, golden {written}")
    assert now["ISOTROPY_TINY_RUN_THREADS"] != (written["ISOTROPY_TINY_RUN_THREADS"] or ""), (
        f"under CI the tiny run must use another thread count than the golden files' {written}: "
        f"set ISOTROPY_TINY_RUN_THREADS (.ci/run)"
    )


def test_every_golden_column_is_declared_and_every_checker_exists():
    precision = golden_tables.Precision.load()
    tables = golden_tables.golden_tables()
    assert len(tables) >= 29
    for name, table in tables.items():
        kinds = precision.kinds(name, list(table.columns))
        assert set(kinds) == set(table.columns)
        for checker in golden_tables.recomputed_columns(name, list(table.columns), precision):
            assert checker in golden_recompute.CHECKERS, (name, checker)


def test_an_undeclared_table_or_column_is_an_error(tmp_path):
    declaration = tmp_path / "precision.yaml"
    declaration.write_text(
        "tolerances: {float32: 7.6e-6, float64: 1.0e-10}\n"
        "tables:\n  'results/t.csv': {a: exact, 'b*': float32}\n"
    )
    precision = golden_tables.Precision.load(declaration)
    table = pd.DataFrame({"a": [1], "b1": [0.5]})
    assert golden_tables.differences("results/t.csv", table, table, precision) == []
    with pytest.raises(ValueError, match=r"results/t.csv: columns \['c'\] are not declared"):
        golden_tables.differences("results/t.csv", table.assign(c=1), table.assign(c=1), precision)
    with pytest.raises(ValueError, match="no entry under `tables` matches results/u.csv"):
        golden_tables.differences("results/u.csv", table, table, precision)
    declaration.write_text(declaration.read_text().replace("exact", "roughly"))
    with pytest.raises(ValueError, match="unknown kind 'roughly'"):
        golden_tables.Precision.load(declaration)


def test_a_1e_4_change_of_a_primary_float32_column_fails_and_thread_noise_passes():
    """On the real golden files: a trace's columns (float32 metrics of float32 logits), with
    thread-count noise as measured: up to 10 epsilons of the column's largest value."""
    name = "results/main/miniLM/polarity/seed0/trace.csv"
    golden = golden_tables.golden_tables()[name]
    assert golden_tables.differences(name, golden, golden.copy()) == []
    eps = float(np.finfo(np.float32).eps)
    for column in ("isoscore", "silhouette", "loss"):
        values = golden[column].to_numpy()
        noise = (
            values
            + np.random.default_rng(0).uniform(-10, 10, len(values)) * eps * np.abs(values).max()
        )
        assert golden_tables.differences(name, golden, golden.assign(**{column: noise})) == []
        problems = golden_tables.differences(
            name, golden, golden.assign(**{column: values * (1 + 1e-4)})
        )
        assert len(problems) == 1 and f"column {column!r} (float32)" in problems[0], problems
        one = values.copy()  # one typical value moved by 1e-4: caught, its row named
        i = int(np.argsort(np.abs(values))[len(values) // 2])
        one[i] *= 1 + 1e-4
        problems = golden_tables.differences(name, golden, golden.assign(**{column: one}))
        assert problems and f"worst row {i}:" in problems[0], problems
    # a recomputed column is not compared with its golden value: the checker guards it
    name = "results/main/correlations.csv"
    golden = golden_tables.golden_tables()[name]
    moved = golden.assign(spearman_rho_seed_low=golden["spearman_rho_seed_low"] + 4e-6)
    assert golden_tables.differences(name, golden, moved) == []
    assert golden_tables.differences(
        name, golden, golden.assign(pearson_r=golden["pearson_r"] * (1 + 1e-4))
    )


def test_the_correlation_checker_recomputes_the_package_table_and_catches_a_change(tmp_path):
    """golden_recompute's independent implementation against isotropy.summaries on traces like
    the tiny run's: equal to 1e-12; a bound moved by 1e-9 is caught."""
    from isotropy.summaries import correlation_table

    rng = np.random.default_rng(3)
    frames = []
    for seed in (0, 1):
        steps = np.arange(13)
        trace = pd.DataFrame(
            {
                "seed": seed,
                "step": steps,
                "isoscore": (0.18 - 0.004 * steps + rng.normal(0, 0.002, 13)).astype(np.float32),
                "silhouette": (0.007 + 0.005 * steps + rng.normal(0, 0.003, 13)).astype(np.float32),
            }
        )
        folder = tmp_path / f"results/main/miniLM/polarity/seed{seed}"
        folder.mkdir(parents=True)
        trace.to_parquet(folder / "trace.parquet")
        frames.append(trace.assign(encoder="miniLM", dataset="polarity"))
    config = {}
    table = correlation_table(pd.concat(frames), by=["encoder", "dataset"])
    name = "results/main/correlations.csv"
    columns = golden_tables.recomputed_columns(name, list(table.columns))["correlations"]
    assert len(columns) == 7  # spearman_rho; both correlations' seed mean, low and high
    assert golden_recompute.correlations(tmp_path, name, table, columns, config) == []
    moved = table.copy()
    moved.loc[0, "pearson_r_seed_low"] += 1e-9
    problems = golden_recompute.correlations(tmp_path, name, moved, columns, config)
    assert len(problems) == 1 and "column 'pearson_r_seed_low'" in problems[0]
    moved = table.copy()
    moved.loc[1, "spearman_rho"] -= 1e-9  # a per-seed row
    assert (
        "polarity seed0, column 'spearman_rho'"
        in golden_recompute.correlations(tmp_path, name, moved, columns, config)[0]
    )
    with pytest.raises(ValueError, match="cannot recompute"):
        golden_recompute.correlations(tmp_path, name, table, ["points"], config)


# Declarations for the synthetic tables below (the real ones: tests/golden/precision.yaml).
SYNTHETIC = golden_tables.Precision(
    {"t.csv": {"dataset": "exact", "items": "exact", "pearson_r": "float32", "r": "float64"}},
    golden_tables.Precision.load().tolerances,
)


GOLDEN = pd.DataFrame(
    {"dataset": ["rte", "wnli"], "items": [80, 80], "pearson_r": [0.123456789, -0.5]}
)
R = [0.8123456789012345, -0.31234567890123456, np.nan, np.inf]  # float64, NaN and inf exact


@pytest.mark.parametrize(
    "golden, run, found",
    [
        (GOLDEN, GOLDEN.assign(pearson_r=GOLDEN["pearson_r"] * (1 + 1e-7)), None),  # last bits
        (GOLDEN, GOLDEN.assign(pearson_r=[0.1235, -0.5]), "t.csv, column 'pearson_r' (float32)"),
        (
            GOLDEN,
            GOLDEN.assign(dataset=["rte", "mnli"]),
            "t.csv, column 'dataset', row 1: 'mnli', golden 'wnli' (1 rows differ)",
        ),
        (GOLDEN, GOLDEN.assign(items=[80, 81]), "t.csv, column 'items', row 1"),
        (GOLDEN, GOLDEN.iloc[:1], "t.csv: 1 rows, golden 2"),
        (GOLDEN, GOLDEN.drop(columns="items"), "t.csv: columns"),
        (pd.DataFrame({"r": R}), pd.DataFrame({"r": np.array(R) * (1 + 1e-13)}), None),
        (pd.DataFrame({"r": R}), pd.DataFrame({"r": [R[0] * (1 + 1e-8), *R[1:]]}), "'r' (float64)"),
        (pd.DataFrame({"r": R}), pd.DataFrame({"r": [*R[:2], 0.0, np.inf]}), "'r' (float64)"),
        (pd.DataFrame({"r": R}), pd.DataFrame({"r": [*R[:3], 1e300]}), "'r' (float64)"),
    ],
)
def test_the_comparison_catches_what_it_must_and_only_that(golden, run, found):
    golden = pd.read_csv(pd.io.common.StringIO(golden.to_csv(index=False)))  # as a file keeps it
    problems = golden_tables.differences("t.csv", golden, run, SYNTHETIC)
    if found is None:
        assert problems == []
    else:
        assert len(problems) == 1 and found in problems[0], problems


def test_the_sign_dependent_iw_is_held_to_its_bounds_not_to_a_golden_value(tmp_path):
    """I(W) with numpy's eigenvector signs moved 0.065 -> 0.054 between thread counts on the tiny
    run; its checker holds it in [sign-free I(W), 1] and finds a value outside."""
    name = "results/geometry/isotropy_by_layer.csv"
    table = pd.read_csv(golden_tables.GOLDEN / name)
    columns = golden_tables.recomputed_columns(name, list(table.columns))
    assert columns == {"layer_isotropy_signs": ["isotropy"]}
    check = golden_recompute.layer_isotropy_signs
    assert check(tmp_path, name, table, ["isotropy"], {}) == []
    moved = table.copy()
    moved.loc[3, "isotropy"] = 0.5 * moved.loc[3, "isotropy_sign_free"]  # below its bound
    moved.loc[5, "isotropy"] = 1.2  # above 1
    problems = check(tmp_path, name, moved, ["isotropy"], {})
    assert len(problems) == 2 and "layer 3" in problems[0] and "layer 5" in problems[1]
    with pytest.raises(ValueError, match="cannot recompute"):
        check(tmp_path, name, table, ["isotropy", "isotropy_centred"], {})


def test_the_condition_number_checker_recomputes_the_package_table_and_catches_a_change(tmp_path):
    """golden_recompute's numpy recomputation against isotropy.geometry.cosine_by_layer on
    LayerNorm-like token states (rank d - 1 once centred) stored as the run stores them: equal
    to 1e-12 and the same rank; a value moved by 1e-9 or a rank moved by one is caught."""
    from isotropy.embeddings.hidden_states import TokenEmbeddings
    from isotropy.geometry.layers import cosine_by_layer

    rng = np.random.default_rng(5)
    raw = rng.normal(size=(2, 120, 12)) * np.geomspace(1, 20, 12)
    normed = (raw - raw.mean(axis=2, keepdims=True)) / raw.std(axis=2, keepdims=True)
    embeddings = TokenEmbeddings(
        (normed * rng.uniform(0.5, 2, 12)).astype(np.float32),
        np.arange(120) % 30,
        np.array([f"t{i % 30}" for i in range(120)]),
        np.arange(120) // 10,
    )
    embeddings.save(tmp_path / "resources/geometry/m/c/token_embeddings.npz")
    table = cosine_by_layer(embeddings, model="m", corpus="c", k_range=(2, 3), progress=False)
    assert list(table["numerical_rank"]) == [11, 11]
    name = "results/geometry/m/c/seed0/cosine_by_layer.csv"
    columns = ["condition_number", "numerical_rank"]
    check = golden_recompute.CHECKERS["condition_numbers"]
    assert golden_tables.recomputed_columns(name, list(table.columns)) == {
        "condition_numbers": columns
    }
    assert check(tmp_path, name, table, columns, {}) == []
    moved = table.assign(condition_number=table["condition_number"] * (1 + 1e-9))
    assert len(check(tmp_path, name, moved, columns, {})) == 2
    ranked = table.assign(numerical_rank=table["numerical_rank"] + 1)
    assert len(check(tmp_path, name, ranked, columns, {})) == 2
