"""I(W) (Mu & Viswanath's partition-function isotropy) of every layer's token states."""

import logging

from isotropy import geometry
from isotropy.logs import configure_from_snakemake, duration
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    seed = int(snakemake.wildcards.seed)
    embeddings = geometry.TokenEmbeddings.load(snakemake.input.embeddings)
    n_layers, n_tokens, dim = embeddings.layers.shape
    logging.getLogger(__name__).info(
        "I(W) of %d layers of %d tokens x %d dims: about %s (calibrated on the shared 2-core host under load: less when idle)",
        n_layers, n_tokens, dim, duration(geometry.isotropy_seconds(n_layers, n_tokens, dim)),
    )  # fmt: skip
    table = geometry.isotropy_by_layer(
        embeddings, model=snakemake.wildcards.model, corpus=snakemake.wildcards.corpus, seed=seed
    )
    geometry.write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=[seed], extra={"layers": n_layers, "tokens": n_tokens})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
