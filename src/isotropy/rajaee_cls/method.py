"""Rajaee & Pilehvar's cluster-based method on the CLS token inside fine-tuning (the Rajaee &
Sheikhi 2020 slides' pipeline: "apply the method to the CLS token of every batch"), and one run
of the study: fine-tuning with method ``none`` or ``cluster`` (config ``rajaee_cls.methods``).

The method is a transform of the head's input, not a penalty: in every batch, training and
evaluation alike (:class:`isotropy.finetune.head.HeadTransform`), the position-0 state that the
task head reads is replaced by its cluster-based version: k-means on CLS states, each cluster
centred on its mean and its top principal directions removed
(:func:`isotropy.transforms.fit_cluster_transform`, the same fit the STS path uses). Fitted
(``ClusterMethod.fit``) on the training set's CLS states before every epoch and after training
(``offline``, the default: :class:`OfflineClusters`), or on each batch's own states (``batch``:
:func:`cluster_cls`); docs/methods.md says why offline. The clusters and directions are fitted on
detached values and held fixed; the centring and the projection are applied to the tensor, so
the gradient flows through them.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from isotropy.configuration.studies import ClusterMethod
from isotropy.finetune import training
from isotropy.finetune.features import Features, collate, model_inputs, to_device
from isotropy.finetune.head import HeadTransform
from isotropy.transforms import fit_cluster_transform

log = logging.getLogger(__name__)


def cluster_cls(
    states: torch.Tensor, n_clusters: int, n_directions: int, seed: int
) -> torch.Tensor:
    """The cluster-based method fitted on a batch of CLS states (batch × dim), differentiably:
    each cluster centred on its own mean in the batch (the gradient flows through the mean too).

    ``n_clusters`` is cut to the batch size (a last, short batch); fewer than 2 states are
    returned unchanged (nothing to cluster).
    """
    if states.shape[0] < 2:
        return states
    clusters = min(n_clusters, states.shape[0])
    points = states.detach().double().cpu().numpy()
    fit = fit_cluster_transform(points, clusters, n_directions, seed=seed, method="kmeans")
    labels = torch.from_numpy(fit.labels).to(states.device)
    return _centre_and_project(states, labels, fit.centred, fit.directions)


def _centre_and_project(
    states: torch.Tensor,
    labels: torch.Tensor,
    centred: dict[int, bool],
    directions: dict[int, np.ndarray],
    means: np.ndarray | None = None,
) -> torch.Tensor:
    """Each cluster's states minus its centre (``means[cluster]``, or the members' own mean when
    None), less their projection on the cluster's directions; an uncentred cluster unchanged."""
    out = states.clone()
    for cluster, top in directions.items():
        members = labels == cluster
        if not centred[cluster] or not bool(members.any()):
            continue
        if means is None:
            centre = states[members].mean(dim=0)
        else:
            centre = torch.from_numpy(means[cluster]).to(device=states.device, dtype=states.dtype)
        block = states[members] - centre
        if len(top):
            basis = torch.from_numpy(top).to(device=states.device, dtype=states.dtype)
            block = block - (block @ basis.T) @ basis
        out[members] = block
    return out


@dataclass(frozen=True)
class OfflineFit:
    """The method fitted once on a set of CLS states (the training set's): the clusters' means
    (clusters × dim; a state belongs to the nearest), which are centred, and their directions."""

    means: np.ndarray
    centred: dict[int, bool]
    directions: dict[int, np.ndarray]

    @classmethod
    def fit(cls, points: np.ndarray, n_clusters: int, n_directions: int, seed: int) -> OfflineFit:
        fit = fit_cluster_transform(points, n_clusters, n_directions, seed=seed, method="kmeans")
        means = np.stack([points[fit.labels == c].mean(axis=0) for c in sorted(fit.directions)])
        return cls(means, fit.centred, fit.directions)

    def assign(self, states: torch.Tensor) -> torch.Tensor:
        """Each state's cluster: the nearest mean."""
        means = torch.from_numpy(self.means).to(device=states.device, dtype=states.dtype)
        return torch.cdist(states.detach(), means).argmin(dim=1)

    def __call__(self, states: torch.Tensor) -> torch.Tensor:
        """The fitted method on any states, each on its own (differentiably): its cluster's
        training mean subtracted and that cluster's directions removed."""
        return _centre_and_project(
            states, self.assign(states), self.centred, self.directions, self.means
        )


@torch.no_grad()
def cls_states(
    model: Any, features: Features, tokenizer: Any, batch_size: int, device
) -> np.ndarray:
    """The last layer's CLS states of ``features`` (what the head reads, before any transform;
    sentences × dim), the model in evaluation mode (no dropout)."""
    was_training = model.training
    model.eval()
    chunks = []
    for indices in torch.arange(len(features)).split(batch_size):
        batch = to_device(collate(features, indices.tolist(), tokenizer), device)
        out = model(**model_inputs(batch), output_hidden_states=True)
        chunks.append(out.hidden_states[-1][:, 0].double().cpu())
    model.train(was_training)
    return torch.cat(chunks).numpy()


class OfflineClusters:
    """The slides' offline variant as a head transform: clusters and directions fitted on the
    training set's CLS states before every epoch and once more after training (``prepare``), and
    applied unchanged to every batch in between, the evaluation's included (so an evaluation
    state's transform does not depend on the other states of its batch). Unfitted (only while its
    first fit reads the states), it passes the states unchanged."""

    def __init__(self, n_clusters: int, n_directions: int, seed: int):
        self.n_clusters, self.n_directions, self.seed = n_clusters, n_directions, seed
        self.fitted: OfflineFit | None = None

    def prepare(self, model: Any, features: Features, tokenizer: Any, settings, device) -> None:
        self.refit(cls_states(model, features, tokenizer, settings.eval_batch_size, device))

    def refit(self, points: np.ndarray) -> None:
        self.fitted = OfflineFit.fit(points, self.n_clusters, self.n_directions, self.seed)

    def __call__(self, states: torch.Tensor) -> torch.Tensor:
        return states if self.fitted is None else self.fitted(states)


# Without and with the method.
METHODS = ("none", "cluster")
# Where the method's clusters and directions are fitted: on each batch's CLS states, or on the
# training set's (the slides' "even offline").
FITS = ("batch", "offline")


def head_transform(method: str, settings: ClusterMethod, seed: int) -> HeadTransform | None:
    """What the run applies to the head's CLS input: nothing (``none``), or the method with
    ``settings`` (config ``rajaee_cls.cluster_method``), its k-means seeded with the run's seed
    (``cluster``): :func:`cluster_cls` on every batch, or :class:`OfflineClusters`."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    if method == "none":
        return None
    record = settings.model_dump()
    if settings.fit == "offline":
        offline = OfflineClusters(settings.clusters, settings.directions, seed)
        return HeadTransform("cluster", record, offline, offline.prepare)
    per_batch = functools.partial(
        cluster_cls, n_clusters=settings.clusters, n_directions=settings.directions, seed=seed
    )
    return HeadTransform("cluster", record, per_batch)


def run_and_save(
    metrics_path: str | os.PathLike, method: str, cluster: ClusterMethod, seed: int, **run: Any
) -> dict[str, Any]:
    """One run of the study (:func:`isotropy.finetune.training.run_and_save`, its metrics written
    to ``metrics_path``): no penalty in the loss, ``method`` on the head's input; ``run`` holds the
    loop's other arguments (model_spec, task, data, settings, device)."""
    transform = head_transform(method, cluster, seed)
    return training.run_and_save(
        metrics_path, regulariser="none", lam=0.0, seed=seed, head_transform=transform, **run
    )
