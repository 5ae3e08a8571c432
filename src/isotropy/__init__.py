"""Isotropy, clusters and classifiers: the science behind the reproduction workflow.

Science and data (never import the workflow layer; tests/test_architecture.py):
    sources          raw downloads: pins, retries, resume, the offline mirror, safe unpacking
    readers          one reader per data-set family, all returning one table shape
    embeddings       sentence transformers, word vectors, every layer's hidden states
    models           the pretrained transformers the studies load (hub name + revision, a folder,
                     or split PyPI volumes, assembled)
    metrics          IsoScore, IsoScore*, silhouette, cosine, LID, TwoNN, I(W)
    optimize         direct optimisation of an embedding table with a linear classifier
    sensitivity      the sensitivity study: label and vector sets; per-step, per-seed and per-cell
                     numbers
    istar            I-STAR / CosReg fine-tuning
    geometry         cluster analyses of contextual embedding spaces (Cai et al.; Rajaee &
                     Pilehvar), with the isotropy-enhancing transforms
    summaries, traces, plots   tables and figures from stored results only
    verdicts         the papers' claims and printed numbers judged on our results
    statistics       intervals over seeds (the replication unit), for the science and verdicts
    published        which published row fits one of our setups, for the tables and verdicts
    provenance       per-result records; reporting the report's first page
    paths            every path between rules and every result, spelled once
    defaults         the configuration's defaults, read from the schema
    compute, io, logs  device choice and thread pools, atomic writes, step logs

The workflow layer and the tools over it:
    workflow         what Snakemake asks while it parses (configuration, targets, inputs)
    estimate         the settings and time left printed before a run
    audit            every result back to its raw downloads (``isotropy-audit``)
    debug, resume    one step run outside Snakemake; the check before ``make resume``
"""

__version__ = "0.1.0"
