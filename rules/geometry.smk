# Geometry study (docs/methods.md): clusters, manifolds and LID of contextual token embeddings
# (Cai et al. 2021) and cluster-based isotropy enhancement on STS (Rajaee & Pilehvar 2021).
# The science lives in isotropy.geometry; targets: isotropy.studies.geometry.outputs.


# Hidden states of every layer for capped token instances of the corpus (GPU when present).
rule geometry_token_embeddings:
    input:
        # The corpus's download (checked against the mirror while the DAG is built).
        unpack(lambda wc: readers.corpus_inputs(SETTINGS)),
        model=lambda wc: models.model_manifests(config, wc.model),
    output:
        embeddings=paths.token_embeddings(),
    log:
        logs("resources/geometry/{model}/{corpus}/token_embeddings.npz.log"),
    benchmark:
        benchmarks("resources/geometry/{model}/{corpus}/token_embeddings.tsv")
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 16000 * attempt,
        runtime=lambda wildcards, attempt: 120 * attempt,
        gpu=1,
    params:
        model=lambda wildcards: configuration.model_record(config, wildcards.model),
        corpus=lookup(dpath="geometry/clusters/corpus", within=config),
        device=lookup(dpath="device", within=config),
        batch_size=lookup(dpath="geometry/batch_size", within=config),
        max_length=lookup(dpath="geometry/max_length", within=config),
        max_per_type=lookup(dpath="geometry/clusters/max_per_type", within=config),
        max_tokens=lookup(dpath="geometry/clusters/max_tokens", within=config),
    script:
        "../scripts/geometry_token_embeddings.py"


# S_inter / S_intra per layer, raw and k-means cluster-centred; PCA view of one layer.
rule geometry_cosine:
    input:
        embeddings=paths.token_embeddings(),
    output:
        table=paths.geometry_run_file("cosine_by_layer.csv"),
        pca_view=paths.geometry_run_file("pca_view.csv"),
    log:
        logs(paths.geometry_run_file("cosine_by_layer.csv.log")),
    benchmark:
        benchmarks(paths.geometry_run_file("cosine_by_layer.tsv"))
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: costs.JOB_THREADS  # what geometry.cost prices
    resources:
        mem_mb=lambda wildcards, attempt: 16000 * attempt,
        runtime=lambda wildcards, attempt: 240 * attempt,
    params:
        **studies.geometry.clustering_params(SETTINGS),
        pca_layer=lambda wc: studies.geometry.pca_layer(SETTINGS, wc.model),
        pca_sample_size=lookup(dpath="geometry/clusters/pca_sample_size", within=config),
    script:
        "../scripts/geometry_cosine.py"


# Local intrinsic dimension (MLE, k nearest neighbours) per layer and distance.
rule geometry_lid:
    input:
        embeddings=paths.token_embeddings(),
    output:
        table=paths.geometry_run_file("lid.csv"),
    log:
        logs(paths.geometry_run_file("lid.csv.log")),
    benchmark:
        benchmarks(paths.geometry_run_file("lid.tsv"))
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: costs.JOB_THREADS  # what geometry.cost prices
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 120 * attempt,
    params:
        k=lookup(dpath="geometry/clusters/lid_k", within=config),
        metrics=lookup(dpath="geometry/clusters/lid_metrics", within=config),
        sample_size=lookup(dpath="geometry/clusters/lid_sample_size", within=config),
    script:
        "../scripts/geometry_lid.py"


