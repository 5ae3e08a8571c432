"""Bootstrap intervals of correlations against cases with a known answer: the large-sample
(Fisher z) width for iid normal pairs, Bartlett's variance inflation for autocorrelated series,
and zero spread for exact linear runs."""

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


def _width(interval: dict, name: str = "pearson_r") -> float:
    return interval[f"{name}_ci_high"] - interval[f"{name}_ci_low"]


def test_iid_pairs_match_the_fisher_z_interval():
    # n iid bivariate normal pairs with correlation rho: atanh(r) ~ N(atanh(rho), 1/(n-3)).
    n, rho = 2000, 0.5
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n)
    y = rho * x + math.sqrt(1 - rho**2) * rng.standard_normal(n)
    r = np.corrcoef(x, y)[0, 1]
    z = 1.959964 / math.sqrt(n - 3)
    expected = math.tanh(math.atanh(r) + z) - math.tanh(math.atanh(r) - z)
    settings = BootstrapSettings(resamples=2000, block_length=1, seed=0)
    interval = correlation_intervals([(x, y)], settings)
    assert _width(interval) == pytest.approx(expected, rel=0.12)
    assert interval["pearson_r_ci_low"] < rho < interval["pearson_r_ci_high"]
    assert interval["spearman_rho_ci_low"] < interval["spearman_rho_ci_high"]


def _ar1(n: int, phi: float, rng: np.random.Generator) -> np.ndarray:
    noise = rng.standard_normal(n)
    series = np.empty(n)
    series[0] = noise[0] / math.sqrt(1 - phi**2)
    for t in range(1, n):
        series[t] = phi * series[t - 1] + noise[t]
    return series


def test_blocks_widen_the_interval_as_autocorrelation_requires():
    # Two independent AR(1) series with coefficient phi: Var(r) ~ (1 + phi^2) / (n (1 - phi^2))
    # (Bartlett 1935), i.e. sqrt(1.64 / 0.36) = 2.13 times the iid standard error at phi = 0.8.
    # Resampling single steps misses this; blocks much longer than the memory recover it.
    n, phi = 4000, 0.8
    rng = np.random.default_rng(2)
    x, y = _ar1(n, phi, rng), _ar1(n, phi, rng)
    iid = correlation_intervals([(x, y)], BootstrapSettings(resamples=600, block_length=1))
    blocks = correlation_intervals([(x, y)], BootstrapSettings(resamples=600, block_length=60))
    expected = 2 * 1.959964 * math.sqrt((1 + phi**2) / (n * (1 - phi**2)))
    assert _width(blocks) == pytest.approx(expected, rel=0.2)
    assert _width(blocks) / _width(iid) == pytest.approx(
        math.sqrt((1 + phi**2) / (1 - phi**2)), rel=0.25
    )


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


def test_correlation_table_carries_intervals_around_its_estimates():
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
    table = correlation_table(
        pd.concat(frames), by=["encoder", "dataset"], bootstrap=BootstrapSettings(resamples=300)
    )
    assert list(table["scope"]) == ["all", "seed0", "seed1", "seed2"]
    for name in ("pearson_r", "spearman_rho"):
        assert (table[f"{name}_ci_low"] <= table[name] + 1e-12).all()
        assert (table[name] <= table[f"{name}_ci_high"] + 1e-12).all()
    assert table["ci"].iloc[0].startswith("95% bootstrap over seeds and blocks")
    assert "seeds" not in table["ci"].iloc[1]
