# Texts → vectors: one row per unique text of a prepared data set.


rule embed_sentences:
    input:
        table=paths.dataset_table(),
        model=lambda wc: models.model_manifests(
            config, configuration.encoder(config, wc.encoder)["model"]
        ),
    output:
        vectors=protected(paths.embedding_file("vectors.npy")),
        index=protected(paths.embedding_file("index.parquet")),
    log:
        logs("resources/embeddings/{encoder}/{dataset}.log"),
    benchmark:
        benchmarks("resources/embeddings/{encoder}/{dataset}.tsv")
    wildcard_constraints:
        encoder="|".join(
            configuration.encoders_of_kind(config, "sentence-transformer")
        )
        or "^$",
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 120 * attempt,
        gpu=1,
    params:
        encoder=lambda wc: configuration.sentence_encoder_spec(config, wc.encoder),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/embed_sentences.py"


rule lookup_word_vectors:
    input:
        table=paths.dataset_table(),
        word_vectors=lambda wc: paths.raw_manifest(
            configuration.encoder(config, wc.encoder)["source"]
        ),
    output:
        vectors=paths.embedding_file("vectors.npy"),
        index=paths.embedding_file("index.parquet"),
        missing=paths.embedding_file("missing.txt"),
    log:
        logs("resources/embeddings/{encoder}/{dataset}.log"),
    benchmark:
        benchmarks("resources/embeddings/{encoder}/{dataset}.tsv")
    wildcard_constraints:
        encoder="|".join(configuration.encoders_of_kind(config, "word-vectors")) or "^$",
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 30 * attempt,
    script:
        "../scripts/lookup_word_vectors.py"
