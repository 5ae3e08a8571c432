"""Rajaee & Pilehvar's cluster-based method on the CLS token inside fine-tuning (the Rajaee &
Sheikhi 2020 slides' pipeline: "apply the method to the CLS token of every batch").

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

import torch

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


def cluster_method(n_clusters: int, n_directions: int, seed: int) -> HeadTransform:
    """:func:`cluster_cls` with its settings, as the fine-tuning loop applies it to the head's
    input (:func:`isotropy.finetune.training.finetune`)."""
    return HeadTransform(
        "cluster",
        {"clusters": n_clusters, "directions": n_directions},
        functools.partial(cluster_cls, n_clusters=n_clusters, n_directions=n_directions, seed=seed),
    )
