"""The reader module of a toy word data set ``toy`` (word<TAB>label lines), as a new data set's
author writes it following docs/extending.md: written into a package by tests/test_recipes.py
and tests/test_datasets.py."""

TOY_DATASET_MODULE = '''"""Toy words with their part of speech: data set ``toy``."""

from __future__ import annotations

import os

import pandas as pd

from isotropy.readers.registry import DatasetSpec, raw_file, read_utf8_lines


def read_toy(raw_dir: str | os.PathLike, *, mark: str = "") -> pd.DataFrame:
    rows = [line.split("\\t") for line in read_utf8_lines(raw_file(raw_dir, "words.tsv"))]
    return pd.DataFrame([(word + mark, label) for word, label in rows], columns=["text", "label"])


DATASETS = {
    "toy": DatasetSpec(
        read_toy,
        sources={"raw_dir": "toy_words"},
        unit="word",
        layouts={"raw_dir": "files"},
        option_keys=("mark",),
    )
}
'''
