# Geometry study (papers.md §4): clusters, manifolds and LID of contextual token embeddings
# (Cai et al. 2021) and cluster-based isotropy enhancement on STS (Rajaee & Pilehvar 2021).
# The science lives in isotropy.geometry; targets: isotropy.geometry.workflow_targets(config).
import re

from isotropy import geometry as isotropy_geometry

isotropy_geometry.check_config(config)

GEOMETRY = config.get("geometry", {})
GEOMETRY_MODELS = "|".join(re.escape(name) for name in GEOMETRY.get("models", {})) or "^$"
GEOMETRY_CORPUS = re.escape(GEOMETRY["clusters"]["corpus"]["name"]) if GEOMETRY else "^$"
GEOMETRY_WILDCARDS = {
    "model": GEOMETRY_MODELS,
    "corpus": GEOMETRY_CORPUS,
    "sts": "stsb|sickr",
    "seed": r"\d+",
}
# Figure name → the collected table it draws.
GEOMETRY_FIGURE_TABLES = {"cosine_by_layer": "cosine_by_layer", "lid_by_layer": "lid", "sts": "sts"}


def geometry_cluster_files(artefact):
    """One per-model artefact of the cluster analysis for every model and seed."""
    corpus = GEOMETRY["clusters"]["corpus"]["name"]
    return [
        f"results/geometry/{model}/{corpus}/seed{seed}/{artefact}"
        for model in GEOMETRY["clusters"]["models"]
        for seed in GEOMETRY["seeds"]
    ]


def geometry_static_files(artefact):
    """The static word-vector comparison rows (none when clusters.static.source is null)."""
    source = GEOMETRY["clusters"]["static"].get("source")
    if source is None:
        return []
    return [
        f"results/geometry/static/{source}/seed{seed}/{artefact}"
        for seed in GEOMETRY["seeds"]
    ]


def geometry_sts_files():
    return [
        f"results/geometry/{model}/{sts}/seed{seed}/sts.csv"
        for model in GEOMETRY["sts"]["models"]
        for sts in GEOMETRY["sts"]["datasets"]
        for seed in GEOMETRY["seeds"]
    ]


def geometry_clustering_params():
    clusters = GEOMETRY["clusters"]
    return {
        "k_range": clusters["k_range"],
        "silhouette_threshold": clusters["silhouette_threshold"],
        "silhouette_sample_size": clusters["silhouette_sample_size"],
    }


# Hidden states of every layer for capped token instances of the corpus (GPU when present).
rule geometry_token_embeddings:
    output:
        embeddings="resources/geometry/{model}/{corpus}/token_embeddings.npz",
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    params:
        model=lambda wildcards: isotropy_geometry.model_entry(config, wildcards.model),
        corpus=GEOMETRY.get("clusters", {}).get("corpus"),
        mirror=config["mirror"],
        device=config["device"],
        batch_size=GEOMETRY.get("batch_size"),
        max_length=GEOMETRY.get("max_length"),
        max_per_type=GEOMETRY.get("clusters", {}).get("max_per_type"),
        max_tokens=GEOMETRY.get("clusters", {}).get("max_tokens"),
    log:
        "logs/resources/geometry/{model}/{corpus}/token_embeddings.npz.log",
    benchmark:
        "benchmarks/resources/geometry/{model}/{corpus}/token_embeddings.tsv"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 16000 * attempt,
        runtime=lambda wildcards, attempt: 120 * attempt,
        gpu=1,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/geometry_token_embeddings.py"


# S_inter / S_intra per layer, raw and k-means cluster-centred; PCA view of one layer.
rule geometry_cosine:
    input:
        embeddings="resources/geometry/{model}/{corpus}/token_embeddings.npz",
    output:
        table="results/geometry/{model}/{corpus}/seed{seed}/cosine_by_layer.csv",
        pca_view="results/geometry/{model}/{corpus}/seed{seed}/pca_view.csv",
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    params:
        **(geometry_clustering_params() if GEOMETRY else {}),
        pca_layer=GEOMETRY.get("clusters", {}).get("pca_layer"),
        pca_sample_size=GEOMETRY.get("clusters", {}).get("pca_sample_size"),
    log:
        "logs/results/geometry/{model}/{corpus}/seed{seed}/cosine_by_layer.csv.log",
    benchmark:
        "benchmarks/results/geometry/{model}/{corpus}/seed{seed}/cosine_by_layer.tsv"
    threads: 4
    resources:
        mem_mb=lambda wildcards, attempt: 16000 * attempt,
        runtime=lambda wildcards, attempt: 240 * attempt,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/geometry_cosine.py"


# Local intrinsic dimension (MLE, k nearest neighbours) per layer and distance.
rule geometry_lid:
    input:
        embeddings="resources/geometry/{model}/{corpus}/token_embeddings.npz",
    output:
        table="results/geometry/{model}/{corpus}/seed{seed}/lid.csv",
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    params:
        k=GEOMETRY.get("clusters", {}).get("lid_k"),
        metrics=GEOMETRY.get("clusters", {}).get("lid_metrics"),
        sample_size=GEOMETRY.get("clusters", {}).get("lid_sample_size"),
    log:
        "logs/results/geometry/{model}/{corpus}/seed{seed}/lid.csv.log",
    benchmark:
        "benchmarks/results/geometry/{model}/{corpus}/seed{seed}/lid.tsv"
    threads: 4
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 120 * attempt,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/geometry_lid.py"


