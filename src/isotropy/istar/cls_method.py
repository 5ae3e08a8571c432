"""Rajaee & Pilehvar's cluster-based method on the CLS token inside fine-tuning (the Rajaei &
Sheikhi 2020 slides' pipeline: "apply the method to the CLS token of every batch").

Regulariser ``cluster`` of the fine-tuning runs (isotropy.istar.training) is a transform, not a
penalty: in every batch, training and evaluation alike, the position-0 state that the task head
reads is replaced by its cluster-based version over the batch: k-means on the batch's CLS states,
each cluster centred on its own mean and its top principal directions removed
(:func:`isotropy.geometry.sts.fit_cluster_transform`, the same fit the STS path uses). The
clusters and directions are fitted on detached values and held fixed in the batch; the centring
and the projection are applied to the tensor, so the gradient flows through them.

After training, :func:`cls_layer_geometry` measures the validation CLS states of every layer (the
model's own, before the transform): I(W) (Rajaee & Pilehvar's signs), IsoScore, and the norm of
the mean CLS state beside the norm of the mean token state (the slides' "CLS tokens are already
zero-mean"); and the last layer's I(W) after the transform, the space the head reads.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from isotropy.geometry.sts import fit_cluster_transform

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


def cls_method(
    n_clusters: int, n_directions: int, seed: int
) -> Callable[[torch.Tensor], torch.Tensor]:
    """:func:`cluster_cls` with its settings: states in, transformed states out."""
    return functools.partial(
        cluster_cls, n_clusters=n_clusters, n_directions=n_directions, seed=seed
    )


def head_input_module(model: Any) -> torch.nn.Module:
    """The module whose first input holds the CLS state the task head reads: BERT's pooler,
    DistilBERT's ``pre_classifier``, else the classification head (RoBERTa, MPNet)."""
    pooler = getattr(model.base_model, "pooler", None)
    if isinstance(pooler, torch.nn.Module):
        return pooler
    for name in ("pre_classifier", "classifier"):
        module = getattr(model, name, None)
        if isinstance(module, torch.nn.Module):
            return module
    raise ValueError(
        f"{type(model).__name__} has no pooler or classifier to apply the method before"
    )


@contextlib.contextmanager
def cls_transform(
    model: Any, n_clusters: int, n_directions: int, seed: int
) -> Iterator[torch.nn.Module]:
    """Apply :func:`cluster_cls` to the CLS state at the head's input while the block runs."""

    def before_head(module: torch.nn.Module, args: tuple) -> tuple:
        hidden, *rest = args
        if hidden.dim() == 3:  # batch × tokens × dim: position 0 is the CLS state
            first = cluster_cls(hidden[:, 0], n_clusters, n_directions, seed)
            hidden = torch.cat([first[:, None], hidden[:, 1:]], dim=1)
        else:  # batch × dim: the CLS states already
            hidden = cluster_cls(hidden, n_clusters, n_directions, seed)
        return (hidden, *rest)

    module = head_input_module(model)
    handle = module.register_forward_pre_hook(before_head)
    try:
        yield module
    finally:
        handle.remove()


def mean_norms(states: torch.Tensor) -> tuple[float, float]:
    """(norm of the mean state, mean norm of the states) of n × dim states."""
    x = states.double()
    return float(x.mean(dim=0).norm()), float(x.norm(dim=1).mean())


def cls_layer_geometry(
    sentence: torch.Tensor,
    token_means: torch.Tensor,
    token_norms: torch.Tensor,
    transformed_last: np.ndarray | None = None,
) -> dict[str, Any]:
    """Per-layer geometry of the validation CLS states (layers × sentences × dim).

    ``token_means`` (layers × dim) is the mean of every non-padding validation token state and
    ``token_norms`` (layers) their mean norm. ``transformed_last``: the last layer's CLS states
    as the head read them (after the method), or None without it.
    """
    from isotropy import metrics

    layers: dict[str, list[float]] = {
        "iw": [],
        "isoscore": [],
        "cls_mean_norm": [],
        "cls_norm": [],
        "token_mean_norm": [],
        "token_norm": [],
    }
    for layer in range(sentence.shape[0]):
        states = sentence[layer].double().numpy()
        layers["iw"].append(metrics.partition_isotropy(states, signs="solver"))
        layers["isoscore"].append(metrics.isoscore(states))
        cls_mean, cls_norm = mean_norms(sentence[layer])
        layers["cls_mean_norm"].append(cls_mean)
        layers["cls_norm"].append(cls_norm)
        layers["token_mean_norm"].append(float(token_means[layer].double().norm()))
        layers["token_norm"].append(float(token_norms[layer]))
    result: dict[str, Any] = {f"cls_{name}_layers": values for name, values in layers.items()}
    result["cls_iw"] = layers["iw"][-1]
    result["cls_iw_head_input"] = (
        metrics.partition_isotropy(transformed_last, signs="solver")
        if transformed_last is not None
        else layers["iw"][-1]
    )
    return result
