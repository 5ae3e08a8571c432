"""The seed-level interval: its arithmetic against an independent computation, and its edges.

Coverage on simulated seeds is checked separately (tests/test_seed_interval_coverage.py)."""

import math

import numpy as np
import pytest
from scipy import stats

from isotropy.statistics import seed_interval, signs_disagree


def test_the_interval_is_the_t_interval_of_fisher_z():
    rs = [0.91, 0.63, 0.76, 0.82, 0.82]
    z = [0.5 * math.log((1 + r) / (1 - r)) for r in rs]
    ci = stats.ttest_1samp(z, 0.0).confidence_interval(0.95)  # scipy's own t-interval
    got = seed_interval(rs)
    assert got.seeds == 5 and got.low is not None
    assert got.low == pytest.approx(math.tanh(ci.low), abs=1e-12)
    assert got.high == pytest.approx(math.tanh(ci.high), abs=1e-12)
    assert got.estimate == pytest.approx(math.tanh(np.mean(z)), abs=1e-12)
    assert got.low < got.estimate < got.high


def test_one_seed_has_no_interval_and_says_so():
    got = seed_interval([-0.97])
    assert got.low is None and got.high is None
    assert got.describe() == "1 seed: no interval"
    assert got.estimate == pytest.approx(-0.97)
    assert seed_interval([-0.3]).estimate == -0.3  # its value exactly: no tanh(artanh(x)) rounding


def test_undefined_seeds_are_counted_not_used():
    got = seed_interval([0.5, math.nan, 0.6])
    assert got.seeds == 2 and got.undefined == 1 and got.low is not None
    empty = seed_interval([math.nan])
    assert empty.seeds == 0 and math.isnan(empty.estimate) and empty.low is None


def test_perfect_agreement_stays_finite():
    got = seed_interval([-1.0, -1.0, -1.0])
    assert got.low == pytest.approx(-1.0) and got.high == pytest.approx(-1.0)


def test_bad_level_is_refused():
    with pytest.raises(ValueError, match="level"):
        seed_interval([0.1, 0.2], level=1.5)


def test_sign_disagreement():
    assert signs_disagree([0.75, 0.68], pooled=-0.31)
    assert signs_disagree([0.85, -0.2])
    assert not signs_disagree([0.85, 0.98], pooled=0.9)
    assert not signs_disagree([0.0, 0.5, math.nan])