# Static word vectors: the comparison rows of both tables.
rule geometry_static:
    input:
        manifest="resources/raw/{source}/manifest.json",
    output:
        cosine="results/geometry/static/{source}/seed{seed}/cosine.csv",
        lid="results/geometry/static/{source}/seed{seed}/lid.csv",
    wildcard_constraints:
        source="|".join(re.escape(name) for name in config["sources"]),
        seed=r"\d+",
    params:
        **(geometry_clustering_params() if GEOMETRY else {}),
        max_words=GEOMETRY.get("clusters", {}).get("static", {}).get("max_words"),
        sample_size=GEOMETRY.get("clusters", {}).get("static", {}).get("sample_size"),
        lid_k=GEOMETRY.get("clusters", {}).get("lid_k"),
        lid_metrics=GEOMETRY.get("clusters", {}).get("lid_metrics"),
    log:
        "logs/results/geometry/static/{source}/seed{seed}/cosine.csv.log",
    benchmark:
        "benchmarks/results/geometry/static/{source}/seed{seed}/cosine.tsv"
    threads: 4
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/geometry_static.py"


rule geometry_collect_cosine:
    input:
        geometry_cluster_files("cosine_by_layer.csv") + geometry_static_files("cosine.csv")
        if GEOMETRY
        else [],
    output:
        table="results/geometry/cosine_by_layer.csv",
    params:
        table="cosine",
    log:
        "logs/results/geometry/cosine_by_layer.csv.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/data.yaml"
    script:
        "../scripts/geometry_collect.py"


rule geometry_collect_lid:
    input:
        geometry_cluster_files("lid.csv") + geometry_static_files("lid.csv")
        if GEOMETRY
        else [],
    output:
        table="results/geometry/lid.csv",
    params:
        table="lid",
    log:
        "logs/results/geometry/lid.csv.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/data.yaml"
    script:
        "../scripts/geometry_collect.py"


# Mean-pooled last-layer sentence embeddings of an STS data set (GPU when present).
rule geometry_sentence_embeddings:
    output:
        embeddings="resources/geometry/{model}/{sts}/sentence_embeddings.npz",
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    params:
        model=lambda wildcards: isotropy_geometry.model_entry(config, wildcards.model),
        split=lambda wildcards: GEOMETRY["sts"]["splits"][wildcards.sts],
        mirror=config["mirror"],
        device=config["device"],
        batch_size=GEOMETRY.get("batch_size"),
        max_length=GEOMETRY.get("max_length"),
    log:
        "logs/resources/geometry/{model}/{sts}/sentence_embeddings.npz.log",
    benchmark:
        "benchmarks/resources/geometry/{model}/{sts}/sentence_embeddings.tsv"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
        gpu=1,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/geometry_sentence_embeddings.py"


# Pearson / Spearman of pair cosines vs. gold, and I(W), per enhancement method.
rule geometry_sts:
    input:
        embeddings="resources/geometry/{model}/{sts}/sentence_embeddings.npz",
    output:
        table="results/geometry/{model}/{sts}/seed{seed}/sts.csv",
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    params:
        methods=GEOMETRY.get("sts", {}).get("methods"),
        n_clusters=GEOMETRY.get("sts", {}).get("n_clusters"),
        n_directions=GEOMETRY.get("sts", {}).get("n_directions"),
        abtt_directions=GEOMETRY.get("sts", {}).get("abtt_directions"),
    log:
        "logs/results/geometry/{model}/{sts}/seed{seed}/sts.csv.log",
    benchmark:
        "benchmarks/results/geometry/{model}/{sts}/seed{seed}/sts.tsv"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/geometry_sts.py"


rule geometry_collect_sts:
    input:
        geometry_sts_files() if GEOMETRY else [],
    output:
        table="results/geometry/sts.csv",
    params:
        table="sts",
    log:
        "logs/results/geometry/sts.csv.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/data.yaml"
    script:
        "../scripts/geometry_collect.py"


# Figures: plotting reads stored tables only, so restyling never recomputes.
rule geometry_plot_table:
    input:
        table=lambda wildcards: f"results/geometry/{GEOMETRY_FIGURE_TABLES[wildcards.figure]}.csv",
    output:
        pdf=report(
            "results/geometry/figures/{figure}.pdf",
            caption="../report/geometry_{figure}.rst",
            category="Geometry",
        ),
        png="results/geometry/figures/{figure}.png",
    wildcard_constraints:
        figure="|".join(GEOMETRY_FIGURE_TABLES),
    params:
        figure=lambda wildcards: wildcards.figure,
    log:
        "logs/results/geometry/figures/{figure}.pdf.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/plots.yaml"
    script:
        "../scripts/geometry_plot.py"


rule geometry_plot_pca_view:
    input:
        table="results/geometry/{model}/{corpus}/seed{seed}/pca_view.csv",
    output:
        pdf=report(
            "results/geometry/figures/{model}/{corpus}/seed{seed}/pca_view.pdf",
            caption="../report/geometry_pca_view.rst",
            category="Geometry",
            subcategory="{model}",
        ),
        png="results/geometry/figures/{model}/{corpus}/seed{seed}/pca_view.png",
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    params:
        figure="pca_view",
    log:
        "logs/results/geometry/figures/{model}/{corpus}/seed{seed}/pca_view.pdf.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/plots.yaml"
    script:
        "../scripts/geometry_plot.py"


rule geometry_all:
    input:
        isotropy_geometry.workflow_targets(config),
