"""Local intrinsic dimension of every layer's token embeddings (Cai et al.: Table 3 cosine, Figure
9 Euclidean)."""

from isotropy.embeddings.hidden_states import TokenEmbeddings
from isotropy.geometry.layers import lid_by_layer
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    seed = int(snakemake.wildcards.seed)
    embeddings = TokenEmbeddings.load(snakemake.input.embeddings)
    table = lid_by_layer(
        embeddings,
        model=snakemake.wildcards.model,
        corpus=snakemake.wildcards.corpus,
        seed=seed,
        k=params.k,
        metrics=params.metrics,
        sample_size=params.sample_size,
    )
    write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=[seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
