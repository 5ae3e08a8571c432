"""Synthetic SST-2 and small settings for the fine-tuning tests (the tiny BERT is a conftest
fixture).

Imports torch, transformers and the fine-tuning package alone (no workflow, no Snakemake), so the
CUDA tests that use it run on the device machine's bare image.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

WORDS = (
    "the a film movie plot acting music story was is and it very not quite really good great fine "
    "bad awful dull , . ? what who where paris london rome city lives in anna ben carl"
).split()
POSITIVE, NEGATIVE = ["good", "great", "fine"], ["bad", "awful", "dull"]


def sentiment_table(n: int, seed: int) -> pd.DataFrame:
    """Synthetic SST-2: the label is whether the sentence holds a positive word."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(2))
        subject = rng.choice(["film", "movie", "plot", "acting", "music", "story"])
        adverb = rng.choice(["very", "quite", "really", "not"])
        word = rng.choice(POSITIVE if label else NEGATIVE)
        texts.append(f"the {subject} was {adverb} {word} .")
        labels.append(label)
    return pd.DataFrame({"text": texts, "label": labels})


SMALL = dict(
    batch_size=8,
    epochs=2,
    max_length=32,
    learning_rate=1e-3,
    reference_sample_size=400,
    eval_batch_size=16,
)


CUDA = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs a CUDA GPU (mixed precision, its loss scaler and resume on the device); "
    "the device runbook runs these: benchmarks/istar_on_device.py",
)
