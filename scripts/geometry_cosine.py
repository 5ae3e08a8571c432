"""S_inter / S_intra per layer, raw and k-means cluster-centred, and a PCA view of one layer (Cai
et al.)."""

from isotropy.embeddings.hidden_states import TokenEmbeddings
from isotropy.geometry.layers import cosine_by_layer, layer_index, pca_view
from isotropy.geometry.tables import write_table
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    seed = int(snakemake.wildcards.seed)
    embeddings = TokenEmbeddings.load(snakemake.input.embeddings)
    model = snakemake.wildcards.model
    pca_keys = f"geometry.clusters.pca_layer or pca_layers.{model}"
    pca_layer = layer_index(embeddings, params.pca_layer, set_by=pca_keys)  # before the clustering
    clustering = {
        "k_range": tuple(params.k_range),
        "silhouette_threshold": params.silhouette_threshold,
        "silhouette_sample_size": params.silhouette_sample_size,
        "seed": seed,
    }
    table, clusters = cosine_by_layer(
        embeddings,
        model=model,
        corpus=snakemake.wildcards.corpus,
        return_clusters=True,
        **clustering,
    )
    write_table(table, snakemake.output.table)
    view = pca_view(
        embeddings,
        pca_layer,
        sample_size=params.pca_sample_size,
        clusters=clusters[pca_layer],
        **clustering,
    )
    write_table(view, snakemake.output.pca_view)
    record_step(snakemake, seeds=[seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
