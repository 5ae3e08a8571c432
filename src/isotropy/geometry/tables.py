"""The geometry studies' result tables: their columns, written atomically and joined over
models (``scripts/geometry_*.py`` write one per model, ``geometry_collect`` joins them)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from isotropy.geometry.classification import CLASSIFICATION_COLUMNS
from isotropy.geometry.layer_isotropy import ISOTROPY_COLUMNS
from isotropy.geometry.layers import COSINE_COLUMNS, LID_COLUMNS
from isotropy.geometry.sts import STS_COLUMNS
from isotropy.io import atomic_path

TABLE_COLUMNS = {
    "cosine": COSINE_COLUMNS,
    "lid": LID_COLUMNS,
    "sts": STS_COLUMNS,
    "isotropy_by_layer": ISOTROPY_COLUMNS,
    "classification": CLASSIFICATION_COLUMNS,
}


def table_seeds(table: pd.DataFrame) -> list[int] | None:
    """The seeds of a geometry table's rows (for its provenance record); None if it has none."""
    return sorted(int(seed) for seed in table["seed"].unique()) if "seed" in table else None


def write_table(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a CSV atomically."""
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)


def concatenate_tables(paths: Sequence[str | os.PathLike], columns: Sequence[str]) -> pd.DataFrame:
    """Concatenate per-model CSVs (empty ones, e.g. an unavailable SICK-R, contribute nothing)."""
    frames = [pd.read_csv(p) for p in paths]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    table = pd.concat(frames, ignore_index=True)[list(columns)]
    if "layer" in table.columns:  # static rows have no layer: keep the column integer, not float
        table["layer"] = table["layer"].astype("Int64")
    return table
