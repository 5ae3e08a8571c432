"""Cosine similarities: the average over random pairs (Ethayarajh 2019), S_inter and S_intra of
Cai et al. (2021), and their per-cluster statistics.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import torch

from isotropy.metrics.checks import ArrayLike, checked_cluster_ids, checked_points
from isotropy.metrics.clusters import cluster_centred

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------------------------
# cosine similarities (Ethayarajh 2019; Cai et al. 2021)
# ----------------------------------------------------------------------------------------------


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    x = x.detach().to(torch.float64)
    norms = torch.linalg.vector_norm(x, dim=1)
    zero = int((norms == 0).sum())
    if zero:
        raise ValueError(f"found {zero} all-zero vectors; cosine similarity needs non-zero vectors")
    return x / norms[:, None]


def average_cosine_similarity(points: ArrayLike, n_pairs: int = 10000, seed: int = 0) -> float:
    """Mean cosine similarity of ``n_pairs`` uniformly random pairs of distinct points (seeded)."""
    x = checked_points(points, min_rows=2)
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1; found {n_pairs}")
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, size=n_pairs)
    second = rng.integers(0, n - 1, size=n_pairs)
    second = second + (second >= first)  # uniform over j != i
    with torch.no_grad():
        unit = unit_rows(x)
        i = torch.from_numpy(first).to(unit.device)
        j = torch.from_numpy(second).to(unit.device)
        return float((unit[i] * unit[j]).sum(dim=1).mean())


def _type_groups(types, n: int, max_per_type: int | None, seed: int) -> list[np.ndarray]:
    """Row indices per type, each capped at ``max_per_type`` rows drawn without replacement."""
    if max_per_type is not None and max_per_type < 1:
        raise ValueError(
            f"max_per_type must be a positive number of instances; found {max_per_type}"
        )
    ids = checked_cluster_ids(types, n, name="types")
    order = np.argsort(ids, kind="stable")
    bounds = np.flatnonzero(np.diff(ids[order])) + 1
    groups = np.split(order, bounds)
    rng = np.random.default_rng(seed)
    if max_per_type is not None:
        groups = [
            g if len(g) <= max_per_type else np.sort(rng.choice(g, max_per_type, replace=False))
            for g in groups
        ]
    return groups


def _type_sums(unit: torch.Tensor, groups: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """The unit rows of the groups, in group order, and each group's sum (groups x d)."""
    rows = torch.from_numpy(np.concatenate(groups)).to(unit.device)
    sizes = np.array([len(g) for g in groups])
    group_of = torch.from_numpy(np.repeat(np.arange(len(groups)), sizes)).to(unit.device)
    chosen = unit[rows]
    per_type = torch.zeros(len(groups), chosen.shape[1], dtype=torch.float64, device=unit.device)
    return chosen, per_type.index_add_(0, group_of, chosen)


def s_inter(points: ArrayLike, types, *, max_per_type: int | None = None, seed: int = 0) -> float:
    """Inter-type cosine similarity S_inter of Cai et al. (2021): the mean cosine between
    embeddings of *different* types, one random instance per type (their definition) or, with
    ``max_per_type=m``, up to m random instances per type."""
    x = checked_points(points, min_rows=2)
    groups = _type_groups(types, x.shape[0], max_per_type, seed)
    if len(groups) < 2:
        raise ValueError(f"found {len(groups)} type(s); S_inter needs at least 2 distinct types")
    if max_per_type is None:
        rng = np.random.default_rng(seed)
        groups = [g[[rng.integers(len(g))]] for g in groups]
    with torch.no_grad():
        chosen, per_type = _type_sums(unit_rows(x), groups)
        total, sizes = chosen.sum(dim=0), np.array([len(g) for g in groups])
        # sum over ordered cross-type pairs = |Σu|² - Σ_t |Σ_{u∈t} u|²
        cross = (total @ total) - (per_type * per_type).sum()
        n_cross = float(sizes.sum() ** 2 - (sizes**2).sum())
        return float(cross / n_cross)


def s_intra(points: ArrayLike, types, *, max_per_type: int | None = None, seed: int = 0) -> float:
    """Intra-type cosine similarity S_intra of Cai et al. (2021): the mean over types with two or
    more instances (capped at ``max_per_type``) of the mean cosine between distinct instances."""
    x = checked_points(points, min_rows=2)
    groups = [g for g in _type_groups(types, x.shape[0], max_per_type, seed) if len(g) >= 2]
    if not groups:
        raise ValueError("no type has two or more instances; S_intra needs repeated types")
    with torch.no_grad():
        _, per_type = _type_sums(unit_rows(x), groups)
        sizes = torch.tensor([len(g) for g in groups], dtype=torch.float64, device=per_type.device)
        # mean over distinct pairs within a type = (|Σu|² - m) / (m (m - 1))
        within = ((per_type * per_type).sum(dim=1) - sizes) / (sizes * (sizes - 1))
        return float(within.mean())


def per_cluster_cosine_statistics(
    points: ArrayLike,
    types,
    clusters,
    *,
    max_per_type: int | None = None,
    seed: int = 0,
    statistics: tuple[str, ...] = ("s_inter", "s_intra"),
) -> dict[str, float]:
    """Cai et al.'s cluster-adjusted S_inter and S_intra (their code's ``--cluster_cos --center``):
    each cluster centred on its mean, the statistic on the pairs inside it, the unweighted mean
    over the clusters where it is defined (NaN, logged, where none is); with
    ``clusters_inter``/``clusters_intra``, how many clusters each mean is over."""
    x = cluster_centred(points, clusters)
    ids = checked_cluster_ids(clusters, x.shape[0], name="clusters")
    type_ids = checked_cluster_ids(types, x.shape[0], name="types")
    inter, intra = [], []
    for cluster in np.unique(ids):
        members = np.flatnonzero(ids == cluster)
        member_types = type_ids[members]
        distinct = len(np.unique(member_types))
        if "s_inter" in statistics and distinct >= 2:
            inter.append(s_inter(x[members], member_types, max_per_type=max_per_type, seed=seed))
        if "s_intra" in statistics and len(members) > distinct:  # a type repeats
            intra.append(s_intra(x[members], member_types, max_per_type=max_per_type, seed=seed))
    means = {"s_inter": inter, "s_intra": intra}
    for name in statistics:
        if not means[name]:
            log.warning("per-cluster %s is undefined: no cluster has the pairs it needs", name)
    found = {name: float(np.mean(means[name])) if means[name] else math.nan for name in statistics}
    return {**found, "clusters_inter": len(inter), "clusters_intra": len(intra)}
