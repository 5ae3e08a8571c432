"""The claims check: each paper claim becomes a measured value, a threshold and a verdict.

Measured values (isotropy.verdicts.measurements, shared with the comparison with the papers)
are compared with independent computations (numpy/scipy on the same numbers).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import seed_simulator as sim
from scipy import stats

from isotropy import studies
from isotropy.configuration import Config
from isotropy.standins import StandIns
from isotropy.statistics import (
    INCONCLUSIVE,
    NOT_RUN,
    NOT_SUPPORTED,
    ONE_SEED,
    SUPPORTED,
    UNTESTED_FAILS,
    UNTESTED_HOLDS,
)
from isotropy.summaries import correlation_table
from isotropy.traces import trace_columns
from isotropy.verdicts.claims import COLUMNS, Claim, check_claims, direction_test
from isotropy.verdicts.measurements import load_tables, measure


def judged(tables: dict, study: str) -> list[dict]:
    """The claim rows of one study, measured from ``tables`` as the rules do."""
    measured = measure(tables, {}, StandIns(), studies.table_measures())
    table = check_claims(
        measured, {name.split("_")[0] for name in tables}, studies.measured_claims()
    )
    return table[table["study"] == study].to_dict("records")


def optimisation_rows(study: str, traces: pd.DataFrame, correlations=None) -> list[dict]:
    measured = sim.measured(traces, study=study, correlations=correlations)
    table = check_claims(measured, {study}, studies.measured_claims())
    return table[table["study"] == study].to_dict("records")


def istar_rows(runs: pd.DataFrame) -> list[dict]:
    return judged({"istar_runs": runs}, "istar")


def geometry_rows(sts: pd.DataFrame) -> list[dict]:
    return judged({"geometry_sts": sts}, "geometry")


def check_results(*, traces, correlations, run_keys) -> pd.DataFrame:
    inputs = {f"{study}_traces": paths for study, paths in traces.items()}
    inputs.update({f"{study}_correlations": path for study, path in correlations.items()})
    tables = load_tables(inputs, run_keys)
    return check_claims(
        measure(tables, {}, StandIns(), studies.table_measures()),
        {name.split("_")[0] for name in tables},
        studies.measured_claims(),
    )


def synthetic_traces(
    silhouette_slope: float = 0.4, isoscore_slope: float = -0.3, seeds=(0, 1, 2), steps: int = 20
) -> pd.DataFrame:
    """Linear trends in silhouette and IsoScore over training, with small per-seed noise."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in seeds:
        for step in range(steps):
            t = step / (steps - 1)
            silhouette = 0.2 + silhouette_slope * t + rng.normal(0, 0.003)
            isoscore = 0.5 + isoscore_slope * t + rng.normal(0, 0.003)
            rows.append((seed, step, isoscore, silhouette))
    table = pd.DataFrame(rows, columns=["seed", "step", "isoscore", "silhouette"])
    return table.assign(encoder="miniLM", dataset="polarity")


def by_claim(rows) -> dict[str, dict]:
    return {row["claim"]: row for row in rows}


def test_paper_pattern_is_supported_with_independent_values():
    traces = synthetic_traces()
    rows = by_claim(optimisation_rows("main", traces))
    first = traces[traces["step"] == 0].groupby("seed")[["silhouette", "isoscore"]].mean()
    last = traces[traces["step"] == 19].groupby("seed")[["silhouette", "isoscore"]].mean()
    change = {m: abs(last[m].mean() - first[m].mean()) for m in ("silhouette", "isoscore")}
    for claim, independent in {
        "silhouette_rises": last["silhouette"].mean() - first["silhouette"].mean(),
        "isoscore_falls": last["isoscore"].mean() - first["isoscore"].mean(),
        "spearman_strongly_negative": stats.spearmanr(
            traces["isoscore"], traces["silhouette"]
        ).statistic,
        "pearson_negative": np.corrcoef(traces["isoscore"], traces["silhouette"])[0, 1],
        # the spread over seeds against the effect
        "seeds_agree": max(last[m].std(ddof=1) / change[m] for m in change),
    }.items():
        assert rows[claim]["measured"] == pytest.approx(independent), claim
    assert {row["verdict"] for row in rows.values()} == {SUPPORTED}
    assert rows["silhouette_rises"]["setup"] == "miniLM/polarity"
    assert "Figure 2" in rows["silhouette_rises"]["paper"]


