"""Each formula we compute against an independent reference, on one array of data: the identity
table docs/coverage.csv's ``identity:`` checks name (:mod:`isotropy.committed.coverage`). A
reference counts only if it calls no code of this package: one that does is our own reading."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable

import numpy as np
import skdim
import torch
from IsoScore.IsoScore import IsoScore, IsoScore_star
from scipy.spatial.distance import cdist
from sklearn.metrics import silhouette_score
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.neighbors import NearestNeighbors

from isotropy import metrics as M
from isotropy.metrics import objectives as O

K, ZETA, SEED, TOLERANCE = 100, 0.3, 0, 1e-6  # LID's k, IsoScore*'s ζ, the rotation's seed


def _shrink_to(x: np.ndarray, y: np.ndarray) -> torch.Tensor:
    """Σ_S: the covariance of the positive class, regularised as the I-STAR authors advise."""
    return torch.from_numpy(np.cov(x[y].T) + 0.01 * np.eye(x.shape[1]))


def _pairs(x: np.ndarray, y: np.ndarray, same: int) -> float:
    """The mean cosine of the pairs of distinct rows within (``same``) or across the classes."""
    cos, pick = cosine_similarity(x), (y[:, None] == y[None, :]) == bool(same)
    return float(cos[pick & ~np.eye(len(x), dtype=bool)].mean())


def _rotated(x: np.ndarray) -> np.ndarray:
    """``x`` rotated at random, scaled by 3 and shifted by −11."""
    rotation, _ = np.linalg.qr(np.random.default_rng(SEED).normal(size=(x.shape[1],) * 2))
    return 3.0 * x @ rotation - 11.0


def _skdim_lid(x: np.ndarray) -> float:
    """skdim's pointwise MLE, its (k − 1) numerator made Cai et al.'s k."""
    knn = NearestNeighbors(n_neighbors=K).fit(x).kneighbors()
    mle = skdim.id.MLE().fit(x, precomputed_knn_arrays=knn, comb="mean")
    return float(mle.dimension_pw_.mean() * K / (K - 1))


def _cosine(x: np.ndarray) -> torch.Tensor:
    """cos(λ, 1) of the covariance's eigenvalues λ: the isotropy defect's (Mickus et al. §2)."""
    return O.isotropy_cosine(np.linalg.eigvalsh(np.cov(x.T)).clip(min=0))


def _eq1(x: np.ndarray, y: np.ndarray) -> float:
    """Eq. (1) from scipy's pair distances: inter-class sum minus intra-class sum."""
    d, same = cdist(x, x), y[:, None] == y[None, :]
    return float(d[~same].sum() - d[same & ~np.eye(len(x), dtype=bool)].sum())


Pair = Callable[[np.ndarray, np.ndarray], object]
# name: (what we compute, the independent reference); each pair within TOLERANCE on the array
IDENTITIES: dict[str, tuple[Pair, Pair]] = {
    "isoscore": (lambda x, y: M.isoscore(x), lambda x, y: IsoScore(x)),
    "isoscore rotated": (lambda x, y: M.isoscore(x), lambda x, y: IsoScore(_rotated(x))),
    "silhouette": (M.silhouette, silhouette_score),
    "isoscore star": (
        lambda x, y: M.isoscore_star(torch.from_numpy(x), _shrink_to(x, y), ZETA),
        lambda x, y: IsoScore_star(x, _shrink_to(x, y), ZETA),
    ),
    "twonn": (lambda x, y: M.twonn_dimension(x), lambda x, y: skdim.id.TwoNN().fit(x).dimension_),
    "lid": (lambda x, y: M.local_intrinsic_dimension(x, k=K), lambda x, y: _skdim_lid(x)),
    "pca variances": (
        lambda x, y: O.pca_variances_from_distances(x),
        lambda x, y: np.linalg.eigvalsh(np.cov(x.T))[::-1],
    ),
    "defect": (
        lambda x, y: O.isoscore_from_cosine(_cosine(x), x.shape[1]),
        lambda x, y: IsoScore(x),
    ),
    "eq1": (lambda x, y: O.silhouette_objective(x, y.astype(int)), _eq1),
    "s_inter": (lambda x, y: M.s_inter(x, y, max_per_type=len(x)), lambda x, y: _pairs(x, y, 0)),
    "s_intra": (M.s_intra, lambda x, y: np.mean([_pairs(x[y == c], y[y == c], 1) for c in (0, 1)])),
}


def independent(function: Callable, seen: frozenset = frozenset()) -> bool:
    """Whether ``function`` calls no code of this package (this module's helpers are read)."""
    code = function.__code__
    names = [*code.co_names, *(n for c in code.co_consts if inspect.iscode(c) for n in c.co_names)]
    for value in (function.__globals__.get(name) for name in names):
        home = getattr(
            value, "__name__" if isinstance(value, types.ModuleType) else "__module__", ""
        )
        if home == __name__ and inspect.isfunction(value) and value not in seen:
            if not independent(value, seen | {function}):
                return False
        elif str(home).startswith("isotropy"):
            return False
    return True


def identity(name: str, x: np.ndarray, y: np.ndarray) -> tuple[bool, bool]:
    """Whether identity ``name`` holds on ``x`` (labels ``y``) within :data:`TOLERANCE`, and
    whether its reference is independent; ValueError for an unknown name."""
    if name not in IDENTITIES:
        raise ValueError(f"identity {name!r} is none of {sorted(IDENTITIES)}")
    pair = [np.asarray(f(x, y), float) for f in IDENTITIES[name]]
    return bool(np.max(np.abs(pair[0] - pair[1])) <= TOLERANCE), independent(IDENTITIES[name][1])
