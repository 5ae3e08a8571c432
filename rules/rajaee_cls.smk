# The Rajaee CLS study (Rajaee & Sheikhi 2020 slides; config rajaee_cls): Rajaee & Pilehvar's
# cluster-based method on the CLS states inside fine-tuning. Science in isotropy.rajaee_cls; its
# runs fine-tune through isotropy.finetune.


# One run: fine-tuning without or with the method (wildcard method: none or cluster, a
# transform of the CLS states the head reads, fitted on the training set or on each batch (config
# rajaee_cls.cluster_method.fit); no penalty in the loss).
rule rajaee_cls_finetune:
    input:
        unpack(lambda wc: readers.task_inputs(config, wc.task)),
        model=lambda wc: models.required_manifests(
            [configuration.model_spec(config, wc.model).path]
        ),
    output:
        metrics=paths.rajaee_cls_run_file(),
    log:
        logs(paths.rajaee_cls_run_file("metrics.json.log")),
    benchmark:
        benchmarks(paths.rajaee_cls_run_file("finetune.tsv"))
    wildcard_constraints:
        model=targets.names_pattern(lookup(dpath="rajaee_cls/models", within=config)),
        method="none|cluster",
        seed=r"\d+",
    conda:
        "../envs/torch.yaml"
    threads: lookup(dpath="rajaee_cls/resources/threads", within=config)
    resources:
        mem_mb=lambda wc, attempt: lookup(
            dpath="rajaee_cls/resources/mem_mb", within=config
        )
        * attempt,
        runtime=lambda wc, attempt: lookup(
            dpath="rajaee_cls/resources/runtime", within=config
        )
        * attempt,
        gpu=lookup(dpath="rajaee_cls/resources/gpu", within=config),
    params:
        model=lambda wildcards: configuration.model_record(config, wildcards.model),
        training=lookup(dpath="rajaee_cls/training", within=config),
        cluster_method=lookup(dpath="rajaee_cls/cluster_method", within=config),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/rajaee_cls_finetune.py"


# runs.csv (accuracy, last-layer CLS I(W) per run), layers.csv (per layer: I(W), IsoScore, CLS
# and token mean norms) and the two CLS claims judged over seeds (claims.csv, claims.md).
rule rajaee_cls_tables:
    input:
        metrics=studies.rajaee_cls.run_files(SETTINGS),
    output:
        runs=paths.rajaee_cls_file("runs.csv"),
        layers=paths.rajaee_cls_file("layers.csv"),
        claims=report(
            paths.rajaee_cls_file("claims.csv"),
            caption="../report/rajaee_cls.rst",
            category="rajaee_cls study",
        ),
        markdown=paths.rajaee_cls_file("claims.md"),
    log:
        logs(paths.rajaee_cls_file("runs.csv.log")),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        runs=studies.rajaee_cls.runs(SETTINGS),
        settings=lookup(dpath="rajaee_cls", within=config),
    script:
        "../scripts/rajaee_cls_tables.py"


# The per-layer CLS isotropy after fine-tuning (I(W) and IsoScore), with and without the method.
rule rajaee_cls_figure:
    input:
        layers=paths.rajaee_cls_file("layers.csv"),
    output:
        pdf=paths.rajaee_cls_file("layers.pdf"),
        png=report(
            paths.rajaee_cls_file("layers.png"),
            caption="../report/rajaee_cls.rst",
            category="rajaee_cls study",
        ),
    log:
        logs(paths.rajaee_cls_file("layers.pdf.log")),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        settings=lookup(dpath="rajaee_cls", within=config),
    script:
        "../scripts/rajaee_cls_figure.py"