def test_metrics_moving_together_are_not_supported():
    traces = synthetic_traces(silhouette_slope=-0.2, isoscore_slope=-0.3)  # both fall
    rows = by_claim(optimisation_rows("glue", traces))
    for claim in ("silhouette_rises", "spearman_strongly_negative", "pearson_negative"):
        assert rows[claim]["verdict"] == NOT_SUPPORTED, claim
    assert rows["isoscore_falls"]["verdict"] == SUPPORTED
    # Moving together means a positive correlation, measured as such.
    assert rows["spearman_strongly_negative"]["measured"] > 0.9
    assert "Table 3" in rows["pearson_negative"]["paper"]


def test_one_seed_and_constant_series():
    traces = synthetic_traces(seeds=(0,))
    traces["isoscore"] = 0.5  # constant: correlations are undefined
    rows = by_claim(optimisation_rows("main", traces))
    assert rows["seeds_agree"]["verdict"] == NOT_RUN and "one seed" in rows["seeds_agree"]["note"]
    assert rows["spearman_strongly_negative"]["verdict"] == NOT_SUPPORTED
    assert "undefined" in rows["spearman_strongly_negative"]["note"]
    assert rows["isoscore_falls"]["verdict"] == ONE_SEED  # no test: never "not supported"
    assert rows["isoscore_falls"]["measured"] == 0


@pytest.mark.parametrize("quantity", ["pearson_r", "spearman_rho", "delta_r", "silhouette"])
def test_a_direction_is_tested_on_fisher_z_only_for_a_correlation(quantity):
    values, on_z = [0.52, 0.61, 0.55], quantity in ("pearson_r", "spearman_rho")
    claim = Claim("c", "main", quantity, "", "above:0.4", "", sesoi=0, sesoi_source="none")
    y, centre = (np.arctanh(values), np.arctanh(0.4)) if on_z else (values, 0.4)
    one_sided = stats.ttest_1samp(y, centre, alternative="greater").pvalue
    assert direction_test(claim, values)[0] == pytest.approx(one_sided)


def test_nan_steps_are_skipped_and_all_nan_is_an_error():
    traces = synthetic_traces()
    traces.loc[traces["step"] == 19, "silhouette"] = np.nan  # not recorded at the last step
    rows = by_claim(optimisation_rows("main", traces))
    first = traces[traces["step"] == 0]["silhouette"].mean()
    last = traces[traces["step"] == 18]["silhouette"].mean()
    assert rows["silhouette_rises"]["measured"] == pytest.approx(last - first)
    traces["silhouette"] = np.nan
    with pytest.raises(ValueError, match="every value is NaN"):
        optimisation_rows(
            "main", traces, correlation_table(synthetic_traces(), by=["encoder", "dataset"])
        )


def istar_runs(negative_iso: float, negative_metric: float, seeds: int = 3) -> pd.DataFrame:
    """Baseline, λ = −5 and −1 (I-STAR) and λ = 5 per seed, with per-seed noise."""
    noise = np.random.default_rng(1).normal(0, 0.002, size=(seeds, 4))
    rows = []
    for seed in range(seeds):
        rows.append(("none", 0.0, seed, 0.90 + noise[seed, 0], 0.30 + noise[seed, 1]))
        for lam in (-5.0, -1.0):
            metric = negative_metric + noise[seed, 2] + (0.005 if lam == -1.0 else 0)
            iso = negative_iso + noise[seed, 3] + (0.01 if lam == -1.0 else 0)
            rows.append(("istar", lam, seed, metric, iso))
        rows.append(("istar", 5.0, seed, 0.5, 0.9))
    columns = ["regulariser", "lambda", "seed", "metric", "isoscore_star"]
    return pd.DataFrame(rows, columns=columns).assign(model="bert", task="sst2")


