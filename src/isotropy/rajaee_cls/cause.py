"""Why the cluster method costs accuracy (issue 68): do the k-means clusters of the CLS states
recover the labels (then centring each cluster removes the class signal, the main paper's
thesis), or does the loss come from fitting on each batch (an artefact)?

The agreement is the adjusted Rand index (ARI) of the method's k-means clusters with the labels,
recorded during a fine-tuning run by :class:`Measurements` (a ``prepare`` hook).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from sklearn.metrics import adjusted_rand_score

from isotropy.rajaee_cls.method import OfflineFit, cls_states, cluster_cls
from isotropy.transforms import fit_cluster_transform


def batch_agreement(
    states: np.ndarray,
    labels: Sequence[int],
    batches: Sequence[Sequence[int]],
    n_clusters: int,
    seed: int,
) -> list[float]:
    """ARI of each batch's k-means clusters (as :func:`isotropy.rajaee_cls.method.cluster_cls`
    finds them) with the batch's labels; batches of fewer than 2 states are skipped."""
    label_array = np.asarray(labels)
    values = []
    for batch in batches:
        index = np.asarray(batch)
        if len(index) < 2:
            continue
        k = min(n_clusters, len(index))
        found = fit_cluster_transform(states[index], k, 0, seed=seed).labels
        values.append(float(adjusted_rand_score(label_array[index], found)))
    return values


def offline_agreement(fit: OfflineFit, states: np.ndarray, labels: Sequence[int]) -> float:
    """ARI of the clusters of ``fit`` (fitted once) assigned to ``states`` with their labels."""
    found = fit.assign(torch.from_numpy(states)).numpy()
    return float(adjusted_rand_score(np.asarray(labels), found))


def method_states(
    states: np.ndarray,
    *,
    fit: str,
    clusters: int,
    directions: int,
    seed: int,
    batch_size: int = 64,
    training_states: np.ndarray | None = None,
) -> torch.Tensor:
    """``states`` after the method: fitted on each batch of ``batch_size`` (``fit="batch"``) or
    once on ``training_states`` (``"offline"``)."""
    x = torch.from_numpy(states)
    if fit == "offline":
        if training_states is None:
            raise ValueError("the offline fit needs the training set's states")
        return OfflineFit.fit(training_states, clusters, directions, seed)(x)
    return torch.cat([cluster_cls(b, clusters, directions, seed) for b in x.split(batch_size)])


def method_accuracy(
    head: Callable[[torch.Tensor], torch.Tensor],
    states: np.ndarray,
    labels: Sequence[int],
    **method: Any,
) -> float:
    """Accuracy of ``head`` (CLS states → logits) on ``states`` after the method
    (:func:`method_states` with ``method``)."""
    with torch.no_grad():
        predicted = head(method_states(states, **method)).argmax(dim=-1).cpu().numpy()
    return float((predicted == np.asarray(labels)).mean())


@torch.no_grad()
def head_logits(model: Any, states: torch.Tensor) -> torch.Tensor:
    """A BERT classifier's logits from CLS states (sentences × dim, moved to the head's device
    and dtype): its pooler and classifier (called past their hooks, so a head transform is not
    applied again), in evaluation mode."""
    pooler = getattr(model.base_model, "pooler", None)
    if pooler is None:
        raise ValueError(f"{type(model).__name__} has no pooler: head_logits reads BERT heads")
    weight = pooler.dense.weight
    pooled = pooler.forward(states[:, None, :].to(device=weight.device, dtype=weight.dtype))
    return model.classifier.forward(pooled)


def summary(values: Sequence[float]) -> dict[str, float]:
    """Mean, minimum and maximum of per-batch values."""
    return {
        name: float(f(values)) for name, f in (("mean", np.mean), ("min", np.min), ("max", np.max))
    }


@dataclass(eq=False)  # a hook: compared by identity
class Measurements:
    """A fine-tuning run's ``prepare`` hook that measures the cluster–label agreement, then calls
    ``inner`` (the method's own ``prepare``, or None) with the training states it read.

    Before every epoch: ARI of the k-means clusters of the training set's CLS states, per batch of
    that epoch (``batches(epoch)``: the training order's index batches) and over the whole set.
    Before the evaluation (the call after the last epoch): the same on the training set, and on
    the validation set per evaluation batch (of ``eval_batch``) and for the training set's clusters
    assigned to the validation states, and the trained head's accuracy after the method at each
    point of ``grid`` (fit, clusters, directions; :func:`method_accuracy`). The states are read in
    evaluation mode (no dropout)."""

    n_clusters: int
    seed: int
    epochs: int
    batches: Callable[[int], Sequence[Sequence[int]]]
    train_labels: Sequence[int]
    validation: tuple[Any, Sequence[int]]
    inner: Any = None
    grid: Sequence[dict[str, Any]] = ()
    records: list[dict[str, Any]] = field(default_factory=list, init=False)

    def __call__(self, model: Any, features: Any, tokenizer: Any, settings: Any, device) -> None:
        states = cls_states(model, features, tokenizer, settings.eval_batch_size, device)
        epoch = len(self.records)
        whole = OfflineFit.fit(states, self.n_clusters, 0, self.seed)
        record: dict[str, Any] = {
            "epoch": epoch,
            "train_offline_ari": offline_agreement(whole, states, self.train_labels),
        }
        if epoch < self.epochs:
            batches = self.batches(epoch)
            ari = batch_agreement(states, self.train_labels, batches, self.n_clusters, self.seed)
            record.update({f"train_batch_ari_{k}": v for k, v in summary(ari).items()})
        else:  # before the evaluation
            eval_features, eval_labels = self.validation
            valid = cls_states(model, eval_features, tokenizer, settings.eval_batch_size, device)
            eval_batches = torch.arange(len(eval_labels)).split(settings.eval_batch_size)
            ari = batch_agreement(valid, eval_labels, eval_batches, self.n_clusters, self.seed)
            record.update({f"eval_batch_ari_{k}": v for k, v in summary(ari).items()})
            record["eval_offline_ari"] = offline_agreement(whole, valid, eval_labels)
            head = functools.partial(head_logits, model)
            common = dict(
                seed=self.seed, batch_size=settings.eval_batch_size, training_states=states
            )
            record["method_accuracy"] = [
                {**point, "accuracy": method_accuracy(head, valid, eval_labels, **point, **common)}
                for point in self.grid
            ]
        self.records.append(record)
        if self.inner is not None:
            self.inner.refit(states)
