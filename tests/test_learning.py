"""The learning guard (isotropy.verdicts.learning): a row about a fine-tuned model not shown
above its majority baseline reads "not judged: learning not shown" on every page."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_comparison import compare_results
from test_extensions import heldout_epochs
from test_rajaee_cls import _tables
from test_verdicts import istar_runs

from isotropy import studies
from isotropy.extensions import results
from isotropy.statistics import NOT_LEARNED, SUPPORTED
from isotropy.studies import rajaee_cls as cls_record
from isotropy.verdicts import learning
from isotropy.verdicts.claims import check_claims, claims_markdown
from isotropy.verdicts.extension_answers import claims_table, judged_claims
from isotropy.verdicts.measurements import fine_tuned_not_learned
from isotropy.verdicts.measurements.istar import istar_measurements

RTE_DEV, RTE_MAJORITY = 277, 146 / 277  # the mirror's RTE dev split: 146 of 277 entailment
# 256 pairs, 2 epochs: 50.9% without the method, below the 52.7% majority baseline
CHANCE = [0.509, 0.495, 0.527, 0.513, 0.502]
LEARNED = [0.621, 0.639, 0.614, 0.650, 0.628]


def test_the_test_against_its_references():
    # the dev term vanishes as N grows: the one-sample t over seeds (scipy) is the limit
    seeds = [0.56, 0.58, 0.55, 0.57, 0.60]
    limit = stats.ttest_1samp(seeds, 0.527, alternative="greater").pvalue
    assert learning.learning_test(seeds, 0.527, 10**12) == pytest.approx(limit, rel=1e-6)
    # seeds that agree exactly: the binomial's normal approximation on the dev set alone
    z = (0.58 - 0.527) / math.sqrt(0.527 * 0.473 / RTE_DEV)
    agreed = learning.learning_test([0.58] * 5, 0.527, RTE_DEV)
    assert agreed == pytest.approx(stats.norm.sf(z)) and agreed < learning.ALPHA
    # and close to the exact binomial test of one seed's correct answers (161 of 277)
    exact = stats.binomtest(161, RTE_DEV, 0.527, alternative="greater").pvalue
    one_seed = learning.learning_test([161 / RTE_DEV], 0.527, RTE_DEV)
    assert one_seed == pytest.approx(exact, abs=0.01)


def test_chance_and_learned_seeds():
    assert learning.learning_test(CHANCE, RTE_MAJORITY, RTE_DEV) >= learning.ALPHA
    assert learning.learning_test(LEARNED, RTE_MAJORITY, RTE_DEV) < learning.ALPHA
    # seeds that agree closely just above the baseline: a t over seeds alone says "learned"
    # (p < 1e-4); the dev set's 277 pairs cannot tell 53.5% from 52.7%
    close = [0.534, 0.535, 0.536, 0.535, 0.534]
    assert stats.ttest_1samp(close, RTE_MAJORITY, alternative="greater").pvalue < 1e-4
    assert learning.learning_test(close, RTE_MAJORITY, RTE_DEV) >= learning.ALPHA
    with pytest.raises(ValueError, match="majority baseline"):
        learning.learning_test(CHANCE, 1.0, RTE_DEV)


def _cls_runs(accuracy: list[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The test_rajaee_cls tables whose claims both hold, with these per-seed accuracies."""
    runs, layers = _tables([5e-5, 2e-5, 8e-5, 4e-5, 6e-5], cls_mean=0.5)
    runs["accuracy"] = [accuracy[s] for s in runs["seed"]]
    return runs.assign(majority_baseline=RTE_MAJORITY, eval_sentences=RTE_DEV), layers


def test_a_chance_level_cls_run_is_not_judged_on_its_page():
    """Rejected: both claims read supported at chance accuracy."""
    table = cls_record.check_claims(*_cls_runs(CHANCE))
    assert set(table["verdict"]) == {NOT_LEARNED}
    assert all(n.startswith("without the method: accuracy not above") for n in table["note"])
    assert "➖ not judged: learning not shown: 2" in claims_markdown(table)


def test_only_the_claim_reading_the_unlearned_runs_is_guarded():
    runs, layers = _cls_runs(LEARNED)
    cluster = runs["method"] == "cluster"
    runs.loc[cluster, "accuracy"] = [CHANCE[s] for s in runs.loc[cluster, "seed"]]
    verdicts = dict(zip(*cls_record.check_claims(runs, layers)[["claim", "verdict"]].T.values))
    assert verdicts == {
        "cls_method_cannot_raise_isotropy": NOT_LEARNED,  # reads both methods
        "cls_already_zero_mean": SUPPORTED,  # reads the runs without the method only
    }


