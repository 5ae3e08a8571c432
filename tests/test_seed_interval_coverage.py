"""The interval over seeds means what it says: on simulated seeds of trajectories
shaped like the real ones (tests/seed_simulator.py), the nominal 95% interval covers the truth in
at least 90% of replications at 5 seeds, and it does not move when only the stride changes."""

from __future__ import annotations

import numpy as np
import pytest
import seed_simulator as sim

from isotropy.statistics import seed_interval

SEEDS = 5
REPLICATIONS = 1000


@pytest.mark.parametrize("stride", [1, 10])  # main: every update; a preview: every 10th
@pytest.mark.parametrize("shape", sim.SHAPES)
def test_the_95_percent_interval_covers_the_mean_population_r(shape, stride):
    truth = sim.population_truth(shape)  # mean over seeds of each seed's r over every update
    rng = np.random.default_rng(2024)
    covered, widths = 0, []
    for _ in range(REPLICATIONS):
        interval = seed_interval(sim.seed_correlations(shape, SEEDS, rng, stride), level=0.95)
        assert interval.seeds == SEEDS and interval.low is not None
        covered += interval.low <= truth <= interval.high
        widths.append(interval.high - interval.low)
    assert covered / REPLICATIONS >= 0.90, (shape, stride, covered / REPLICATIONS)
    assert np.median(widths) < 0.5  # an interval that covers by spanning everything says nothing


@pytest.mark.parametrize("shape", sim.SHAPES)
def test_the_interval_does_not_move_when_only_the_stride_changes(shape):
    """The same noise-free seeds recorded every 1, 2, 5 and 10 updates (1,001 to 101 points): the
    bounds stay within 0.05 and the width does not shrink as points are added (the within-run
    bootstrap's interval narrowed threefold from 101 to 1,001 points on such curves)."""
    for draw in range(20):
        bounds = []
        for stride in (1, 2, 5, 10):
            steps = np.arange(0, sim.UPDATES + 1, stride)
            curves = sim.trajectories(shape, SEEDS, np.random.default_rng(draw), steps)
            interval = seed_interval(sim.pearson_rows(*curves))
            bounds.append((interval.low, interval.high))
        bounds = np.array(bounds)
        assert np.abs(bounds - bounds[0]).max() < 0.05, (shape, draw, bounds)
        widths = bounds[:, 1] - bounds[:, 0]
        assert 0.8 < widths[0] / widths[-1] < 1.25, (shape, draw, widths)


def test_the_simulated_shapes_are_the_real_ones():
    """fall: IsoScore falls monotonically; dip: a minimum inside the run, then a recovery;
    phases: a plateau between two changes. Silhouette rises in all three; seeds differ."""
    steps = np.arange(0, sim.UPDATES + 1)
    rng = np.random.default_rng(0)
    iso, sil = sim.trajectories("fall", 3, rng, steps)
    assert (np.diff(iso, axis=1) <= 0).all() and (sil[:, -1] > sil[:, 0]).all()
    iso, sil = sim.trajectories("dip", 3, rng, steps)
    low = iso.argmin(axis=1)
    assert ((100 < low) & (low < 600)).all() and (iso[:, -1] > iso.min(axis=1) + 0.005).all()
    iso, sil = sim.trajectories("phases", 3, rng, steps)
    slope = np.abs(np.diff(iso, axis=1))
    assert (slope[:, 300] < slope[:, 20] / 5).all() and (slope[:, 300] < slope.max(axis=1)).all()
    assert len({round(r, 6) for r in sim.pearson_rows(iso, sil)}) == 3
    with pytest.raises(ValueError, match="unknown shape"):
        sim.trajectories("spiral", 1, rng, steps)
