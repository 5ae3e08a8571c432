"""Rajaei & Sheikhi's SST-2 classification table: frozen encoder features with and without the
cluster-based method, a linear classifier, accuracy on validation and I(W) of the features.

The slides give only the numbers (accuracy 55.67 → 56.08, I(W) 7.97e-6 → "84.36"), so the
protocol is inferred (docs/methods.md, "SST-2 classification"). What is fixed here:

- The encoder is frozen; its last layer's states of every attended token (special tokens
  included, padding excluded) of a sentence are stored, per sentence (:class:`TokenFeatures`).
- The method is fitted, without labels, on the tokens of the training sentences and the
  validation sentences together, as the authors' released classifier cell does
  (``cluster_based(train + dev)``) and as the STS path fits it on every evaluated token.
- Two readings of "features" (``READINGS``): ``pooled``, each sentence the mean of its
  transformed tokens (the STS path's sentence vector); ``positions``, the transformed token
  states laid out by position up to ``max_length`` (zeros after the sentence's end) and
  flattened, the input of the authors' classifier cell (there an MLP; here the linear
  classifier).
- The classifier: scikit-learn's ``LogisticRegression`` (L2, ``C``, lbfgs), trained on the
  training sentences, accuracy on the validation sentences. No seed enters it; the method's
  k-means does (one row per seed for the cluster-based method).
- I(W) (numpy's signs, as Rajaee & Pilehvar's code, and sign-free) of the transformed tokens
  (the STS path's space) and of the pooled sentence vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isotropy.embeddings.hidden_states import ArrayRecord
from isotropy.geometry.sts import enhance

log = logging.getLogger(__name__)

READINGS = ("pooled", "positions")
CLASSIFICATION_METHODS = ("none", "cluster-based")
CLASSIFICATION_COLUMNS = [
    *("model", "task", "reading", "method", "seed", "n_train", "n_validation", "n_tokens"),
    *("dim", "max_length", "n_clusters", "n_directions", "C", "accuracy", "train_accuracy"),
    *("majority_accuracy", "isotropy", "isotropy_sign_free", "isotropy_sentences"),
]


@dataclass
class TokenFeatures(ArrayRecord):
    """Last-layer states of every attended token of a task's sentences, frozen encoder: sentence
    ``j``: rows ``offsets[j]:offsets[j+1]``, ``labels[j]`` its class, ``train[j]`` its split."""

    tokens: np.ndarray
    offsets: np.ndarray
    labels: np.ndarray
    train: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.labels)
        if len(self.offsets) != n + 1 or len(self.train) != n:
            raise ValueError(
                f"{len(self.offsets)} offsets and {len(self.train)} split flags for {n} sentences"
            )
        if self.offsets[0] != 0 or self.offsets[-1] != len(self.tokens):
            raise ValueError(
                f"offsets run from {self.offsets[0]} to {self.offsets[-1]}, not 0 to "
                f"{len(self.tokens)} tokens"
            )
        if (np.diff(self.offsets) <= 0).any():
            raise ValueError("every sentence needs at least one token")
        if not self.train.any() or self.train.all():
            raise ValueError("features need both training and validation sentences")


def token_features(
    train_sentences: Sequence[str],
    train_labels: Sequence[int],
    validation_sentences: Sequence[str],
    validation_labels: Sequence[int],
    tokenizer,
    model,
    *,
    device: Any = "cpu",
    batch_size: int = 32,
    max_length: int = 64,
    progress: bool = True,
) -> TokenFeatures:
    """Last-layer states of the attended tokens of every training, then validation, sentence."""
    from isotropy.embeddings.hidden_states import token_states_by_sentence

    tokens, offsets = token_states_by_sentence(
        [*train_sentences, *validation_sentences],
        tokenizer,
        model,
        device=device,
        batch_size=batch_size,
        max_length=max_length,
        layer=-1,
        progress=progress,
        drop_special=False,
        desc="token features",
    )
    labels = np.asarray([*train_labels, *validation_labels], dtype=np.int64)
    train = np.r_[np.ones(len(train_sentences), bool), np.zeros(len(validation_sentences), bool)]
    return TokenFeatures(tokens, offsets, labels, train)


def pooled(tokens: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each sentence's mean token vector."""
    return np.add.reduceat(tokens, offsets[:-1], axis=0) / np.diff(offsets)[:, None]


