"""Isotropy, clusters and classifiers: the science behind the reproduction workflow.

Modules:
    datasets     readers for every raw source, all returning one table shape
    download     fetching with checksums, retries and mirror lookup
    embeddings   sentence-transformer and word-vector extraction
    metrics      IsoScore, IsoScore*, silhouette, cosine, LID, TwoNN, I(W)
    transforms   isotropy-enhancing transforms (all-but-the-top, cluster-based)
    optimize     direct optimisation of an embedding table with a linear classifier
    finetune     I-STAR / CosReg fine-tuning
    geometry     cluster analyses of contextual embedding spaces
    plots        one function per figure, reading stored results only
    provenance   per-result records, audit, claims
"""

__version__ = "0.1.0"
