"""The bound the pages state, checked where it was false (issue 59, item 2): a true gap of exactly
δ reads *agrees* with probability ≤ α/2 = 0.025, on both sides of the paper's value, at each of
Mickus et al.'s four printed r (config/published_values.csv, their own declared margin), under
both readings of the paper's number (one run; one r pooled over its m = 5 runs), at 3, 5 and 10
seeds; and a faithful replication still reads *differs* with probability ≤ α.

"A true gap of δ" is a gap between the expected values of the paper's statistic and ours on the
scale the row is judged on, our truth on an edge of the declared region around the paper's truth
(``scale.region``), so the test holds whatever kind of margin the row declares. The old margin
(±0.05 in r around the paper's *printed* value) fails it towards −1: its edges moved with the
paper's draw, and at −0.947 the edge at −0.997 is nearly the end of the scale.

Vectorised: the one-run reading on normal per-seed values of Fisher z (several noise levels), the
pooled reading on simulated trajectories (tests/seed_simulator.py) with the production pooled
prediction, its statistic's spread shifted on z to sit at each printed value. Seeded; seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import seed_simulator as sim

from isotropy.verdicts import equivalence as eq
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.comparison import read_published

ALPHA = eq.ALPHA
SEEDS = (3, 5, 10)
NOISE = (0.02, 0.05, 0.1, 0.2)  # sd of one run's Fisher z
REPLICATIONS = 20000  # one-run reading: MC sd of 0.025 is 0.0011
POOLED_REPLICATIONS = 1500  # pooled reading: MC sd of 0.025 is 0.004


def mc_limit(p: float, n: int) -> float:
    """p plus three Monte-Carlo standard errors of a share estimated from n replications."""
    return p + 3 * math.sqrt(p * (1 - p) / n)


def mickus_rows() -> list[tuple[float, str]]:
    """(printed r, declared margin) of the four §3.2 Pearson rows."""
    table = read_published()
    rows = table[(table["quantity"] == "pearson_r") & (table["tolerance"] == "printed")]
    assert len(rows) == 4
    return [(float(r["paper_value"]), str(r["margin"])) for _, r in rows.iterrows()]


MICKUS = mickus_rows()
Z = eq.SCALES["z"]


def truths(paper: float, margin: str) -> dict[str, float]:
    """Our truth on the judging scale: on each edge of the region around the paper's truth, and
    at it (a faithful replication)."""
    low, high = Z.region(paper, margin)
    return {"towards −1": low, "towards 0": high, "faithful": float(Z.forward(np.array(paper)))}


def shares(paper_z_draw, centre, se, df, margin) -> tuple[np.ndarray, np.ndarray]:
    """Per replication: agrees, differs (the page's rule, one row at α)."""
    lows, highs = Z.regions(np.tanh(paper_z_draw), margin)  # the paper prints its draw
    p_agree, p_differ = eq.test_arrays(centre, se, df, lows, highs)
    return p_agree < ALPHA, (p_differ < ALPHA) & ~(p_agree < ALPHA)


# ------------------------------------------------------------------ one run (m = 1)


def one_run_verdicts(paper, margin, seeds, noise, truth, rng):
    ours = rng.normal(truth, noise, size=(REPLICATIONS, seeds))
    drawn = rng.normal(float(Z.forward(np.array(paper))), noise, size=REPLICATIONS)
    return shares(drawn, ours.mean(axis=1), eq.mean_se(ours, 1), seeds - 1, margin)


@pytest.mark.parametrize("paper,margin", MICKUS)
@pytest.mark.parametrize("seeds", SEEDS)
def test_one_run_reading_a_gap_of_delta_rarely_agrees(paper, margin, seeds):
    rng = np.random.default_rng(int(-paper * 1000) + seeds)
    worst = {}
    for side, truth in truths(paper, margin).items():
        for noise in NOISE:
            agrees, differs = one_run_verdicts(paper, margin, seeds, noise, truth, rng)
            share = differs.mean() if side == "faithful" else agrees.mean()
            worst[side] = max(worst.get(side, 0.0), share)
    assert worst["towards −1"] <= mc_limit(ALPHA / 2, REPLICATIONS), worst
    assert worst["towards 0"] <= mc_limit(ALPHA / 2, REPLICATIONS), worst
    assert worst["faithful"] <= mc_limit(ALPHA, REPLICATIONS), worst


# ------------------------------------------------------------------ pooled over m = 5 runs


def _moments(iso: np.ndarray, sil: np.ndarray) -> np.ndarray:
    """Each run's sums (points, Σx, Σy, Σx², Σy², Σxy) over its last axis."""
    n = np.full(iso.shape[:-1], iso.shape[-1], dtype=np.float64)
    parts = (iso.sum(-1), sil.sum(-1), (iso * iso).sum(-1), (sil * sil).sum(-1))
    return np.stack((n, *parts, (iso * sil).sum(-1)), axis=-1)


def _pooled_z(moments: np.ndarray) -> np.ndarray:
    """z of the pooled r of each group of runs (axis −2)."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(moments.sum(axis=-2), -1, 0)
    return np.arctanh((n * sxy - sx * sy) / np.sqrt((n * sxx - sx**2) * (n * syy - sy**2)))


def pooled_draws(shape: str, seeds: int, rng) -> tuple[np.ndarray, ...]:
    """Deviations from the truth (the pooled r's expected z over 5 fresh runs) of the paper's
    pooled draw and of our prediction's centre, with our prediction's se and df."""
    steps = np.arange(0, sim.UPDATES + 1, 10)
    runs = 5 + seeds
    iso, sil = sim.trajectories(shape, POOLED_REPLICATIONS * runs, rng, steps)
    moments = _moments(iso, sil).reshape(POOLED_REPLICATIONS, runs, 6)
    big = _moments(*sim.trajectories(shape, 5000 * 5, rng, steps)).reshape(5000, 5, 6)
    truth = float(_pooled_z(big).mean())
    paper = _pooled_z(moments[:, :5]) - truth
    predictions = [eq.pooled_prediction(m, 5, rng, draws=400) for m in moments[:, 5:]]
    centre = np.array([p.centre for p in predictions]) - truth
    se = np.array([p.se for p in predictions])
    return paper, centre, se, predictions[0].df


@pytest.mark.parametrize("seeds", SEEDS)
def test_pooled_reading_a_gap_of_delta_rarely_agrees(seeds):
    rng = np.random.default_rng(59 + seeds)
    limit_agree = mc_limit(ALPHA / 2, POOLED_REPLICATIONS)
    failures = []
    for shape in ("fall", "phases"):  # pooled r ≈ −0.87 and −0.99: the spreads of both ends
        paper_dev, centre_dev, se, df = pooled_draws(shape, seeds, rng)
        for paper, margin in MICKUS:
            paper_z = float(Z.forward(np.array(paper)))
            for side, truth in truths(paper, margin).items():
                agrees, differs = shares(paper_z + paper_dev, truth + centre_dev, se, df, margin)
                share = differs.mean() if side == "faithful" else agrees.mean()
                limit = mc_limit(ALPHA, POOLED_REPLICATIONS) if side == "faithful" else limit_agree
                if share > limit:
                    failures.append(f"{shape} {paper} {side}: {share:.3f} > {limit:.3f}")
    assert not failures, failures


# ------------------------------------------------------------------ the row: both readings


def measured(per_seed, moments=None):
    return {
        "value": float(np.tanh(np.mean(np.arctanh(per_seed)))),
        "per_seed": per_seed,
        "moments": moments,
    }


def test_a_row_read_two_ways_keeps_only_the_verdict_both_readings_give():
    """The §3.2 rows are declared ``pooled|single``: the paper does not say which it printed."""
    table = read_published()
    row = table[(table["quantity"] == "pearson_r") & (table["setup"] == "polarity")].iloc[0]
    assert row["estimand"] == "pooled|single" and row["m"] == "5"
    assert "holds under both" in row["why"]
    declared = T.Declared("pooled|single", 5.0, row["margin"])
    rng = np.random.default_rng(1)
    iso, sil = sim.trajectories("fall", 5, rng, np.arange(0, 1001, 10))
    moments = _moments(iso, sil)
    per_seed = tuple(np.tanh(_pooled_z(moments[:, None, :])))
    pooled = float(np.tanh(_pooled_z(moments)))
    both = T.judge_equivalence(
        "printed",
        {**measured(per_seed, moments), "value": pooled},
        pooled,
        declared,
        unit="correlation",
    )
    assert "read as one run" in both.text and "pooled over the paper's runs" in both.text
    one = T.judge_equivalence(
        "printed",
        measured(per_seed, moments),
        pooled,
        T.Declared("single", 1.0, row["margin"]),
        unit="correlation",
    )
    pool = T.judge_equivalence(
        "printed",
        {**measured(per_seed, moments), "value": pooled},
        pooled,
        T.Declared("pooled", 5.0, row["margin"]),
        unit="correlation",
    )
    assert both.test.p_agree == pytest.approx(max(one.test.p_agree, pool.test.p_agree))
    assert both.test.p_differ == pytest.approx(max(one.test.p_differ, pool.test.p_differ))
    assert both.test.low <= min(one.test.low, pool.test.low) + 1e-12


def test_the_margin_as_a_range_of_d_is_fixed_on_z_and_asymmetric_in_r():
    """The comparison's band_low/band_high (drawn by the forest plot): ±δ on z around the
    printed r, as a range of D = paper − ours in r; it never reaches past −1."""
    prediction = eq.Prediction(float(np.arctanh(-0.947)), 0.01, 4, "t")
    test = eq.equivalence(prediction, -0.947, "z:0.1", Z)
    assert test.band_low == pytest.approx(-0.947 - np.tanh(np.arctanh(-0.947) + 0.1))
    assert test.band_high == pytest.approx(-0.947 - np.tanh(np.arctanh(-0.947) - 0.1))
    assert -0.947 - test.band_high > -1 and test.band_low < 0 < test.band_high
    assert test.band_high < -test.band_low  # towards −1 the same z is less r
