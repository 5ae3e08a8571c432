"""The I-STAR poster's figures that need no fine-tuning (Rudman & Eickhoff 2024): the estimator
on point clouds of known isotropy (Figures 2-4) and the activations of Figure 1.

Figure 4: IsoScore* against the shrinkage ζ (ζ = 0 is IsoScore) for samples of a Gaussian cloud
of known isotropy, and both estimators against the mini-batch size; Figures 2-3: two clouds of
average cosine 0.978 and 0.005 with their IsoScore; Figure 1: the mean activation per dimension;
the poster's line, circle and sphere, k of d = 3 dimensions used, IsoScore (k - 1)/(d - 1).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from isotropy import metrics


def spectrum(d: int, ratio: float) -> np.ndarray:
    """Variances along the d axes, geometric from 1 down to 1/ratio (ratio 1: isotropic)."""
    if d < 2 or ratio < 1:
        raise ValueError(f"need d >= 2 and ratio >= 1; found d={d}, ratio={ratio}")
    return np.geomspace(1.0, 1.0 / ratio, d)


def true_isoscore(variances: np.ndarray) -> float:
    """IsoScore of the population covariance diag(variances): (tr² / ‖Σ‖_F² − 1)/(d − 1)."""
    v = np.asarray(variances, dtype=np.float64)
    return float((v.sum() ** 2 / (v**2).sum() - 1.0) / (len(v) - 1.0))


def gaussian_sample(variances: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of N(0, diag(variances)) (axis-aligned: IsoScore does not depend on a rotation)."""
    return rng.normal(size=(n, len(variances))) * np.sqrt(variances)


def reference_covariance(variances: np.ndarray, size: int, rng: np.random.Generator):
    """Σ_S, the covariance of ``size`` draws of the cloud (the poster's "large sample"): the first
    draws of the run's generator, so every later sample depends on the seed as before."""
    return metrics.covariance(torch.from_numpy(gaussian_sample(variances, size, rng)))


def zeta_curves(
    variances: np.ndarray, sizes: list[int], zetas: list[float], reference_size: int, seed: int
) -> pd.DataFrame:
    """IsoScore*(ζ) of one seeded sample per size, shrunk towards Σ_S of ``reference_size`` draws.

    Columns: n, zeta, isoscore_star, true_isoscore (the dashed line), isoscore (ζ = 0 directly).
    """
    rng = np.random.default_rng(seed)
    reference = reference_covariance(variances, reference_size, rng)
    truth = true_isoscore(variances)
    rows = []
    for n in sizes:
        x = torch.from_numpy(gaussian_sample(variances, n, rng))
        plain = metrics.isoscore(x)
        for zeta in map(float, zetas):
            value = float(metrics.isoscore_star(x, reference, zeta=zeta))
            rows.append(
                dict(n=n, zeta=zeta, isoscore_star=value, isoscore=plain, true_isoscore=truth)
            )
    return pd.DataFrame(rows)


def minibatch_stability(
    variances: np.ndarray,
    batch_sizes: list[int],
    draws: int,
    zeta: float,
    reference_size: int,
    seed: int,
) -> pd.DataFrame:
    """IsoScore and IsoScore*(ζ) over ``draws`` seeded mini-batches per size: mean, std, and the
    mean absolute error against the true isotropy, one row per (batch size, estimator)."""
    rng = np.random.default_rng(seed)
    reference = reference_covariance(variances, reference_size, rng)
    truth = true_isoscore(variances)
    rows = []
    for size in batch_sizes:
        plain, shrunk = [], []
        for _ in range(draws):
            x = torch.from_numpy(gaussian_sample(variances, size, rng))
            plain.append(metrics.isoscore(x))
            shrunk.append(float(metrics.isoscore_star(x, reference, zeta=zeta)))
        for name, values in (("IsoScore", plain), (f"IsoScore* (ζ = {zeta:g})", shrunk)):
            arr = np.array(values)
            row = dict(batch_size=size, estimator=name, mean=arr.mean(), std=arr.std(ddof=1))
            row |= dict(mean_abs_error=np.abs(arr - truth).mean(), true_isoscore=truth)
            rows.append(row | {"draws": draws})
    return pd.DataFrame(rows)


def average_cosine(points: np.ndarray) -> float:
    """Mean cosine over ordered pairs of distinct points, exactly: (‖Σ_i x̂_i‖² − n)/(n(n − 1))."""
    unit = points / np.linalg.norm(points, axis=1, keepdims=True)
    n = len(unit)
    total = unit.sum(axis=0)
    return float((total @ total - n) / (n * (n - 1)))


def _offset_for_cosine(base: np.ndarray, direction: np.ndarray, target: float) -> float:
    """The shift t along ``direction`` giving ``base + t·direction`` the average cosine ``target``
    (bisection; the average cosine rises with t for the clouds built here)."""

    def gap(t: float) -> float:
        return average_cosine(base + t * direction) - target

    low, high = 0.0, 1.0
    while gap(high) < 0:
        high *= 2
        if high > 1e6:
            raise ValueError(f"no shift reaches average cosine {target}")
    if gap(low) > 0:
        raise ValueError(f"the unshifted cloud already exceeds average cosine {target}")
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if gap(mid) < 0 else (low, mid)
    return (low + high) / 2


