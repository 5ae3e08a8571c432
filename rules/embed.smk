# Texts → vectors: one row per unique text of a prepared data set.


rule embed_sentences:
    input:
        table="resources/data/{dataset}.parquet",
    output:
        vectors=protected("resources/embeddings/{encoder}/{dataset}/vectors.npy"),
        index=protected("resources/embeddings/{encoder}/{dataset}/index.parquet"),
    wildcard_constraints:
        encoder="|".join(studies.encoders_of_kind(config, "sentence-transformer")) or "^$",
    params:
        encoder=sentence_encoder,
        device=config["device"],
    log:
        "logs/resources/embeddings/{encoder}/{dataset}.log",
    benchmark:
        "benchmarks/resources/embeddings/{encoder}/{dataset}.tsv"
    threads: 2
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 120 * attempt,
        gpu=1,
    conda:
        "../envs/torch.yaml"
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
    wildcard_constraints:
        encoder="|".join(studies.encoders_of_kind(config, "word-vectors")) or "^$",
    log:
        "logs/resources/embeddings/{encoder}/{dataset}.log",
    benchmark:
        "benchmarks/resources/embeddings/{encoder}/{dataset}.tsv"
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=30,
    conda:
        "../envs/torch.yaml"
    script:
        "../scripts/lookup_word_vectors.py"
