"""SNLI 1.0 validation pairs with a gold label (section 3): data set ``snli``."""

from __future__ import annotations

import json
import logging
import os
from operator import itemgetter

import pandas as pd

from isotropy.readers.registry import DatasetSpec, raw_file, read_utf8_lines

log = logging.getLogger(__name__)

FIELDS = itemgetter("gold_label", "sentence1", "sentence2")


def read_snli(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """SNLI 1.0 validation pairs with a gold label (9,842 rows); ``-`` (no consensus) dropped."""
    path = raw_file(raw_dir, "snli_1.0_dev.jsonl")
    rows, unlabelled = [], 0
    from isotropy import trust  # here: the device has no jsonschema

    snli_line = trust.validator("snli_line")
    for lineno, line in enumerate(read_utf8_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from exc
        if problem := trust.record_problem(record, snli_line):
            raise ValueError(f"{path}, line {lineno}: {problem}")
        label, premise, hypothesis = FIELDS(record)
        if label == "-":
            unlabelled += 1
            continue
        rows.append((premise.strip(), hypothesis.strip(), label))
    if unlabelled:
        log.info("snli: dropped %d pairs without a gold label", unlabelled)
    return pd.DataFrame(rows, columns=["text", "text_pair", "label"])


DATASETS = {
    "snli": DatasetSpec(
        read_snli, sources={"raw_dir": "snli"}, unit="pair", layouts={"raw_dir": "snli"}
    )
}
