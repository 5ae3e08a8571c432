"""SNLI 1.0 validation pairs with a gold label (section 3): data set ``snli``."""

from __future__ import annotations

import json
import logging
import os
from operator import itemgetter

import pandas as pd

from isotropy.readers.registry import DatasetSpec, raw_file, read_utf8_lines

log = logging.getLogger(__name__)

SNLI_LABELS = ("entailment", "neutral", "contradiction")
FIELDS = itemgetter("gold_label", "sentence1", "sentence2")


def read_snli(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """SNLI 1.0 validation pairs with a gold label (9,842 rows); the ``-`` (no consensus) ones
    dropped."""
    path = raw_file(raw_dir, "snli_1.0_dev.jsonl")
    rows, unlabelled = [], 0
    for lineno, line in enumerate(read_utf8_lines(path), 1):
        if not line.strip():
            continue
        try:
            label, premise, hypothesis = FIELDS(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from exc
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"{path}, line {lineno}: expected an object with gold_label, sentence1, sentence2"
            ) from exc
        if label == "-":
            unlabelled += 1
            continue
        if label not in SNLI_LABELS:
            raise ValueError(
                f"{path}, line {lineno}: gold_label {label!r} is not one of {SNLI_LABELS} or '-'"
            )
        if not isinstance(premise, str) or not isinstance(hypothesis, str):
            raise ValueError(f"{path}, line {lineno}: sentence1/sentence2 must be strings")
        rows.append((premise.strip(), hypothesis.strip(), label))
    if unlabelled:
        log.info("snli: dropped %d pairs without a gold label", unlabelled)
    return pd.DataFrame(rows, columns=["text", "text_pair", "label"])


DATASETS = {
    "snli": DatasetSpec(
        read_snli, sources={"raw_dir": "snli"}, unit="pair", layouts={"raw_dir": "snli"}
    )
}