def test_istar_claims_judge_each_lambda_over_seeds():
    runs = istar_runs(negative_iso=0.10, negative_metric=0.93)
    rows = {(r["claim"], r["setup"]): r for r in istar_rows(runs)}
    assert set(rows) == {
        (c, f"bert/sst2, λ={lam}")
        for c in ("negative_lambda_lowers_isoscore", "negative_lambda_improves_task")
        for lam in (-5, -1)
    }
    base = runs[runs["regulariser"] == "none"].set_index("seed")
    minus_one = runs[runs["lambda"] == -1.0].set_index("seed")
    lowers = rows[("negative_lambda_lowers_isoscore", "bert/sst2, λ=-1")]
    lowered = (minus_one["isoscore_star"] - base["isoscore_star"]).mean()
    assert lowers["measured"] == pytest.approx(lowered)
    assert {r["verdict"] for r in rows.values()} == {SUPPORTED}
    rows = istar_rows(istar_runs(negative_iso=0.5, negative_metric=0.80))
    assert {r["verdict"] for r in rows} == {NOT_SUPPORTED}  # each λ significantly the other way
    no_baseline = istar_runs(0.1, 0.9).query("regulariser != 'none'")
    assert {r["verdict"] for r in istar_rows(no_baseline)} == {NOT_RUN}


def test_istar_one_seed_is_not_judged_and_noise_is_inconclusive():
    """Rejected: 29/48 against 26/48 on one seed judged consistent (a best-of-several λ, no
    spread); and a gain smaller than the seeds' noise called an improvement."""
    one = istar_runs(negative_iso=0.10, negative_metric=0.90 + 3 / 48, seeds=1)
    assert {r["verdict"] for r in istar_rows(one)} == {ONE_SEED}
    noisy = istar_runs(negative_iso=0.30, negative_metric=0.90, seeds=3)
    negative = (noisy["regulariser"] == "istar") & (noisy["lambda"] < 0)
    noisy.loc[negative, "metric"] += noisy.loc[negative, "seed"].map(
        {0: 0.06, 1: -0.04, 2: 0.01}
    )  # mean +0.01, sd 0.05
    verdicts = {
        r["verdict"] for r in istar_rows(noisy) if r["claim"] == "negative_lambda_improves_task"
    }
    assert verdicts == {INCONCLUSIVE}


def test_correlation_claims_with_disagreeing_seed_signs_are_not_supported():
    """Rejected: supersense per-seed r +0.75 and +0.68, pooled −0.31, judged "r < 0: supported"."""
    rising = synthetic_traces(silhouette_slope=0.4, isoscore_slope=0.3, seeds=(0, 1))
    offsets = [-0.5, 0.6]  # flip the pooled sign
    rising.loc[rising["seed"] == 1, ["isoscore", "silhouette"]] += offsets
    correlations = correlation_table(rising, by=["encoder", "dataset"])
    pooled = correlations.query("scope == 'all'")["pearson_r"].iloc[0]
    per_seed = correlations.query("scope != 'all'")["pearson_r"]
    assert pooled < 0 and (per_seed > 0.6).all()  # the case of the issue
    rows = by_claim(optimisation_rows("main", rising, correlations))
    # judged per seed: r is positive in both seeds, so "r negative" is never supported (the
    # pooled −0.31 is never read as the claim); two seeds are too few to reject it
    assert rows["pearson_negative"]["verdict"] == INCONCLUSIVE
    assert "0 of 2 seeds below -0.8" in rows["pearson_negative"]["note"]


def test_geometry_claims():
    methods = [("none", 54.09, 3.36e-5), ("centring", 60.0, 0.1), ("cluster-based", 67.50, 0.64)]
    sts = pd.DataFrame(methods, columns=["method", "spearman", "isotropy"])
    sts = sts.assign(model="bert", dataset="stsb")
    rows = by_claim(geometry_rows(sts))
    assert rows["cluster_based_raises_isotropy"]["measured"] == pytest.approx(0.64 / 3.36e-5)
    assert rows["cluster_based_raises_sts"]["measured"] == pytest.approx(67.50 - 54.09)
    # one value against a bound: a point comparison, no test
    assert {r["verdict"] for r in rows.values()} == {UNTESTED_HOLDS}
    assert all("a point comparison, no test" in r["note"] for r in rows.values())
    # Near-zero correlations stay as they are (×100 already), never rescaled.
    weak = sts.assign(spearman=[0.2, 0.5, 0.9])
    weak_gain = by_claim(geometry_rows(weak))["cluster_based_raises_sts"]["measured"]
    assert weak_gain == pytest.approx(0.7)
    lower = by_claim(geometry_rows(sts.assign(spearman=[54.09, 60.0, 50.0])))
    assert lower["cluster_based_raises_sts"]["verdict"] == UNTESTED_FAILS
    without = geometry_rows(sts.query("method != 'cluster-based'"))
    assert {r["verdict"] for r in without} == {NOT_RUN}


