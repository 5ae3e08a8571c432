"""Simulated seeds of an optimisation run: noise-free IsoScore and silhouette trajectories shaped
like the real ones, each seed's shape parameters jittered (a real run is deterministic given its
seed, so a seed is one draw of a smooth trajectory). Three shapes, after the main study's runs:

- ``fall``: IsoScore falls monotonically towards a floor while silhouette rises (polarity, SNLI);
- ``dip``: IsoScore falls to a minimum, then recovers part of the way while silhouette keeps
  rising (MiniLM supersense: 0.365 → 0.03 at step 250 → 0.06);
- ``phases``: two phases, a fast fall and rise, a plateau, then a second, slower change (POS).

The seed-level truth of a shape is the mean over seeds of the seed's *population* r: the Pearson
r of its curves over every update of the run (:func:`population_truth`, by Monte Carlo).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SHAPES = ("fall", "dip", "phases")
UPDATES = 1000


def _jitter(rng: np.random.Generator, size: int, centre: float, relative: float) -> np.ndarray:
    """``size`` values around ``centre``, log-normally jittered by about ``relative`` (sd)."""
    return centre * np.exp(relative * rng.standard_normal(size))


def trajectories(
    shape: str, seeds: int, rng: np.random.Generator, steps: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """IsoScore and silhouette of ``seeds`` simulated runs at ``steps``: two arrays (seeds,
    steps)."""
    t = np.asarray(steps, dtype=np.float64)[None, :]
    if shape == "fall":
        tau_i = _jitter(rng, seeds, 120.0, 0.3)[:, None]
        tau_s = _jitter(rng, seeds, 200.0, 0.3)[:, None]
        floor = _jitter(rng, seeds, 0.01, 0.3)[:, None]
        iso = floor + (0.30 - floor) * np.exp(-t / tau_i)
        sil = 0.02 + _jitter(rng, seeds, 0.25, 0.1)[:, None] * (1 - np.exp(-t / tau_s))
    elif shape == "dip":
        dip = _jitter(rng, seeds, 250.0, 0.25)[:, None]  # the step of IsoScore's minimum
        recovery = _jitter(rng, seeds, 0.03, 0.4)[:, None]
        rise = _jitter(rng, seeds, 150.0, 0.3)[:, None]
        fall = 0.03 + 0.335 * np.exp(-3 * t / dip)
        back = recovery * np.clip((t - dip) / (UPDATES - dip), 0, None) ** 0.5
        iso = fall + back
        sil = -0.05 + _jitter(rng, seeds, 0.2, 0.15)[:, None] * (1 - np.exp(-t / rise))
    elif shape == "phases":
        first = _jitter(rng, seeds, 60.0, 0.3)[:, None]
        second = _jitter(rng, seeds, 600.0, 0.15)[:, None]
        width = _jitter(rng, seeds, 80.0, 0.3)[:, None]
        share = np.clip(0.6 + 0.1 * rng.standard_normal(seeds), 0.3, 0.9)[:, None]
        phase2 = 1 / (1 + np.exp(-(t - second) / width))
        iso = 0.11 - 0.05 * (share * (1 - np.exp(-t / first)) + (1 - share) * phase2)
        lag = _jitter(rng, seeds, 1.5, 0.3)[:, None]
        sil = -0.09 + 0.26 * (share * (1 - np.exp(-t / (lag * first))) + (1 - share) * phase2)
    else:
        raise ValueError(f"unknown shape {shape!r}; known: {SHAPES}")
    return iso, sil


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two (runs, steps) arrays."""
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    return (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))


def seed_correlations(shape: str, seeds: int, rng: np.random.Generator, stride: int) -> np.ndarray:
    """Each simulated seed's Pearson r over the steps recorded every ``stride`` updates."""
    iso, sil = trajectories(shape, seeds, rng, np.arange(0, UPDATES + 1, stride))
    return pearson_rows(iso, sil)


def population_truth(shape: str, draws: int = 20000, seed: int = 12345) -> float:
    """The truth the interval should cover: the mean over seeds of each seed's population r
    (its curves at every update), estimated from ``draws`` simulated seeds."""
    return float(seed_correlations(shape, draws, np.random.default_rng(seed), 1).mean())


def trace_rows(
    seed: int, steps, isoscore, silhouette, encoder: str = "miniLM", dataset: str = "polarity"
) -> list[dict]:
    """One run's trace rows: IsoScore and silhouette at each recorded step."""
    return [
        {
            "encoder": encoder,
            "dataset": dataset,
            "seed": seed,
            "step": int(k),
            "isoscore": float(a),
            "silhouette": float(b),
        }
        for k, a, b in zip(steps, isoscore, silhouette)
    ]


def seed_measurement(quantity: str, setup: str, paper_setup: str, per_seed, **rest) -> dict:
    """The main study's measurement of ``quantity`` whose value is the mean of its seeds'
    (``rest``: its other columns)."""
    from isotropy.verdicts.measurements import measurement

    value = float(np.mean(per_seed))
    seeds = rest.pop("seeds", len(per_seed))
    return measurement(
        "main", quantity, setup, paper_setup, value, per_seed=per_seed, seeds=seeds, **rest
    )


def measured(traces: pd.DataFrame, config=None, stand=None, study: str = "main", correlations=None):
    """A direct-optimisation study's measurements of ``traces`` and their correlation table (or
    ``correlations``), as rules check_claims and compare_with_papers make them."""
    from isotropy import studies
    from isotropy.standins import StandIns
    from isotropy.summaries import correlation_table
    from isotropy.verdicts.measurements import measure

    if correlations is None:
        correlations = correlation_table(traces, ["encoder", "dataset"])
    table = "correlations" if study == "main" else "table3"
    tables = {f"{study}_traces": traces, f"{study}_{table}": correlations}
    return measure(tables, config or {}, stand or StandIns(), studies.table_measures())
