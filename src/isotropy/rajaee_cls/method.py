"""Rajaee & Pilehvar's cluster-based method on the CLS token inside fine-tuning (the Rajaee &
Sheikhi 2020 slides' pipeline: "apply the method to the CLS token of every batch"), and one run
of the study: fine-tuning with method ``none`` or ``cluster`` (config ``rajaee_cls.methods``).

The method is a transform of the head's input, not a penalty: in every batch, training and
evaluation alike (:class:`isotropy.finetune.head.HeadTransform`), the position-0 state that the
task head reads is replaced by its cluster-based version over the batch: k-means on the batch's
CLS states, each cluster centred on its own mean and its top principal directions removed
(:func:`isotropy.transforms.fit_cluster_transform`, the same fit the STS path uses). The
clusters and directions are fitted on detached values and held fixed in the batch; the centring
and the projection are applied to the tensor, so the gradient flows through them.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from typing import Any

import torch

from isotropy.finetune import training
from isotropy.finetune.head import HeadTransform
from isotropy.transforms import fit_cluster_transform

log = logging.getLogger(__name__)


def cluster_cls(
    states: torch.Tensor, n_clusters: int, n_directions: int, seed: int
) -> torch.Tensor:
    """The cluster-based method on a batch of CLS states (batch × dim), differentiably.

    ``n_clusters`` is cut to the batch size (a last, short batch); fewer than 2 states are
    returned unchanged (nothing to cluster).
    """
    if states.shape[0] < 2:
        return states
    clusters = min(n_clusters, states.shape[0])
    points = states.detach().double().cpu().numpy()
    fit = fit_cluster_transform(points, clusters, n_directions, seed=seed, method="kmeans")
    out = states.clone()
    labels = torch.from_numpy(fit.labels).to(states.device)
    for cluster, top in fit.directions.items():
        if not fit.centred[cluster]:
            continue
        members = labels == cluster
        block = states[members] - states[members].mean(dim=0)
        if len(top):
            basis = torch.from_numpy(top).to(device=states.device, dtype=states.dtype)
            block = block - (block @ basis.T) @ basis
        out[members] = block
    return out


# Without and with the method.
METHODS = ("none", "cluster")


@dataclass(frozen=True)
class ClusterSettings:
    """The method's settings (config ``rajaee_cls.cluster_method``): k-means clusters over a
    batch's CLS states and top directions removed per cluster (a batch of 32 holds too few states
    for the STS path's 27 and 12)."""

    clusters: int = 3
    directions: int = 2


def head_transform(method: str, settings: ClusterSettings, seed: int) -> HeadTransform | None:
    """What the run applies to the head's CLS input: nothing (``none``) or :func:`cluster_cls`
    with ``settings``, its k-means seeded with the run's seed (``cluster``)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    if method == "none":
        return None
    return HeadTransform(
        "cluster",
        {"clusters": settings.clusters, "directions": settings.directions},
        functools.partial(
            cluster_cls,
            n_clusters=settings.clusters,
            n_directions=settings.directions,
            seed=seed,
        ),
    )


def finetune_with_method(
    method: str, cluster: ClusterSettings, seed: int, **run: Any
) -> dict[str, Any]:
    """One run of the study: :func:`isotropy.finetune.training.finetune` with no penalty in the
    loss and ``method`` on the head's input; ``run`` holds the loop's other arguments (model_spec,
    task, out_dir, data, settings, device)."""
    transform = head_transform(method, cluster, seed)
    return training.finetune(
        regulariser="none", lam=0.0, seed=seed, head_transform=transform, **run
    )


def run_and_save(
    metrics_path: str | os.PathLike, method: str, cluster: ClusterSettings, seed: int, **run: Any
) -> dict[str, Any]:
    """:func:`finetune_with_method` written to ``metrics_path`` as
    :func:`isotropy.finetune.training.run_and_save` writes a run."""
    transform = head_transform(method, cluster, seed)
    return training.run_and_save(
        metrics_path, regulariser="none", lam=0.0, seed=seed, head_transform=transform, **run
    )
