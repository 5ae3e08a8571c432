"""I(W) (Mu & Viswanath's partition-function isotropy) of every layer's token states."""

import logging

from isotropy.embeddings.hidden_states import TokenEmbeddings
from isotropy.geometry.cost import expected
from isotropy.geometry.layer_isotropy import isotropy_by_layer
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake, duration
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    seed = int(snakemake.wildcards.seed)
    embeddings = TokenEmbeddings.load(snakemake.input.embeddings)
    n_layers, n_tokens, dim = embeddings.layers.shape
    logging.getLogger(__name__).info(
        "I(W) of %d layers of %d tokens x %d dims: about %s",
        n_layers,
        n_tokens,
        dim,
        duration(expected(snakemake.rule, snakemake.config, snakemake.wildcards)),
    )
    table = isotropy_by_layer(
        embeddings, model=snakemake.wildcards.model, corpus=snakemake.wildcards.corpus, seed=seed
    )
    write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=[seed], extra={"layers": n_layers, "tokens": n_tokens})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
