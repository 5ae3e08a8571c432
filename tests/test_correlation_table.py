"""The optimisation correlation tables (correlations.csv, table3.csv): the pooled r and ρ, each
seed's values, the interval over seeds, one seed without an interval or a duplicate row, ±1
written as ±1, and the paper's printed r beside ours."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import seed_simulator as sim

from isotropy.statistics import seed_interval
from isotropy.summaries import correlation_table, exact_unit, with_paper_values
from isotropy.verdicts.comparison import read_published

BY = ["encoder", "dataset"]


def _run(seed, iso, sil, dataset="polarity", encoder="miniLM"):
    return pd.DataFrame(sim.trace_rows(seed, range(len(iso)), iso, sil, encoder, dataset))


def _falling(seed, n=26, dataset="polarity", encoder="miniLM"):
    rng = np.random.default_rng(seed)
    iso = np.exp(-np.arange(n) / (4 + seed)) + 0.01
    return _run(seed, iso, 0.4 - iso + 0.02 * rng.standard_normal(n), dataset, encoder)


def test_every_seed_the_pooled_value_and_the_interval_over_seeds():
    table = correlation_table(pd.concat([_falling(s) for s in range(4)]), BY)
    assert list(table["scope"]) == ["all", "seed0", "seed1", "seed2", "seed3"]
    pooled, seeds = table.iloc[0], table.iloc[1:]
    assert pooled["seeds"] == 4 and pooled["points"] == 4 * 26 and (seeds["points"] == 26).all()
    expected = seed_interval(seeds["pearson_r"])
    assert pooled["pearson_r_seed_low"] == pytest.approx(expected.low)
    assert pooled["pearson_r_seed_high"] == pytest.approx(expected.high)
    assert pooled["pearson_r_seed_mean"] == pytest.approx(expected.estimate)
    # Spearman: the median seed and the seeds' range, not a clipped interval on z (issue 47)
    assert pooled["spearman_rho_seed_mean"] == pytest.approx(np.median(seeds["spearman_rho"]))
    assert pooled["spearman_rho_seed_low"] == seeds["spearman_rho"].min()
    assert pooled["spearman_rho_seed_high"] == seeds["spearman_rho"].max()
    for name in ("pearson_r", "spearman_rho"):
        assert seeds[f"{name}_seed_low"].isna().all()  # a seed row is a value, not an interval
    assert pooled["interval"] == "95% t-interval over 4 seeds (Fisher z of per-seed values)"
    assert not pooled["seed_signs_disagree"]


def test_the_spearman_summary_does_not_move_with_the_stride():
    """Rejected: the Spearman interval set by the resolution clip, [−1.000, +0.397] at stride 1
    and [−0.99992, −0.075] at stride 50 on the same seeds. Five strictly monotone seeds and one
    with a late reversal: the summary is the same at every stride."""
    runs = []
    for seed in range(5):
        iso = np.exp(-np.arange(1001) / (100 + 20 * seed)) + 0.01
        sil = 0.4 - iso if seed < 4 else 0.4 - iso + 0.3 * (np.arange(1001) > 980)
        runs.append(_run(seed, iso, sil))
    traces = pd.concat(runs)
    summaries = []
    for stride in (1, 10, 50):
        table = correlation_table(traces[traces["step"] % stride == 0], BY)
        row = table.iloc[0]
        summaries.append((row["spearman_rho_seed_mean"], row["spearman_rho_seed_low"]))
    assert all(mean == -1.0 for mean, _ in summaries)  # the median seed is monotone at any stride
    assert max(low for _, low in summaries) - min(low for _, low in summaries) < 0.05


def test_one_seed_has_no_interval_and_no_duplicate_row():
    table = correlation_table(_falling(0), BY)
    assert list(table["scope"]) == ["all"]  # no seed0 row identical to it
    row = table.iloc[0]
    assert row["seeds"] == 1 and row["interval"] == "1 seed: no interval"
    assert math.isnan(row["pearson_r_seed_low"]) and math.isnan(row["spearman_rho_seed_high"])
    assert row["pearson_r_seed_mean"] == pytest.approx(row["pearson_r"])  # the one seed's r


def test_exact_correlations_are_written_as_plus_or_minus_one():
    # scipy gives -0.9999999999999999 for these monotone (ρ) and linear (r) series
    x = np.sort(np.random.default_rng(0).random(26))
    table = correlation_table(_run(0, x, -(x**3)), BY)
    assert table["spearman_rho"].iloc[0] == -1.0
    assert "-0.9999999999999999" not in table.to_csv(index=False)
    assert exact_unit(-0.9999999999999999) == -1.0 and exact_unit(0.99999) == 0.99999
    assert math.isnan(exact_unit(math.nan))


def test_seeds_of_one_sign_pooled_into_the_other_are_flagged():
    # two runs, each with silhouette rising with IsoScore, offset so that pooling reverses the sign
    steps = np.linspace(0, 1, 13)
    runs = [_run(0, 0.2 + 0.1 * steps, 0.5 + 0.1 * steps), _run(1, 0.5 + 0.1 * steps, 0.1 * steps)]
    row = correlation_table(pd.concat(runs), BY).iloc[0]
    assert row["pearson_r"] < 0 < row["pearson_r_seed_mean"]
    assert row["seed_signs_disagree"]


def test_the_papers_r_beside_ours():
    published = read_published()
    rng = np.random.default_rng(1)
    iso = np.linspace(0.3, 0.1, 13)
    # supersense: silhouette falls with IsoScore (r > 0) where the paper prints −0.978
    same_sign = [
        _run(s, iso, iso + 0.01 * rng.standard_normal(13), "supersense", "word2vec")
        for s in range(3)
    ]
    traces = pd.concat([_falling(s) for s in range(3)] + same_sign)
    table = with_paper_values(correlation_table(traces, BY), published, "main")
    pooled = table[table["scope"] == "all"].set_index("dataset")
    assert pooled.loc["polarity", "paper_pearson_r"] == pytest.approx(-0.808)
    assert pooled.loc["supersense", "paper_pearson_r"] == pytest.approx(-0.978)
    assert "sign differs from the paper" in pooled.loc["supersense", "vs_paper"]
    assert "sign differs" not in pooled.loc["polarity", "vs_paper"]
    assert pooled.loc["polarity", "vs_paper"] == "verdict: results/paper_comparison.csv"
    assert table[table["scope"] != "all"]["vs_paper"].eq("").all()
    one = with_paper_values(correlation_table(_falling(0), BY), published, "main").iloc[0]
    assert one["vs_paper"] == "verdict: results/paper_comparison.csv"
    glue = with_paper_values(correlation_table(_falling(0, dataset="rte"), BY), published, "glue")
    assert math.isnan(glue["paper_pearson_r"].iloc[0]) and glue["vs_paper"].iloc[0] == ""


def test_the_measurements_count_the_seed_of_a_one_seed_table():
    """A one-seed table has no seed0 row: the verdicts read the run count from ``seeds``."""
    from isotropy.standins import StandIns
    from isotropy.verdicts.measurements.optimisation import optimisation_measurements

    for seeds in (1, 3):
        table = correlation_table(pd.concat([_falling(s) for s in range(seeds)]), BY)
        rows = optimisation_measurements(
            "main", counts=None, correlations=table, traces=None, config={}, stand=StandIns()
        )
        assert {row["seeds"] for row in rows} == {seeds}
