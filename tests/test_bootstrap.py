"""The deprecated within-run block bootstrap (isotropy.bootstrap), kept only for the sensitivity
table until it switches to the interval over seeds: its resampling mechanics and degenerate cases.

The width tests that assumed noise within a run are gone (issue 31): a run is deterministic given
its seed, so this resampling is no confidence interval. The seed-level interval's coverage is
tested in tests/test_seed_interval_coverage.py."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from isotropy.bootstrap import (
    BootstrapSettings,
    block_length_for,
    correlation_intervals,
    describe,
    resample_indices,
)
from isotropy.summaries import correlation_table


def test_exact_linear_runs_have_zero_spread():
    steps = np.arange(50, dtype=float)
    runs = [(steps * (1 + k), 3 * steps * (1 + k) - 2) for k in range(3)]
    interval = correlation_intervals(runs, BootstrapSettings(resamples=200, block_length=5))
    assert interval == {
        "pearson_r_ci_low": pytest.approx(1.0),
        "pearson_r_ci_high": pytest.approx(1.0),
        "spearman_rho_ci_low": pytest.approx(1.0),
        "spearman_rho_ci_high": pytest.approx(1.0),
    }


def test_constant_series_give_no_interval():
    interval = correlation_intervals(
        [(np.ones(20), np.arange(20.0))], BootstrapSettings(resamples=50)
    )
    assert all(math.isnan(value) for value in interval.values())


def test_resamples_keep_blocks_and_draw_whole_seeds():
    settings = BootstrapSettings(resamples=300, block_length=4, seed=3)
    draws = resample_indices([10, 10], settings, np.random.default_rng(0))
    for draw in draws:
        assert len(draw) == 20
        for half in (draw[:10], draw[10:]):
            run = half // 10
            assert (run == run[0]).all()  # a drawn half comes from one seed
            assert (np.diff(half[:4]) == 1).all()  # a block is consecutive steps
    # both seeds appear twice in some resamples: seeds are drawn with replacement
    assert any((draw // 10 == 0).all() or (draw // 10 == 1).all() for draw in draws)


def test_default_block_length_and_description():
    settings = BootstrapSettings()
    assert block_length_for(1001, settings) == 11  # ceil(1001 ** (1/3))
    assert block_length_for(2, BootstrapSettings(block_length=5)) == 2
    assert describe(settings, 101, 5) == (
        "95% bootstrap over seeds and blocks of 5 recorded steps, 1000 resamples"
    )
    with pytest.raises(ValueError, match="level"):
        BootstrapSettings(level=1.5)


def test_correlation_table_adds_the_old_columns_only_when_asked():
    rng = np.random.default_rng(4)
    frames = []
    for seed in range(3):
        iso = np.cumsum(rng.standard_normal(40))
        frames.append(
            pd.DataFrame(
                {
                    "seed": seed,
                    "step": np.arange(40),
                    "isoscore": iso,
                    "silhouette": -iso + rng.standard_normal(40),
                    "encoder": "e",
                    "dataset": "d",
                }
            )
        )
    traces = pd.concat(frames)
    assert "ci" not in correlation_table(traces, by=["encoder", "dataset"]).columns
    table = correlation_table(
        traces, by=["encoder", "dataset"], bootstrap=BootstrapSettings(resamples=300)
    )
    assert list(table["scope"]) == ["all", "seed0", "seed1", "seed2"]
    for name in ("pearson_r", "spearman_rho"):
        assert (table[f"{name}_ci_low"] <= table[name] + 1e-12).all()
        assert (table[name] <= table[f"{name}_ci_high"] + 1e-12).all()
    assert table["ci"].iloc[0].startswith("95% bootstrap over seeds and blocks")
