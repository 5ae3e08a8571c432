"""Isotropy, clusters and classifiers: the science behind the reproduction workflow.

Modules:
    datasets     readers for every raw source, all returning one table shape
    download     fetching with checksums, retries and mirror lookup
    embeddings   sentence-transformer and word-vector extraction
    metrics      IsoScore, IsoScore*, silhouette, cosine, LID, TwoNN, I(W)
    transforms   isotropy-enhancing transforms (all-but-the-top, cluster-based)
    optimize     direct optimisation of an embedding table with a linear classifier
    models       the pretrained transformers the studies load (hub name + revision, or a folder)
    istar        I-STAR / CosReg fine-tuning (a subpackage, one module per concern)
    geometry     cluster analyses of contextual embedding spaces
    plots        one function per figure, reading stored results only
    studies      what the rules ask of the configuration
    provenance   per-result records
    audit        the audit of every result back to its raw downloads (``isotropy-audit``)
    verdicts     the papers' claims and printed numbers judged on our results (a subpackage)
"""

__version__ = "0.1.0"