def test_check_results_marks_absent_studies_not_run(tmp_path):
    traces = synthetic_traces()
    paths, keys = [], []
    for seed, frame in traces.groupby("seed"):
        path = tmp_path / f"trace{seed}.parquet"
        # A trace as the optimisation writes it (isotropy.traces checks its columns and order).
        frame.assign(loss=0.5, accuracy=0.5)[trace_columns()].to_parquet(path)
        paths.append(str(path))
        keys.append({"encoder": "miniLM", "dataset": "polarity", "seed": seed})
    correlations = tmp_path / "correlations.csv"
    correlation_table(traces, by=["encoder", "dataset"]).to_csv(correlations, index=False)
    table = check_results(
        traces={"main": paths}, correlations={"main": str(correlations)}, run_keys={"main": keys}
    )
    assert list(table.columns) == COLUMNS
    assert set(table.loc[table["study"] == "main", "verdict"]) == {SUPPORTED}
    assert set(table.loc[table["study"] == "main", "setup"]) == {"miniLM/polarity"}  # run keys
    assert set(table.loc[table["study"] != "main", "verdict"]) == {NOT_RUN}
    assert set(table["study"]) == {"main", "glue", "istar", "geometry"}
    with pytest.raises(ValueError, match="2 run keys for 3 traces"):
        check_results(
            traces={"main": paths},
            correlations={"main": str(correlations)},
            run_keys={"main": keys[:2]},
        )


def test_workflow_inputs_follow_the_configured_studies(config):
    from isotropy.studies import verdict_inputs as workflow_inputs
    from isotropy.workflow.inputs import workflow_run_keys

    config = Config.model_validate(config)
    inputs = workflow_inputs(config)
    assert set(inputs) == set(
        "main_traces main_table1 main_correlations glue_traces glue_table2 glue_table3 istar_runs "
        "geometry_lid geometry_cosine geometry_sts geometry_classification".split()
    )
    runs = len(config.main.setups) * len(config.main.seeds)
    assert len(inputs["main_traces"]) == runs
    assert inputs["glue_table3"] == "results/glue/table3.csv"
    assert inputs["istar_runs"] == "results/istar/runs.csv"
    assert inputs["geometry_sts"] == "results/geometry/sts.csv"
    keys = workflow_run_keys(config)
    for study in ("main", "glue"):
        assert [
            f"results/{study}/{k['encoder']}/{k['dataset']}/seed{k['seed']}/trace.parquet"
            for k in keys[study]
        ] == inputs[f"{study}_traces"]
    # Only the studies the run builds count; absent sections are no error.
    main_only = {"main_traces", "main_table1", "main_correlations"}
    assert set(workflow_inputs(config.model_copy(update={"studies": ["main"]}))) == main_only
    trimmed = config.model_copy(update=dict.fromkeys(("istar", "geometry", "glue")))
    assert set(workflow_inputs(trimmed)) == main_only
    assert set(workflow_run_keys(trimmed)) == {"main"}
    # the claims page reads the extension seeds only when the studies list them
    assert workflow_inputs(config, claims=True) == workflow_inputs(config)
    config = config.model_copy(update={"studies": [*config.studies, "extensions"]})
    claims_inputs = workflow_inputs(config, claims=True)
    assert claims_inputs["extensions_seeds"] == "results/extensions/seeds.csv"


