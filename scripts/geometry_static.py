"""Cosine statistics and LID of static word vectors, the comparison rows of the geometry tables."""

from pathlib import Path

from isotropy.embeddings.texts import load_word_vectors
from isotropy.geometry.layers import static_geometry
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.readers.registry import word_vectors_file


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    seed = int(snakemake.wildcards.seed)
    path = word_vectors_file(Path(snakemake.input.manifest).parent)
    vectors = load_word_vectors(path, limit=params.max_words).vectors
    cosine, lid = static_geometry(
        vectors,
        name=snakemake.wildcards.source,
        seed=seed,
        sample_size=params.sample_size,
        lid_k=params.lid_k,
        lid_metrics=params.lid_metrics,
        k_range=tuple(params.k_range),
        silhouette_threshold=params.silhouette_threshold,
        silhouette_sample_size=params.silhouette_sample_size,
    )
    write_table(cosine, snakemake.output.cosine)
    write_table(lid, snakemake.output.lid)
    record_step(snakemake, seeds=[seed], extra={"vectors": str(path), "words": len(vectors)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
