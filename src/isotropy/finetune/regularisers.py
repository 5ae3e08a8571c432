"""The penalties added to the task loss: I-STAR (1 − IsoScore*, shrunk towards Σ_S) and CosReg
((ΣW − N)/N² of the cosines), and the estimate of Σ_S from the current model."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch
from tqdm.auto import tqdm

from isotropy import metrics
from isotropy.compute import autocast
from isotropy.finetune.features import Features, collate, model_inputs, to_device

log = logging.getLogger(__name__)


def token_points(
    hidden_states: Sequence[torch.Tensor], attention_mask: torch.Tensor
) -> torch.Tensor:
    """Non-padding token states of every transformer layer, stacked into (tokens × layers, dim).

    ``hidden_states[0]`` (the embedding lookup) is left out, as in the authors' code.
    """
    if len(hidden_states) < 2:
        raise ValueError(
            "need the hidden states of the embedding layer and at least one transformer layer"
        )
    stacked = torch.stack(tuple(hidden_states[1:]))  # layers × batch × tokens × dim
    return stacked[:, attention_mask.bool()].reshape(-1, stacked.shape[-1])


def istar_penalty(
    points: torch.Tensor, reference_covariance: torch.Tensor, zeta: float
) -> torch.Tensor:
    """``1 − IsoScore*(points)``: 0 for an isotropic batch, 1 for a single direction."""
    return 1.0 - metrics.isoscore_star(points.float(), reference_covariance.float(), zeta=zeta)


def cosine_penalty(points: torch.Tensor) -> torch.Tensor:
    """CosReg as the authors compute it (I-STAR ``regularizers.py``): (ΣW − N)/N², W the N×N
    cosine matrix of the rows. The N self-cosines (each 1) are taken out of the sum, but N² stays
    the divisor, so the value is (N − 1)/N × the mean cosine over distinct pairs.

    Uses ΣW = ‖Σ_i x̂_i‖², so memory stays linear in N. Unlike the authors' code, the rows are
    non-padding token states only (the caller masks; see the differences table in docs/methods.md).
    """
    n = points.shape[0]
    if n < 2:
        raise ValueError(f"CosReg needs at least 2 token states in a batch, found {n}")
    unit = torch.nn.functional.normalize(points.float(), dim=1)
    total = unit.sum(dim=0)
    return (total @ total - n) / (n * n)


class RunningCovariance:
    """Unbiased covariances of groups of points seen in batches (groups × points × dim each),
    from float64 running sums, so that 250,000 × 768 states never sit in memory at once."""

    def __init__(self) -> None:
        self.count = 0
        self.sums: torch.Tensor | None = None
        self.products: torch.Tensor | None = None

    def add(self, points: torch.Tensor) -> None:
        if self.sums is None or self.products is None:
            groups, _, dim = points.shape
            self.sums = torch.zeros(groups, dim, dtype=torch.float64, device=points.device)
            self.products = torch.zeros(groups, dim, dim, dtype=torch.float64, device=points.device)
        self.sums += points.sum(dim=1)
        self.products += points.transpose(1, 2) @ points
        self.count += points.shape[1]

    def covariance(self) -> torch.Tensor:
        """groups × dim × dim, float32."""
        if self.sums is None or self.products is None:
            raise ValueError("no points were added: the covariance is undefined")
        mean = self.sums / self.count
        centred = self.products - self.count * mean[:, :, None] * mean[:, None, :]
        return (centred / (self.count - 1)).float()


@torch.no_grad()
def estimate_reference_covariance(
    model,
    features: Features,
    tokenizer,
    sample_size: int,
    batch_size: int,
    device: torch.device,
    seed: int,
    mixed_precision: bool = False,
    per_layer: bool = False,
) -> torch.Tensor:
    """Σ_S: the unbiased covariance of ``sample_size`` token states (all layers, no padding) of the
    current model in eval mode, from training examples in a seeded random order.

    With ``per_layer``, one covariance per transformer layer (layers × dim × dim), each over the
    same ``sample_size`` token positions: the evaluation reference of the authors' code, built
    from training tokens.
    """
    was_training = model.training
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(features), generator=generator)
    total, moments = 0, RunningCovariance()
    progress = tqdm(total=sample_size, desc="Σ_S sample", unit="state", leave=False)
    for indices in order.split(batch_size):
        batch = to_device(collate(features, indices.tolist(), tokenizer), device)
        with autocast(device, mixed_precision):
            out = model(**model_inputs(batch), output_hidden_states=True)
        if per_layer:  # layers × tokens × dim
            points = torch.stack(tuple(out.hidden_states[1:]))[
                :, batch["attention_mask"].bool()
            ].double()
        else:  # one group: tokens × layers states
            points = token_points(out.hidden_states, batch["attention_mask"]).double()[None]
        count = points.shape[1]
        take = min(count, sample_size - total)
        if take < count:  # a random subset of the last batch, not its first layers or tokens
            pick = torch.randperm(count, generator=generator)[:take].to(points.device)
            points = points[:, pick]
        moments.add(points)
        total += take
        progress.update(take)
        if total >= sample_size:
            break
    progress.close()
    model.train(was_training)
    if total < 2:
        raise ValueError(f"Σ_S needs at least 2 token states, the training data gave {total}")
    if total < sample_size:
        said = (
            "Σ_S estimated from %d token states: the training data has fewer than the %d asked for"
        )
        log.warning(said, total, sample_size)
    covariance = moments.covariance()
    return covariance if per_layer else covariance[0]
