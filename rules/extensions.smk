# The main paper's open questions, answered by experiment (config `extensions`, target
# extensions_study; science in isotropy.extensions, docs/extensions.md): other cluster criteria,
# a deep classifier, a triplet loss (the main study's direct optimisation of polarity and SNLI
# tables) and held-out data (MiniLM fine-tuned end to end). Tables, figures and claims in
# results/extensions/.


# One run: a seeded sample of a setup's items, the main study's optimiser, one head.
rule extensions_optimize:
    input:
        table=paths.dataset_table(),
        vectors=inputs.verified_embedding(encoder_of=EXTENSIONS_ENCODER),
        index=lambda wc: paths.embedding_file(
            "index.parquet", EXTENSIONS_ENCODER(wc), wc.dataset
        ),
    output:
        trace=paths.extensions_run_file("trace.parquet"),
        summary=paths.extensions_run_file("summary.json"),
    log:
        logs(paths.extensions_run_file("optimize.log")),
    benchmark:
        benchmarks(paths.extensions_run_file("optimize.tsv"))
    wildcard_constraints:
        **extensions_design.run_wildcards(SETTINGS),
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, input, attempt: int(2000 + 10 * input.size_mb) * attempt,
        runtime=lambda wc, attempt: 60 * attempt,
        gpu=1,
    params:
        run=lambda wc: extensions_design.run_settings(
            SETTINGS, wc.dataset, wc.head, int(wc.seed)
        ),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/extensions_optimize.py"


# One fine-tuning run on held-out data: per-epoch accuracy, IsoScore and silhouette.
rule extensions_heldout:
    input:
        table=paths.dataset_table(),
    output:
        epochs=paths.extensions_heldout_file("epochs.csv"),
        summary=paths.extensions_heldout_file("summary.json"),
    log:
        logs(paths.extensions_heldout_file("finetune.log")),
    benchmark:
        benchmarks(paths.extensions_heldout_file("finetune.tsv"))
    wildcard_constraints:
        **extensions_design.heldout_wildcards(SETTINGS),
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wc, attempt: 4000 * attempt,
        runtime=lambda wc, attempt: 120 * attempt,
        gpu=1,
    params:
        model=lambda wc: configuration.model_record(
            config, extensions_design.heldout_model(SETTINGS, wc.dataset)
        ),
        settings=lambda wc: extensions_design.heldout_run_settings(config),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/extensions_heldout.py"


# Per-seed values, one table per question (seeds and interval), the claims.
rule extensions_tables:
    input:
        traces=studies.extensions.run_files(SETTINGS, "trace.parquet"),
        epochs=studies.extensions.heldout_files(SETTINGS, "epochs.csv"),
    output:
        seeds=paths.extensions_file("seeds.csv"),
        tables=report(
            expand(
                paths.extensions_file("{question}.csv"),
                question=extensions_design.QUESTIONS,
            ),
            caption="../report/extensions_table.rst",
            category="extensions study",
        ),
        markdown=expand(
            paths.extensions_file("{question}.md"),
            question=extensions_design.QUESTIONS,
        ),
        claims=paths.extensions_file("claims.csv"),
        claims_markdown=paths.extensions_file("claims.md"),
    log:
        logs(paths.extensions_file("tables.log")),
    conda:
        "../envs/plots.yaml"
    params:
        runs=studies.extensions.runs(SETTINGS),
        level=lookup(dpath="extensions/interval_level", within=config),
        settings_line=extensions_design.settings_line(SETTINGS),
    script:
        "../scripts/extensions_tables.py"


rule extensions_figures:
    input:
        seeds=paths.extensions_file("seeds.csv"),
        traces=studies.extensions.run_files(SETTINGS, "trace.parquet"),
        epochs=studies.extensions.heldout_files(SETTINGS, "epochs.csv"),
    output:
        pdf=report(
            expand(
                paths.extensions_file("{question}.pdf"),
                question=extensions_design.QUESTIONS,
            ),
            caption="../report/extensions_figure.rst",
            category="extensions study",
        ),
        png=expand(
            paths.extensions_file("{question}.png"),
            question=extensions_design.QUESTIONS,
        ),
    log:
        logs(paths.extensions_file("figures.log")),
    conda:
        "../envs/plots.yaml"
    params:
        runs=studies.extensions.runs(SETTINGS),
        settings_line=extensions_design.settings_line(SETTINGS),
    script:
        "../scripts/extensions_figures.py"
