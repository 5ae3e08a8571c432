"""Confidence intervals for the correlation of IsoScore and silhouette along optimisation runs.

The recorded steps of one run are a trajectory: each state is the previous one plus one Adam
update, so neighbouring steps are strongly autocorrelated and resampling single steps as if
they were independent would give intervals far too narrow. We resample in two stages:

1. **seeds** (independent runs, differing in the classifier's initialisation and the metric
   samples) with replacement, when a scope pools more than one seed;
2. **steps in blocks** within each drawn run: a moving-block bootstrap (Künsch 1989) that
   draws runs of ``block_length`` consecutive recorded steps, so the dependence within a block
   is kept. Default block length: ``ceil(n ** (1/3))`` for ``n`` recorded steps per run, the
   order Hall, Horowitz & Jing (1995) give for variance and interval estimation.

Pearson r and Spearman ρ are recomputed on every resample; the interval is the percentile
interval of those values. A scope of one seed (``seed<k>`` rows) has only the second stage, so
its interval is conditional on that run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class BootstrapSettings:
    """How intervals are drawn; config ``bootstrap`` (schemas/config.schema.yaml)."""

    resamples: int = 1000
    level: float = 0.95
    block_length: int | None = None  # None: ceil(n ** (1/3)) recorded steps
    seed: int = 0

    def __post_init__(self) -> None:
        if self.resamples < 2:
            raise ValueError(f"bootstrap resamples must be >= 2, got {self.resamples}")
        if not 0 < self.level < 1:
            raise ValueError(f"bootstrap level must lie in (0, 1), got {self.level}")
        if self.block_length is not None and self.block_length < 1:
            raise ValueError(
                f"bootstrap block_length must be >= 1 or null, got {self.block_length}"
            )


def block_length_for(points: int, settings: BootstrapSettings) -> int:
    """The block length used for runs of ``points`` recorded steps (never longer than a run)."""
    length = settings.block_length or math.ceil(points ** (1 / 3))
    return max(1, min(length, points))


def describe(settings: BootstrapSettings, points_per_run: int, seeds: int) -> str:
    """One phrase naming the interval, for tables and figure captions."""
    level = f"{100 * settings.level:g}%"
    blocks = f"blocks of {block_length_for(points_per_run, settings)} recorded steps"
    over = f"seeds and {blocks}" if seeds > 1 else blocks
    return f"{level} bootstrap over {over}, {settings.resamples} resamples"


def resample_indices(
    run_lengths: Sequence[int], settings: BootstrapSettings, rng: np.random.Generator
) -> list[np.ndarray]:
    """Indices into the runs laid end to end, one array per resample (two-stage, see module doc)."""
    offsets = np.concatenate([[0], np.cumsum(run_lengths)[:-1]]).astype(np.int64)
    runs = len(run_lengths)
    draws = []
    for _ in range(settings.resamples):
        chosen = rng.integers(0, runs, size=runs) if runs > 1 else np.zeros(1, dtype=np.int64)
        parts = []
        for run in chosen:
            n = int(run_lengths[run])
            length = block_length_for(n, settings)
            blocks = -(-n // length)
            starts = rng.integers(0, n - length + 1, size=blocks)
            steps = (starts[:, None] + np.arange(length)).ravel()[:n]
            parts.append(offsets[run] + steps)
        draws.append(np.concatenate(parts))
    return draws


def _correlations(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan  # undefined on a constant series
    pearson = float(np.corrcoef(x, y)[0, 1])
    spearman = float(np.corrcoef(stats.rankdata(x), stats.rankdata(y))[0, 1])
    return pearson, spearman


def correlation_intervals(
    runs: Sequence[tuple[np.ndarray, np.ndarray]], settings: BootstrapSettings
) -> dict[str, float]:
    """Percentile intervals of Pearson r and Spearman ρ for (isoscore, silhouette) series per run.

    ``runs``: one pair of arrays per seed, in step order. Returns ``pearson_r_ci_low``,
    ``pearson_r_ci_high``, ``spearman_rho_ci_low``, ``spearman_rho_ci_high`` (NaN where the
    correlation is undefined in more than half of the resamples).
    """
    x = np.concatenate([np.asarray(run[0], dtype=np.float64) for run in runs])
    y = np.concatenate([np.asarray(run[1], dtype=np.float64) for run in runs])
    rng = np.random.default_rng(settings.seed)
    values = np.array(
        [
            _correlations(x[idx], y[idx])
            for idx in resample_indices([len(run[0]) for run in runs], settings, rng)
        ]
    )
    tail = 100 * (1 - settings.level) / 2
    result = {}
    for column, name in enumerate(("pearson_r", "spearman_rho")):
        finite = values[np.isfinite(values[:, column]), column]
        if len(finite) * 2 < len(values):
            low = high = math.nan
        else:
            low, high = np.percentile(finite, [tail, 100 - tail])
        result[f"{name}_ci_low"] = float(low)
        result[f"{name}_ci_high"] = float(high)
    return result