def test_the_extension_studys_claims_are_their_own_family():
    """The extension study's claim rows are judged as the page's directions are and adjusted as
    one family, the study's own (on the claims page too: tests/test_verdict_families.py)."""
    from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
    from isotropy.verdicts.claims import ERROR_CONTROL

    def seeds(claim: str, setup: str, values: list[float]) -> pd.DataFrame:
        rows = {"claim": claim, "setup": setup, "seed": range(len(values)), "value": values}
        return pd.DataFrame(rows)

    # clear: five seeds well above the smallest effect 0.05; marginal: five seeds above it,
    # one-sided t p 0.030; null: seeds either side of 0
    claim = "heldout_silhouette_follows"  # one row per setup (the triplet claim is one row)
    clear = seeds(claim, "toy/clear", [0.30, 0.32, 0.31, 0.29, 0.33])
    marginal = seeds(claim, "toy/marginal", [0.10, 0.17, 0.07, 0.25, 0.09])
    null = seeds(claim, "toy/null", [0.1, -0.1, 0.05, -0.05, 0.02])
    p_marginal = stats.ttest_1samp(marginal["value"], 0.05, alternative="greater").pvalue
    assert 0.025 < p_marginal < 0.035
    by_itself = check_claims(marginal, None, EXTENSION_CLAIMS).set_index("setup")
    assert by_itself.loc["toy/marginal", "verdict"] == SUPPORTED  # a family of one
    per_seed = pd.concat([clear, marginal, null], ignore_index=True)
    alone = check_claims(per_seed, None, EXTENSION_CLAIMS).set_index("setup")
    assert alone.loc["toy/clear", "verdict"] == SUPPORTED
    family = "Holm over the 3 tests of Mickus et al. 2024 · extensions"
    assert family in alone.loc["toy/clear", "note"]
    assert alone.loc["toy/marginal", "verdict"] == INCONCLUSIVE  # Holm: 2 × 0.030 > 0.05
    assert alone.loc["toy/null", "verdict"] == INCONCLUSIVE
    # one seed: no test, so never "not supported"
    against = check_claims(seeds("deep_output_anisotropic", "toy", [0.2]), None, EXTENSION_CLAIMS)
    assert against.loc[against["setup"] == "toy", "verdict"].item() == ONE_SEED
    assert "within declared families" in ERROR_CONTROL and "same families" in ERROR_CONTROL


def _verdict_rate(quantity: str, claim: str, draw, runs: int = 100) -> dict[str, float]:
    """How often each verdict reads ``claim`` over ``runs`` planted experiments (one setup each,
    so one test a family) whose per-seed values ``draw()`` returns."""
    verdicts = []
    for _ in range(runs):
        measured = pd.DataFrame([sim.seed_measurement(quantity, "s", "polarity", draw())])
        table = check_claims(measured, {"main"}, studies.measured_claims())
        verdicts.append(table.query("study == 'main' & claim == @claim")["verdict"].item())
    return pd.Series(verdicts).value_counts(normalize=True).to_dict()


def test_a_rise_far_below_the_smallest_effect_of_interest_is_not_supported():
    """Rejected (issue 93): a silhouette rise of 0.003 (0.7% of the 0.411 observed) read
    *supported* in 80% of runs at 3 seeds; its smallest effect of interest is 0.05."""
    rng = np.random.default_rng(0)
    rate = _verdict_rate("silhouette_change", "silhouette_rises", lambda: rng.normal(3e-3, 1e-3, 3))
    assert rate.get(SUPPORTED, 0) == 0 and rate.get(NOT_SUPPORTED, 0) > 0.5


@pytest.mark.parametrize("seeds", [3, 10])
def test_no_effect_reads_not_supported_at_most_at_the_tests_level(seeds):
    """Rejected (issue 93): "not supported when most seeds go the other way" read *not
    supported* in about half the experiments with no effect (r at the bound −0.8 in truth)."""
    rng = np.random.default_rng(seeds)
    draw = lambda: np.tanh(np.arctanh(-0.8) + rng.normal(0, 0.05, seeds))  # noqa: E731
    rate = _verdict_rate("pearson_r", "pearson_negative", draw)
    assert rate.get(NOT_SUPPORTED, 0) <= 0.09 and rate.get(SUPPORTED, 0) <= 0.09
