"""Cluster analyses of contextual embedding spaces (docs/methods.md, "Geometry").

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

Their result tables are written and joined by :mod:`isotropy.geometry.tables`; the hidden
states both read come from :mod:`isotropy.embeddings.hidden_states`. This package's face names
its modules and exports nothing: callers import from the module that holds a name.
Everything is a plain function of arrays and tables, so tests exercise it without Snakemake;
the scripts in ``scripts/geometry_*.py`` only read inputs and write outputs. The study's time
estimate (target geometry_study, plain Python) is :mod:`isotropy.geometry.cost`.
"""
