"""Held-out data (question 4): MiniLM fine-tuned end to end with a linear head on a training
sample of a single-text task, scored after every epoch on held-out sentences it never sees.

The sentence embedding is the encoder's as the main study takes it (sentence-transformers'
all-MiniLM-L6-v2: mean of the last layer's token states over the attention mask, then unit
norm); the head is one linear layer on it. The featurisation, batching and epoch order are the
I-STAR fine-tuning code path's (:mod:`isotropy.finetune.features`); the model differs (I-STAR's
``AutoModelForSequenceClassification`` head is a pooler with tanh, not a linear head on the
main study's sentence embedding). AdamW: the encoder at a fine-tuning rate (2e-5), the new head
at the main study's rate (1e-3): on unit-norm embeddings a head at 2e-5 barely moves in a few
hundred steps.

After every epoch (epoch 0: the pretrained encoder and the untrained head) one row records the
held-out accuracy and the IsoScore and silhouette (labels as clusters) of the held-out and of
the training sentences' embeddings. Training stops when held-out accuracy has gained less than
``tolerance`` over its best for ``patience`` epochs in a row, or after ``max_epochs``.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from torch import nn

from isotropy import metrics
from isotropy.configuration.studies import Heldout
from isotropy.finetune.features import (
    classification_features,
    collate,
    epoch_order,
    model_inputs,
    to_device,
)
from isotropy.models import ModelSpec, load_pretrained

if TYPE_CHECKING:
    from transformers import PreTrainedModel

log = logging.getLogger(__name__)


def split(table: pd.DataFrame, train_size: int, heldout_size: int, seed: int):
    """Disjoint seeded samples (training, held-out) of a table's items, labels as ids 0..k-1."""
    if train_size + heldout_size > len(table):
        wanted = train_size + heldout_size
        raise ValueError(
            f"train_size + heldout_size = {wanted} exceeds the {len(table)} items; lower them"
        )
    names = sorted(table["label"].astype(str).unique())
    table = table.assign(label=table["label"].astype(str).map({n: i for i, n in enumerate(names)}))
    order = np.random.default_rng(seed).permutation(len(table))
    train = table.iloc[order[:train_size]].reset_index(drop=True)
    heldout = table.iloc[order[train_size : train_size + heldout_size]].reset_index(drop=True)
    return train, heldout


def heldout_baseline(table: pd.DataFrame, settings: Heldout) -> tuple[float, int]:
    """The learning guard's inputs: the commonest label's share of the held-out sentences and
    their count. The split depends on ``split_seed`` alone: every training seed shares them."""
    _, heldout = split(table, settings.train_size, settings.heldout_size, settings.split_seed)
    return float(heldout["label"].value_counts(normalize=True).max()), len(heldout)


class SentenceClassifier(nn.Module):
    """An encoder, the main study's sentence embedding (masked mean, unit norm), a linear head."""

    def __init__(self, encoder: PreTrainedModel, labels: int):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.config.hidden_size, labels)

    def embed(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        states = self.encoder(**model_inputs(batch)).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
        mean = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return nn.functional.normalize(mean, dim=1)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(self.embed(batch))


@torch.no_grad()
def score(model: SentenceClassifier, features, tokenizer, settings: Heldout, device):
    """Accuracy, IsoScore and silhouette of a set of sentences under the current model."""
    model.eval()
    embeddings, correct = [], 0
    labels = np.asarray(features.extra["labels"])
    for indices in torch.arange(len(features)).split(settings.eval_batch_size):
        batch = to_device(collate(features, indices.tolist(), tokenizer), device)
        points = model.embed(batch)
        correct += int((model.head(points).argmax(dim=1) == batch["labels"]).sum())
        embeddings.append(points.float().cpu())
    points = torch.cat(embeddings)
    model.train()
    return {
        "accuracy": correct / len(features),
        "isoscore": float(metrics.isoscore(points)),
        "silhouette": float(metrics.silhouette(points, labels)),
    }


def train_epoch(
    model, optimiser, features, tokenizer, settings, seed: int, epoch: int, device
) -> float:
    """One pass over the shuffled training sentences; the mean training loss."""
    losses = []
    for indices in epoch_order(len(features), seed, epoch).split(settings.batch_size):
        batch = to_device(collate(features, indices.tolist(), tokenizer), device)
        loss = nn.functional.cross_entropy(model(batch), batch["labels"])
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return float(np.mean(losses))


def converged(accuracies: list[float], patience: int, tolerance: float) -> bool:
    """Held-out accuracy (epoch 0 first) gained less than ``tolerance`` over its best for the
    last ``patience`` epochs."""
    if len(accuracies) <= patience:
        return False
    best_before = max(accuracies[:-patience])
    return max(accuracies[-patience:]) < best_before + tolerance


def finetune(spec: ModelSpec, table: pd.DataFrame, settings: Heldout, seed: int, device):
    """Fine-tune until convergence (module docstring); the per-epoch table and a summary."""
    from transformers import AutoModel, AutoTokenizer, set_seed

    started = time.perf_counter()
    train, heldout = split(table, settings.train_size, settings.heldout_size, settings.split_seed)
    set_seed(seed)  # the head's initialisation
    tokenizer = load_pretrained(spec, AutoTokenizer.from_pretrained)
    encoder = load_pretrained(spec, AutoModel.from_pretrained)
    model = SentenceClassifier(encoder, train["label"].nunique()).to(device)
    # the accuracy of always answering the commonest label (the learning guard's baseline)
    majority, _ = heldout_baseline(table, settings)
    length = settings.max_length
    train_features = classification_features(train, tokenizer, length, regression=False)
    heldout_features = classification_features(heldout, tokenizer, length, regression=False)
    optimiser = torch.optim.AdamW(
        [
            {"params": model.encoder.parameters(), "lr": settings.learning_rate},
            {"params": model.head.parameters(), "lr": settings.head_learning_rate},
        ],
        weight_decay=0.0,
    )
    rows: list[dict] = []
    for epoch in range(settings.max_epochs + 1):
        args = (model, optimiser, train_features, tokenizer, settings, seed, epoch - 1, device)
        loss = train_epoch(*args) if epoch > 0 else math.nan
        held = score(model, heldout_features, tokenizer, settings, device)
        trained = score(model, train_features, tokenizer, settings, device)
        row = {"seed": seed, "epoch": epoch, "train_loss": loss}
        row |= {f"heldout_{k}": v for k, v in held.items()}
        row |= {"heldout_majority": majority, "heldout_items": len(heldout)}  # the guard's
        row |= {f"train_{k}": v for k, v in trained.items()}
        rows.append(row)
        log.info("epoch %d/%d: %s", epoch, settings.max_epochs, rows[-1])
        if converged([r["heldout_accuracy"] for r in rows], settings.patience, settings.tolerance):
            break
    epochs = pd.DataFrame(rows)
    accuracies = epochs["heldout_accuracy"].tolist()
    summary = {
        "seed": seed,
        "model": spec.as_record(),
        "settings": settings.model_dump(exclude={"setups"}),
        "train_items": len(train),
        "heldout_items": len(heldout),
        "epochs_run": int(epochs["epoch"].max()),
        "converged": converged(accuracies, settings.patience, settings.tolerance),
        "wall_seconds": time.perf_counter() - started,
    }
    return epochs, summary