# Static word vectors: the comparison rows of both tables.
rule geometry_static:
    input:
        manifest=paths.raw_manifest(),
    output:
        cosine=paths.static_geometry_file("cosine.csv"),
        lid=paths.static_geometry_file("lid.csv"),
    log:
        logs(paths.static_geometry_file("cosine.csv.log")),
    benchmark:
        benchmarks(paths.static_geometry_file("cosine.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 4
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
    params:
        **studies.geometry.clustering_params(SETTINGS),
        max_words=lookup(dpath="geometry/clusters/static/max_words", within=config),
        sample_size=lookup(dpath="geometry/clusters/static/sample_size", within=config),
        lid_k=lookup(dpath="geometry/clusters/lid_k", within=config),
        lid_metrics=lookup(dpath="geometry/clusters/lid_metrics", within=config),
    script:
        "../scripts/geometry_static.py"


# The main paper's footnote 1: analogy accuracy of the static word vectors as they are, whitened
# and after all-but-the-top, beside their IsoScore, with the declared rule's verdict
# (isotropy.geometry.analogies). Not in rule all: snakemake results/geometry/analogies.csv.
rule analogies:
    input:
        manifest=paths.raw_manifest("word2vec"),
    output:
        table=paths.ANALOGIES,
    log:
        logs(f"{paths.ANALOGIES}.log"),
    benchmark:
        benchmarks(f"{paths.ANALOGIES}.tsv")
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, attempt: 2000 * attempt,
        runtime=lambda wildcards, attempt: 30 * attempt,
    script:
        "../scripts/analogies.py"


rule geometry_collect_cosine:
    input:
        inputs.geometry_cluster_files(SETTINGS, "cosine_by_layer.csv")
        + inputs.geometry_static_files(SETTINGS, "cosine.csv"),
    output:
        table=report(
            paths.GEOMETRY_COSINE,
            caption="../report/geometry.rst",
            category="geometry study",
        ),
    log:
        logs(f"{paths.GEOMETRY_COSINE}.log"),
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        table="cosine",
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_collect.py"


rule geometry_collect_lid:
    input:
        inputs.geometry_cluster_files(SETTINGS, "lid.csv")
        + inputs.geometry_static_files(SETTINGS, "lid.csv"),
    output:
        table=report(
            paths.GEOMETRY_LID,
            caption="../report/geometry.rst",
            category="geometry study",
        ),
    log:
        logs(f"{paths.GEOMETRY_LID}.log"),
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        table="lid",
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_collect.py"


# Mean-pooled last-layer sentence embeddings of an STS data set (GPU when present).
rule geometry_sentence_embeddings:
    input:
        # The STS split's download; none for SICK-R when the mirror lacks it (optional).
        unpack(
            lambda wc: readers.sts_inputs(
                SETTINGS, wc.sts, config["geometry"]["sts"]["splits"][wc.sts]
            )
        ),
        model=lambda wc: models.model_manifests(config, wc.model),
    output:
        embeddings=paths.sentence_embeddings(),
    log:
        logs("resources/geometry/{model}/{sts}/sentence_embeddings.npz.log"),
    benchmark:
        benchmarks("resources/geometry/{model}/{sts}/sentence_embeddings.tsv")
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
        gpu=1,
    params:
        model=lambda wildcards: configuration.model_record(config, wildcards.model),
        split=lookup(dpath="geometry/sts/splits/{sts}", within=config),
        device=lookup(dpath="device", within=config),
        batch_size=lookup(dpath="geometry/batch_size", within=config),
        max_length=lookup(dpath="geometry/max_length", within=config),
    script:
        "../scripts/geometry_sentence_embeddings.py"


# Pearson / Spearman of pair cosines vs. gold, and I(W), per enhancement method.
rule geometry_sts:
    input:
        embeddings=paths.sentence_embeddings(),
    output:
        table=paths.geometry_run_file("sts.csv", data="{sts}"),
    log:
        logs(paths.geometry_run_file("sts.csv.log", data="{sts}")),
    benchmark:
        benchmarks(paths.geometry_run_file("sts.tsv", data="{sts}"))
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
    params:
        methods=lookup(dpath="geometry/sts/methods", within=config),
        n_clusters=lookup(dpath="geometry/sts/n_clusters", within=config),
        n_directions=lookup(dpath="geometry/sts/n_directions", within=config),
        abtt_directions=lookup(dpath="geometry/sts/abtt_directions", within=config),
    script:
        "../scripts/geometry_sts.py"


rule geometry_collect_sts:
    input:
        inputs.collected_sts_files(SETTINGS),
    output:
        table=report(
            paths.GEOMETRY_STS,
            caption="../report/geometry.rst",
            category="geometry study",
        ),
    log:
        logs(f"{paths.GEOMETRY_STS}.log"),
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        table="sts",
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_collect.py"


# Figures: plotting reads stored tables only, so restyling never recomputes.
rule geometry_plot_table:
    input:
        table=lambda wildcards: studies.geometry.FIGURE_TABLES[wildcards.figure],
    output:
        pdf=paths.geometry_figure(ext="pdf"),
        png=report(
            paths.geometry_figure(ext="png"),
            caption="../report/geometry.rst",
            category="geometry study",
        ),
    log:
        logs(paths.geometry_figure(ext="pdf.log")),
    wildcard_constraints:
        figure="|".join(studies.geometry.FIGURE_TABLES),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        figure=lambda wildcards: wildcards.figure,
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_plot.py"


rule geometry_plot_pca_view:
    input:
        table=paths.geometry_run_file("pca_view.csv"),
    output:
        pdf=paths.pca_view_figure("pdf"),
        png=report(
            paths.pca_view_figure("png"),
            caption="../report/geometry.rst",
            category="geometry study",
            subcategory="{model}",
        ),
    log:
        logs(paths.pca_view_figure(ext="pdf.log")),
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        figure="pca_view",
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_plot.py"


# I(W) of every layer's token states (the slides' "Pre-trained BERT Isotropy" figure).
rule geometry_isotropy:
    input:
        embeddings=paths.token_embeddings(),
    output:
        table=paths.geometry_run_file("isotropy_by_layer.csv"),
    log:
        logs(paths.geometry_run_file("isotropy_by_layer.csv.log")),
    benchmark:
        benchmarks(paths.geometry_run_file("isotropy_by_layer.tsv"))
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 30 * attempt,
    script:
        "../scripts/geometry_isotropy.py"


rule geometry_collect_isotropy:
    input:
        inputs.geometry_cluster_files(SETTINGS, "isotropy_by_layer.csv"),
    output:
        table=report(
            paths.GEOMETRY_ISOTROPY,
            caption="../report/geometry.rst",
            category="geometry study",
        ),
    log:
        logs(f"{paths.GEOMETRY_ISOTROPY}.log"),
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        table="isotropy_by_layer",
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_collect.py"


# Rajaei & Sheikhi's SST-2 table: frozen last-layer token states of both splits (GPU when present).
rule geometry_classification_features:
    input:
        unpack(lambda wc: readers.task_inputs(config, wc.task)),
        model=lambda wc: models.model_manifests(config, wc.model),
    output:
        features=paths.classification_features(),
    log:
        logs(f"{paths.classification_features()}.log"),
    benchmark:
        benchmarks("resources/geometry/{model}/{task}/token_features.tsv")
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 60 * attempt,
        gpu=1,
    params:
        model=lambda wildcards: configuration.model_record(config, wildcards.model),
        device=lookup(dpath="device", within=config),
        batch_size=lookup(dpath="geometry/batch_size", within=config),
        max_length=lookup(dpath="geometry/classification/max_length", within=config),
        train_subset=lookup(dpath="geometry/classification/train_subset", within=config),
        subset_seed=lookup(dpath="geometry/classification/subset_seed", within=config),
    script:
        "../scripts/geometry_classification_features.py"


# A linear classifier on the features with and without the cluster-based method; I(W).
rule geometry_classification:
    input:
        features=paths.classification_features(),
    output:
        table=paths.classification_run_file(),
    log:
        logs(f"{paths.classification_run_file()}.log"),
    benchmark:
        benchmarks(paths.classification_run_file("classification.tsv"))
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wildcards, attempt: 8000 * attempt,
        runtime=lambda wildcards, attempt: 120 * attempt,
    params:
        seeds=lookup(dpath="geometry/classification/seeds", within=config),
        methods=lookup(dpath="geometry/classification/methods", within=config),
        readings=lookup(dpath="geometry/classification/readings", within=config),
        max_length=lookup(dpath="geometry/classification/max_length", within=config),
        C=lookup(dpath="geometry/classification/C", within=config),
        max_iter=lookup(dpath="geometry/classification/max_iter", within=config),
        n_clusters=lookup(dpath="geometry/sts/n_clusters", within=config),
        n_directions=lookup(dpath="geometry/sts/n_directions", within=config),
    script:
        "../scripts/geometry_classification.py"


rule geometry_collect_classification:
    input:
        inputs.classification_files(SETTINGS),
    output:
        table=report(
            paths.GEOMETRY_CLASSIFICATION,
            caption="../report/geometry.rst",
            category="geometry study",
        ),
    log:
        logs(f"{paths.GEOMETRY_CLASSIFICATION}.log"),
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        table="classification",
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_collect.py"


# Corpus count of every token type, as the model's tokenizer splits the whole corpus (the
# embedded instances are capped per type, so they cannot give frequencies).
rule geometry_token_frequency:
    input:
        unpack(lambda wc: readers.corpus_inputs(SETTINGS)),
        model=lambda wc: models.required_manifests(
            [configuration.model_spec(config, wc.model).path]
        ),
    output:
        table=paths.token_frequency(),
    log:
        logs(f"{paths.token_frequency()}.log"),
    benchmark:
        benchmarks(f"{paths.token_frequency()}.tsv")
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wildcards, attempt: 4000 * attempt,
        runtime=lambda wildcards, attempt: 30 * attempt,
    params:
        model=lambda wildcards: configuration.model_record(config, wildcards.model),
        corpus=lookup(dpath="geometry/clusters/corpus", within=config),
        max_length=lookup(dpath="geometry/max_length", within=config),
    script:
        "../scripts/geometry_token_frequency.py"


# Cai et al.'s token views of the PCA view's layer: by token kind and by corpus frequency.
rule geometry_plot_token_views:
    input:
        view=paths.geometry_run_file("pca_view.csv"),
        frequency=paths.token_frequency(),
    output:
        pdf=paths.token_views_figure("pdf"),
        png=report(
            paths.token_views_figure("png"),
            caption="../report/geometry.rst",
            category="geometry study",
            subcategory="{model}",
        ),
    log:
        logs(paths.token_views_figure(ext="pdf.log")),
    benchmark:
        benchmarks(paths.token_views_figure(ext="tsv"))
    wildcard_constraints:
        **GEOMETRY_WILDCARDS,
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        # the caption names the run's stand-ins (report/geometry.rst)
        stand_ins=STAND_INS,
    script:
        "../scripts/geometry_plot_token_views.py"