def cosine_clouds(
    targets: tuple[float, float], n: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two 2-D clouds of ``n`` points (the line: n rounded down to even): an isotropic Gaussian
    shifted until its average cosine is ``targets[0]``, and a thin line through the origin shifted
    along itself until it is ``targets[1]``, the average cosine over all pairs
    (:func:`average_cosine`). Returns the points (cloud, x, y) and a summary (cloud, average cosine
    exact and over 10,000 random pairs, IsoScore, shift)."""
    rng = np.random.default_rng(seed)
    isotropic = rng.normal(size=(n, 2))
    half = np.column_stack([rng.normal(size=n // 2), 0.05 * rng.normal(size=n // 2)])
    line = np.concatenate([half, -half])  # symmetric: average cosine -1/(n - 1) before the shift
    clouds, summary = [], []
    for name, base, direction, target in (
        ("isotropic, shifted", isotropic, np.array([1.0, 1.0]) / math.sqrt(2), targets[0]),
        ("line through the origin", line, np.array([1.0, 0.0]), targets[1]),
    ):
        shift = _offset_for_cosine(base, direction, target)
        points = base + shift * direction
        clouds.append(pd.DataFrame({"cloud": name, "x": points[:, 0], "y": points[:, 1]}))
        summary.append(
            {
                "cloud": name,
                "target_average_cosine": target,
                "average_cosine": average_cosine(points),
                "average_cosine_random_pairs": metrics.average_cosine_similarity(points),
                "isoscore": metrics.isoscore(points),
                "shift": shift,
                "n": n,
            }
        )
    return pd.concat(clouds, ignore_index=True), pd.DataFrame(summary)


# The poster's shapes: how many of the 3 dimensions each uses, all equally.
SHAPES = {"line": 1, "circle": 2, "sphere": 3}


def shape_tolerance(n: int) -> float:
    """How far a sample of ``n`` points may miss (k - 1)/(d - 1): 15/n. A sample's IsoScore falls
    short of its population's by O(1/n); over 300 seeded draws of the circle and the sphere the
    largest miss was 0.11, 0.020 and 0.0058 at n = 100, 500 and 2,000 (under 11/n each)."""
    return 15.0 / n


def shape_points(shape: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` points uniform on an axis-aligned unit line segment, circle or sphere in 3-D."""
    if shape == "line":
        return np.column_stack([rng.uniform(-1.0, 1.0, n), np.zeros(n), np.zeros(n)])
    if shape == "circle":
        angles = rng.uniform(0.0, 2 * math.pi, n)
        return np.column_stack([np.cos(angles), np.sin(angles), np.zeros(n)])
    if shape == "sphere":
        gauss = rng.normal(size=(n, 3))  # a normalised Gaussian is uniform on the sphere
        return gauss / np.linalg.norm(gauss, axis=1, keepdims=True)
    raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")


def judge_shape(points: np.ndarray, used: int) -> dict[str, float | bool]:
    """IsoScore of a cloud against (k - 1)/(d - 1) for ``used`` = k of its d dimensions, within
    :func:`shape_tolerance`."""
    n, d = points.shape
    expected, tolerance = (used - 1) / (d - 1), shape_tolerance(n)
    score = metrics.isoscore(points)
    return {
        "dimensions_used": used,
        "d": d,
        "expected": expected,
        "isoscore": score,
        "tolerance": tolerance,
        "holds": abs(score - expected) <= tolerance,
    }


def shape_clouds(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The line, circle and sphere of ``n`` points each: the points (shape, x, y, z) and one
    summary row per shape (:func:`judge_shape`)."""
    rng = np.random.default_rng(seed)
    clouds, summary = [], []
    for shape, used in SHAPES.items():
        points = shape_points(shape, n, rng)
        clouds.append(pd.DataFrame(points, columns=["x", "y", "z"]).assign(shape=shape))
        summary.append({"shape": shape, "n": n, **judge_shape(points, used)})
    points_table = pd.concat(clouds, ignore_index=True)[["shape", "x", "y", "z"]]
    return points_table, pd.DataFrame(summary)


def average_activation(vectors: np.ndarray) -> pd.DataFrame:
    """Figure 1: the mean (and std) activation of each dimension over the sentence embeddings
    (rows): a few "rogue" dimensions far from 0 make the average cosine high without the cloud
    being spread along them."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"need an (n >= 2, d) array of sentence embeddings; found shape {x.shape}")
    return pd.DataFrame(
        {
            "dimension": np.arange(x.shape[1]),
            "mean_activation": x.mean(axis=0),
            "std_activation": x.std(axis=0, ddof=1),
        }
    )


def activation_summary(vectors: np.ndarray) -> dict[str, float]:
    """The numbers beside Figure 1: the largest |mean activation| over the median one, the share
    of the squared mean vector's norm in the top 3 dimensions, average cosine and IsoScore."""
    table = average_activation(vectors)
    magnitude = np.sort(np.abs(table["mean_activation"].to_numpy()))[::-1]
    return {
        "sentences": float(len(vectors)),
        "dim": float(np.asarray(vectors).shape[1]),
        "max_over_median_abs_mean": float(magnitude[0] / np.median(magnitude)),
        "top3_share_of_mean_norm2": float((magnitude[:3] ** 2).sum() / (magnitude**2).sum()),
        "average_cosine": average_cosine(np.asarray(vectors, dtype=np.float64)),
        "isoscore": metrics.isoscore(np.asarray(vectors, dtype=np.float64)),
    }
