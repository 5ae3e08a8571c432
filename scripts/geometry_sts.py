"""STS correlations and I(W) under each isotropy-enhancement method (token-level, as Rajaee &
Pilehvar)."""

from isotropy.geometry.sts import StsEmbeddings, sts_table
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    seed = int(snakemake.wildcards.seed)
    embeddings = StsEmbeddings.load(snakemake.input.embeddings)
    table = sts_table(
        embeddings,
        model=snakemake.wildcards.model,
        methods=params.methods,
        n_clusters=params.n_clusters,
        n_directions=params.n_directions,
        abtt_directions=params.abtt_directions,
        seed=seed,
    )
    write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=[seed], extra={"available": embeddings.available})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