def by_position(tokens: np.ndarray, offsets: np.ndarray, max_length: int) -> np.ndarray:
    """Each sentence's token vectors in order, flattened to ``max_length × dim`` (zero-padded)."""
    lengths = np.diff(offsets)
    if lengths.max() > max_length:
        raise ValueError(
            f"a sentence has {lengths.max()} tokens, more than max_length {max_length}"
        )
    out = np.zeros((len(lengths), max_length, tokens.shape[1]), dtype=np.float32)
    sentence = np.repeat(np.arange(len(lengths)), lengths)
    position = np.arange(len(tokens)) - np.repeat(offsets[:-1], lengths)
    out[sentence, position] = tokens
    return out.reshape(len(lengths), -1)


def linear_accuracy(
    features: np.ndarray,
    labels: np.ndarray,
    train: np.ndarray,
    *,
    C: float = 1.0,
    max_iter: int = 1000,
) -> tuple[float, float]:
    """Validation and training accuracy (×100) of a logistic regression fitted on ``train``."""
    from sklearn.linear_model import LogisticRegression

    classifier = LogisticRegression(C=C, max_iter=max_iter)
    classifier.fit(features[train], labels[train])
    return (
        100 * float(classifier.score(features[~train], labels[~train])),
        100 * float(classifier.score(features[train], labels[train])),
    )


# One line of the log per reading × method × seed.
_RESULT_LOG = "%s %s %s seed %d: accuracy %.2f (train %.2f), I(W) %.3g"


def classification_table(
    features: TokenFeatures,
    *,
    model: str,
    task: str = "sst2",
    seeds: Sequence[int] = (0, 1, 2, 3, 4),  # the schema's (tests/test_defaults.py)
    methods: Sequence[str] = CLASSIFICATION_METHODS,
    readings: Sequence[str] = READINGS,
    max_length: int = 64,
    n_clusters: int = 27,
    n_directions: int = 12,
    C: float = 1.0,
    max_iter: int = 1000,
) -> pd.DataFrame:
    """One row per reading × method × seed: validation accuracy of the linear classifier and
    I(W) of the features (``none``, seedless, computed once and repeated for every seed)."""
    from isotropy.metrics import partition_isotropy

    if unknown := set(readings) - set(READINGS):
        raise ValueError(f"unknown readings {sorted(unknown)}; expected some of {READINGS}")
    tokens = np.asarray(features.tokens, dtype=np.float64)
    labels, train = features.labels, features.train
    # the columns every row shares; majority: always answering the training split's top class
    majority = float(np.mean(labels[~train] == np.bincount(labels[train]).argmax()))
    fixed = {"model": model, "task": task, "n_train": int(train.sum())}
    fixed |= {"n_validation": int((~train).sum()), "n_tokens": len(tokens), "dim": tokens.shape[1]}
    fixed |= {"max_length": max_length, "C": C, "majority_accuracy": 100 * majority}
    rows = []
    for method in methods:
        for seed in seeds if method != "none" else seeds[:1]:
            enhanced = enhance(
                tokens, method, n_clusters=n_clusters, n_directions=n_directions, seed=seed
            )
            transformed = np.asarray(enhanced, dtype=np.float64)
            sentences = pooled(transformed, features.offsets)
            measured = {  # I(W) of the transformed tokens and of the pooled sentences
                "isotropy": partition_isotropy(transformed, signs="solver"),
                "isotropy_sign_free": partition_isotropy(transformed, signs="both"),
                "isotropy_sentences": partition_isotropy(sentences, signs="solver"),
            }
            for reading in readings:
                inputs = (
                    sentences
                    if reading == "pooled"
                    else by_position(transformed, features.offsets, max_length)
                )
                accuracy, train_accuracy = linear_accuracy(
                    inputs, labels, train, C=C, max_iter=max_iter
                )
                iw = measured["isotropy"]
                log.info(_RESULT_LOG, task, reading, method, seed, accuracy, train_accuracy, iw)
                kept = (n_clusters, n_directions) if method != "none" else (1, 0)
                row = {**fixed, "n_clusters": kept[0], "n_directions": kept[1], **measured}
                row |= {"reading": reading, "method": method}
                scores = {"accuracy": accuracy, "train_accuracy": train_accuracy}
                copies = seeds if method == "none" else [seed]
                rows += [{**row, "seed": copy, **scores} for copy in copies]
    return pd.DataFrame(rows, columns=CLASSIFICATION_COLUMNS)
