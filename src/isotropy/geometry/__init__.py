"""Cluster analyses of contextual embedding spaces (papers.md section 4).

Two studies, both built on the metrics engine (``isotropy.metrics``):

* Cai et al. (ICLR 2021), "Isotropy in the contextual embedding space: clusters and
  manifolds": token embeddings of every layer of a transformer on a text corpus; per layer the
  inter-type and intra-type cosine similarities (S_inter, S_intra), raw and after k-means
  cluster centring, and the local intrinsic dimension (LID); static word vectors for comparison
  (:mod:`isotropy.geometry.layers`); the partition-function isotropy I(W) of every layer
  (:mod:`isotropy.geometry.layer_isotropy`, Rajaee & Sheikhi's "Pre-trained BERT Isotropy");
  their SST-2 classification table, a linear classifier on frozen features with and without the
  cluster-based method (:mod:`isotropy.geometry.classification`); the corpus frequency of every
  token type, for the token views (:mod:`isotropy.geometry.tokens`).
* Rajaee & Pilehvar (ACL 2021), "A cluster-based approach for improving isotropy in contextual
  embedding space": mean-pooled last-layer sentence embeddings for semantic textual similarity,
  scored with cosine similarity before and after isotropy-enhancing transforms
  (:mod:`isotropy.geometry.sts`).

Their result tables are written and joined here (:func:`write_table`,
:func:`concatenate_tables`); the hidden
states both read come from :mod:`isotropy.embeddings.hidden_states`, re-exported here.
Everything is a plain function of arrays and tables, so tests exercise it without Snakemake;
the scripts in ``scripts/geometry_*.py`` only read inputs and write outputs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from isotropy.embeddings.hidden_states import (
    TokenEmbeddings,
    extract_token_embeddings,
    extract_window_embeddings,
    load_hidden_state_model,
    load_tokenizer,
    text_windows,
    token_states_by_sentence,
)
from isotropy.geometry.classification import (
    CLASSIFICATION_COLUMNS,
    TokenFeatures,
    classification_seconds,
    classification_table,
    feature_seconds,
    token_features,
)
from isotropy.geometry.layer_isotropy import ISOTROPY_COLUMNS, isotropy_by_layer, isotropy_seconds
from isotropy.geometry.layers import (
    COSINE_COLUMNS,
    LID_COLUMNS,
    centred_condition_number,
    cluster_cosine_statistics,
    cosine_by_layer,
    lid_by_layer,
    lid_table,
    pca_view,
    static_geometry,
)
from isotropy.geometry.sts import (
    PIPELINE_SENTENCES,
    PIPELINE_TOKENS,
    STS_COLUMNS,
    STS_METHODS,
    StsEmbeddings,
    enhance,
    evaluate_sts,
    evaluate_sts_tokens,
    mean_pooled_embeddings,
    pair_cosines,
    pair_side_tokens,
    sts_sentence_index,
    sts_table,
)
from isotropy.geometry.tokens import FREQUENCY_COLUMNS, token_frequencies, window_frequencies
from isotropy.io import atomic_path
from isotropy.models import ModelSpec


def table_seeds(table: pd.DataFrame) -> list[int] | None:
    """The seeds of a geometry table's rows (for its provenance record); None without a seed
    column."""
    return sorted(int(seed) for seed in table["seed"].unique()) if "seed" in table else None


TABLE_COLUMNS = {
    "cosine": COSINE_COLUMNS,
    "lid": LID_COLUMNS,
    "sts": STS_COLUMNS,
    "isotropy_by_layer": ISOTROPY_COLUMNS,
    "classification": CLASSIFICATION_COLUMNS,
}


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


__all__ = [
    "CLASSIFICATION_COLUMNS",
    "TokenFeatures",
    "classification_seconds",
    "classification_table",
    "feature_seconds",
    "token_features",
    "COSINE_COLUMNS",
    "FREQUENCY_COLUMNS",
    "ISOTROPY_COLUMNS",
    "LID_COLUMNS",
    "PIPELINE_SENTENCES",
    "PIPELINE_TOKENS",
    "STS_COLUMNS",
    "STS_METHODS",
    "TABLE_COLUMNS",
    "ModelSpec",
    "StsEmbeddings",
    "TokenEmbeddings",
    "centred_condition_number",
    "cluster_cosine_statistics",
    "concatenate_tables",
    "cosine_by_layer",
    "enhance",
    "evaluate_sts",
    "evaluate_sts_tokens",
    "extract_token_embeddings",
    "extract_window_embeddings",
    "isotropy_by_layer",
    "isotropy_seconds",
    "lid_by_layer",
    "lid_table",
    "load_hidden_state_model",
    "load_tokenizer",
    "mean_pooled_embeddings",
    "pair_cosines",
    "pair_side_tokens",
    "pca_view",
    "static_geometry",
    "sts_sentence_index",
    "sts_table",
    "table_seeds",
    "text_windows",
    "token_frequencies",
    "token_states_by_sentence",
    "window_frequencies",
    "write_table",
]