def _comparison(accuracy: list[float]) -> pd.DataFrame:
    from isotropy.standins import StandIns
    from isotropy.workflow.config import load_config

    config = load_config(["config.yaml", "config/offline.yaml"]).config
    runs, _ = _cls_runs(accuracy)
    runs = runs.assign(model="miniLM", train_examples=256, epochs=2)
    runs["cls_iw_head_input"] = runs["cls_iw"]
    table = compare_results({"rajaee_cls_runs": runs}, config, StandIns(), {"geometry"})
    return table[table["quantity"].str.startswith("rte_finetuned")]


def test_the_comparison_page_guards_the_fine_tuned_rows():
    rows = _comparison(CHANCE)
    assert len(rows) == 4 and set(rows["verdict"]) == {NOT_LEARNED}
    assert rows["tolerance"].str.contains("not above the majority baseline 52.7%").all()


def _istar(accuracy: float) -> pd.DataFrame:
    runs = istar_runs({-1.0: [0.05, 0.06, 0.055, 0.052, 0.058]})
    spread = np.tile([0.0, 0.01, -0.01, 0.005, -0.005], 2)
    return runs.assign(
        score_accuracy=accuracy + spread, majority_baseline=0.509, eval_sentences=872
    )


def test_istar_rows_of_a_model_that_did_not_learn_are_not_judged():
    """SST-2's dev majority 50.9%: a grid at chance reads not judged on the claims page (the
    comparison page: test_verdicts.py, on the golden tiny results)."""
    measured = pd.DataFrame(istar_measurements(_istar(0.51), {}))
    claims = check_claims(measured, {"istar"}, studies.measured_claims())
    assert set(claims.loc[claims["study"] == "istar", "verdict"]) == {NOT_LEARNED}
    learned = pd.DataFrame(istar_measurements(_istar(0.85), {}))
    judged = check_claims(learned, {"istar"}, studies.measured_claims())
    assert NOT_LEARNED not in set(judged["verdict"])


def _heldout_seeds(accuracy: float) -> pd.DataFrame:
    """Held-out runs whose claims hold, at this accuracy in every epoch (majority 0.5)."""
    epochs = heldout_epochs((0.4, -0.04), (0.1, 0.05), heldout_accuracy=(accuracy, 0.0))
    return results.heldout_seeds(epochs)


def _held(seeds: pd.DataFrame, table=None) -> pd.DataFrame:
    """The held-out claims' rows of ``table`` (default: the guarded page of ``seeds``)."""
    table = judged_claims(seeds) if table is None else table
    return table[table["claim"].isin(learning.HELDOUT_CLAIMS)]


def test_heldout_claims_of_a_model_that_did_not_learn_are_not_judged():
    seeds = _heldout_seeds(0.51)
    held = _held(seeds)
    assert len(held) == 2 and set(held["verdict"]) == {NOT_LEARNED}
    # docs/extensions.md and the README line read the same table
    assert set(_held(seeds, claims_table(seeds))["verdict"]) == {NOT_LEARNED}
    learned = _heldout_seeds(0.78)
    assert set(_held(learned)["verdict"]) == {SUPPORTED}


@pytest.mark.parametrize("lost", ["missing", "NaN"])
def test_heldout_claims_without_a_recorded_baseline_are_not_judged(lost):
    """Runs with no baseline recorded: the guard cannot tell, so it refuses to judge."""
    seeds = _heldout_seeds(0.78)
    baseline = seeds["quantity"] == "majority_baseline"
    lost_value = seeds.assign(value=seeds["value"].mask(baseline))
    held = _held(seeds[~baseline] if lost == "missing" else lost_value)
    assert len(held) == 2 and set(held["verdict"]) == {NOT_LEARNED}
    assert held["note"].str.startswith(learning.NO_BASELINE).all()


def test_fine_tuned_runs_without_a_recorded_baseline_are_not_judged():
    """The pages' guard (CLS, I-STAR): accuracy with no baseline, or a NaN one, is refused;
    another metric than accuracy has no baseline to beat and passes; a NaN seed is left out."""
    runs = pd.DataFrame({"accuracy": [*LEARNED, math.nan], "eval_sentences": RTE_DEV})
    assert fine_tuned_not_learned(runs) == learning.NO_BASELINE
    nan = runs.assign(majority_baseline=math.nan)
    assert fine_tuned_not_learned(nan) == learning.NO_BASELINE
    assert fine_tuned_not_learned(runs.assign(majority_baseline=RTE_MAJORITY)) == ""
    assert fine_tuned_not_learned(runs.rename(columns={"accuracy": "mcc"})) == ""
