# Texts → vectors: one row per unique text of a prepared data set.


rule embed_sentences:
    input:
        table="resources/data/{dataset}.parquet",
        model=lambda wildcards: split_model_input(
            sentence_encoder(wildcards).get("path")
        ),
    output:
        vectors=protected("resources/embeddings/{encoder}/{dataset}/vectors.npy"),
        index=protected("resources/embeddings/{encoder}/{dataset}/index.parquet"),
    log:
        "logs/resources/embeddings/{encoder}/{dataset}.log",
    benchmark:
        "benchmarks/resources/embeddings/{encoder}/{dataset}.tsv"
    wildcard_constraints:
        encoder="|".join(studies.encoders_of_kind(config, "sentence-transformer"))
        or "^$",
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 120 * attempt,
        gpu=1,
    params:
        encoder=sentence_encoder,
        device=config["device"],
    script:
        "../scripts/embed_sentences.py"


rule lookup_word_vectors:
    input:
        table="resources/data/{dataset}.parquet",
        word_vectors=word_vector_file,
    output:
        vectors="resources/embeddings/{encoder}/{dataset}/vectors.npy",
        index="resources/embeddings/{encoder}/{dataset}/index.parquet",
        missing="resources/embeddings/{encoder}/{dataset}/missing.txt",
    log:
        "logs/resources/embeddings/{encoder}/{dataset}.log",
    benchmark:
        "benchmarks/resources/embeddings/{encoder}/{dataset}.tsv"
    wildcard_constraints:
        encoder="|".join(studies.encoders_of_kind(config, "word-vectors")) or "^$",
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 30 * attempt,
    script:
        "../scripts/lookup_word_vectors.py"
