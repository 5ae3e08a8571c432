"""A linear classifier on frozen features with and without the cluster-based method: validation
accuracy and I(W) (Rajaei & Sheikhi's SST-2 table; protocol in docs/methods.md)."""

import logging

from isotropy.geometry.classification import TokenFeatures, classification_table
from isotropy.geometry.cost import expected
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake, duration
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    features = TokenFeatures.load(snakemake.input.features)
    settings = dict(
        seeds=list(params.seeds),
        methods=list(params.methods),
        readings=list(params.readings),
        max_length=params.max_length,
        n_clusters=params.n_clusters,
        n_directions=params.n_directions,
        C=params.C,
        max_iter=params.max_iter,
    )
    logging.getLogger(__name__).info(
        "%d sentences, %d tokens x %d dims, %s: about %s",
        len(features.labels),
        *features.tokens.shape,
        settings,
        duration(expected(snakemake.rule, snakemake.config, snakemake.wildcards)),
    )
    table = classification_table(
        features, model=snakemake.wildcards.model, task=snakemake.wildcards.task, **settings
    )
    write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=list(params.seeds), extra={"rows": len(table)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
