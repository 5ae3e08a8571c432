"""Pang & Lee's sentence polarity v1.0 (section 3): data set ``polarity``."""

from __future__ import annotations

import os

import pandas as pd

from isotropy.readers.registry import DatasetSpec, raw_file, read_utf8_lines
from isotropy.sources.layouts import POLARITY_FILES

POLARITY_LABELS = dict(zip(POLARITY_FILES, ("positive", "negative"), strict=True))


def read_polarity(raw_dir: str | os.PathLike) -> pd.DataFrame:
    """Pang & Lee sentence polarity v1.0: a sentence a line, labelled by its file."""
    rows = []
    for filename, label in POLARITY_LABELS.items():
        path = raw_file(raw_dir, filename)
        for lineno, line in enumerate(read_utf8_lines(path), 1):
            text = line.strip()
            if not text:
                raise ValueError(
                    f"{path}, line {lineno}: empty sentence; expected one sentence per line"
                )
            rows.append((text, label))
    return pd.DataFrame(rows, columns=["text", "label"])


DATASETS = {
    "polarity": DatasetSpec(
        read_polarity,
        sources={"raw_dir": "polarity"},
        unit="sentence",
        layouts={"raw_dir": "polarity"},
    )
}
