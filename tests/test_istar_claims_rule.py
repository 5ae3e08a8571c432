"""The I-STAR claims read docs/verdicts.md's rule, recomputed here from runs.csv with scipy
apart from the package's code, on the committed whole-split runs and on planted ones."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isotropy.committed import istar_gpu
from isotropy.statistics import smallest_detectable_effect
from isotropy.verdicts.measurements.istar import correlation_claim

ROOT = Path(__file__).resolve().parents[1]
RUNS, _, _, _, RECORD = istar_gpu.grid_files(istar_gpu.WHOLE)
# claim: (runs.csv column, the claimed sign of λ minus no regulariser, its smallest effect)
CLAIMS = {
    "negative_lambda_lowers_isoscore": ("isoscore_star", -1, 0.001),
    "negative_lambda_improves_task": ("metric", 1, 0.01),
}


def _holm(p: list[float]) -> list[float]:
    order, adjusted, running = np.argsort(p), [0.0] * len(p), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def expected_verdicts(runs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """docs/verdicts.md's rule on ``runs``, per (claim, λ): paired differences by seed."""
    base = runs[runs["regulariser"] == "none"].set_index("seed")
    negative = runs[(runs["regulariser"] == "istar") & (runs["lambda"] < 0)]
    verdicts = {}
    for claim, (column, sign, sesoi) in CLAIMS.items():
        tests = {}
        sides = ("greater", "less") if sign > 0 else ("less", "greater")  # claimed, other
        for lam, group in negative.groupby("lambda"):
            d = (group.set_index("seed")[column] - base[column]).dropna().to_numpy()
            tests[lam] = [stats.ttest_1samp(d, sign * sesoi, alternative=a).pvalue for a in sides]
        claimed_p = _holm([t[0] for t in tests.values()])
        other_p = _holm([t[1] for t in tests.values()])
        for lam, p_claim, p_other in zip(tests, claimed_p, other_p):
            otherwise = "not supported" if p_other < 0.05 else "inconclusive"
            verdicts[claim, f"λ={lam:g}"] = "supported" if p_claim < 0.05 else otherwise
    return verdicts


def judged(runs: pd.DataFrame) -> dict[tuple[str, str], str]:
    record = json.loads((ROOT / RECORD).read_text(encoding="utf-8"))
    _, table = istar_gpu.judged(runs, record, RUNS)
    return {(r.claim, r.setup.split(", ")[-1]): r.verdict for r in table.itertuples()}


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    return pd.read_csv(ROOT / RUNS)


def test_the_whole_split_claims_read_what_the_documented_rule_says(committed):
    assert judged(committed) == expected_verdicts(committed)


def _planted(committed: pd.DataFrame, shift: dict[float, float]) -> pd.DataFrame:
    """The committed runs with each λ's accuracy set to the baseline's (same seed) plus
    ``shift[λ]`` plus a small per-seed wobble."""
    runs = committed.copy()
    base = runs[runs["regulariser"] == "none"].set_index("seed")["metric"]
    for lam, delta in shift.items():
        rows = (runs["regulariser"] == "istar") & (runs["lambda"] == lam)
        wobble = 0.002 * np.sin(runs.loc[rows, "seed"].to_numpy() + 1.0)
        runs.loc[rows, "metric"] = runs.loc[rows, "seed"].map(base).to_numpy() + delta + wobble
    return runs


@pytest.mark.parametrize(
    ("shift", "expected"),
    [
        ({-1.0: 0.03, -5.0: 0.03}, "supported"),  # beyond the smallest effect 0.01
        ({-1.0: -0.02, -5.0: -0.02}, "not supported"),  # every seed lower
        ({-1.0: 0.002, -5.0: 0.002}, "not supported"),  # higher, but by less than 0.01
        ({-1.0: 0.01, -5.0: 0.01}, "inconclusive"),  # at the smallest effect: neither way
    ],
)
def test_planted_runs_read_what_the_rule_says(committed, shift, expected):
    runs = _planted(committed, shift)
    got = judged(runs)
    assert got == expected_verdicts(runs)
    assert got["negative_lambda_improves_task", "λ=-1"] == expected


def test_the_negative_correlation_is_judged_per_seed_and_can_say_yes(committed):
    ours = committed[committed["regulariser"].isin(["none", "istar"])]
    r = ours.groupby("seed").apply(lambda g: stats.pearsonr(g["isoscore_star"], g["metric"])[0])
    verdict = correlation_claim(committed, "")["verdict"].iloc[0]
    if (r > 0).all():  # every seed the other way: never supported
        assert verdict != "supported"
    # planted: accuracy falling as IsoScore* rises in every seed reads supported
    planted = committed.copy()
    noise = np.random.default_rng(1).normal(0.0, 0.002, len(planted))
    planted["metric"] = 0.9 - 5.0 * planted["isoscore_star"] + noise
    assert correlation_claim(planted, "")["verdict"].iloc[0] == "supported"
    page = istar_gpu.COMMITTED.pages[0].render(ROOT)  # both grids, each over its λ; seeds added
    for grid in ("26,000 rows (λ -5, -1, 0, 1, 5)", "whole split (λ -5, -1, 0)"):
        assert f"| miniLM/sst2, {grid} | isotropy_correlates_negatively" in page
    assert "This page judged seeds 0, 1, 2 before the last call added 3, 4" in page


def test_the_smallest_detectable_effect_is_detected_four_times_in_five():
    rng = np.random.default_rng(0)
    for n, alpha in ((3, 0.025), (5, 0.05)):
        effect = smallest_detectable_effect(1.0, n, alpha)
        samples = rng.normal(effect, 1.0, size=(20_000, n))
        p = stats.ttest_1samp(samples, 0.0, axis=1, alternative="greater").pvalue
        assert (p < alpha).mean() == pytest.approx(0.8, abs=0.015)
    assert smallest_detectable_effect(1.0, 5, 0.05) < smallest_detectable_effect(1.0, 3, 0.05)
