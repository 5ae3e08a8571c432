"""Cluster analyses of contextual embedding spaces (papers.md section 4).

Two studies, both built on the metrics engine (``isotropy.metrics``, ``isotropy.transforms``):

* Cai et al. (ICLR 2021), "Isotropy in the contextual embedding space: clusters and
  manifolds": token embeddings of every layer of a transformer on a text corpus; per layer the
  inter-type and intra-type cosine similarities (S_inter, S_intra), raw and after k-means
  cluster centring, and the local intrinsic dimension (LID); static word vectors for comparison
  (:mod:`isotropy.geometry.layers`).
* Rajaee & Pilehvar (ACL 2021), "A cluster-based approach for improving isotropy in contextual
  embedding space": mean-pooled last-layer sentence embeddings for semantic textual similarity,
  scored with cosine similarity before and after isotropy-enhancing transforms
  (:mod:`isotropy.geometry.sts`).

Their result tables are written and joined by :mod:`isotropy.geometry.tables`; the hidden
states both read come from :mod:`isotropy.embeddings.hidden_states`, re-exported here.
Everything is a plain function of arrays and tables, so tests exercise it without Snakemake;
the scripts in ``scripts/geometry_*.py`` only read inputs and write outputs.
"""

from isotropy.embeddings.hidden_states import (
    TokenEmbeddings,
    extract_token_embeddings,
    extract_window_embeddings,
    load_hidden_state_model,
    token_states_by_sentence,
)
from isotropy.geometry.layers import (
    COSINE_COLUMNS,
    LID_COLUMNS,
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
from isotropy.geometry.tables import TABLE_COLUMNS, concatenate_tables, table_seeds, write_table
from isotropy.models import ModelSpec

__all__ = [
    "COSINE_COLUMNS",
    "LID_COLUMNS",
    "PIPELINE_SENTENCES",
    "PIPELINE_TOKENS",
    "STS_COLUMNS",
    "STS_METHODS",
    "TABLE_COLUMNS",
    "ModelSpec",
    "StsEmbeddings",
    "TokenEmbeddings",
    "cluster_cosine_statistics",
    "concatenate_tables",
    "cosine_by_layer",
    "enhance",
    "evaluate_sts",
    "evaluate_sts_tokens",
    "extract_token_embeddings",
    "extract_window_embeddings",
    "lid_by_layer",
    "lid_table",
    "load_hidden_state_model",
    "mean_pooled_embeddings",
    "pair_cosines",
    "pair_side_tokens",
    "pca_view",
    "static_geometry",
    "sts_sentence_index",
    "sts_table",
    "table_seeds",
    "token_states_by_sentence",
    "write_table",
]
