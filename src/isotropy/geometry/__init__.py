"""Cluster analyses of contextual embedding spaces (docs/methods.md, "Geometry"), on the metrics
engine (``isotropy.metrics``):

* Cai et al. (ICLR 2021): per layer of a transformer, S_inter and S_intra raw and after k-means
  cluster centring, LID, static word vectors for comparison (:mod:`isotropy.geometry.layers`);
  I(W) per layer; the SST-2 classification table; the token views' corpus frequencies.
* Rajaee & Pilehvar (ACL 2021): STS by cosine of mean-pooled sentence embeddings before and
  after isotropy-enhancing transforms (:mod:`isotropy.geometry.sts`).

This package's face names its modules and exports nothing: callers import from the module that
holds a name. Everything is a plain function of arrays and tables; ``scripts/geometry_*.py``
only read inputs and write outputs.
"""
