# I-STAR study (docs/methods.md): fine-tuning with IsoScore* regularisation, CosReg and no
# regulariser; performance against isotropy (Figures 5-7). Science in isotropy.istar and
# isotropy.plots.istar; the grid, its wildcards and final files: isotropy.workflow.targets.


# One fine-tuning run. Checkpoints (checkpoint.pt, after every epoch) sit beside metrics.json
# and are not outputs, so a killed or timed-out job resumes from its last epoch on retry.
rule finetune:
    input:
        # The task's train and validation splits, each a download (hub or mirror); with a mirror,
        # a task whose files it lacks stops the DAG here, naming the tasks it holds.
        unpack(lambda wc: readers.task_inputs(config, wc.task)),
        model=lambda wc: models.model_manifests(config, wc.model),
    output:
        metrics=paths.istar_run_file(),
    log:
        logs(paths.istar_run_file("metrics.json.log")),
    benchmark:
        benchmarks(paths.istar_run_file("finetune.tsv"))
    wildcard_constraints:
        **ISTAR_WILDCARDS,
    conda:
        "../envs/torch.yaml"
    threads: lookup(dpath="istar/resources/threads", within=config, default=4)
    resources:
        mem_mb=lambda wc, attempt: lookup(
            dpath="istar/resources/mem_mb", within=config
        )
        * attempt,
        runtime=lambda wc, attempt: lookup(
            dpath="istar/resources/runtime", within=config
        )
        * attempt,
        gpu=lookup(dpath="istar/resources/gpu", within=config, default=1),
    params:
        model=lambda wildcards: configuration.model_record(config, wildcards.model),
        lam=lambda wc: istar_design.configured_lambda(ISTAR, wc.regulariser, wc.lam),
        training=lookup(dpath="istar/training", within=config),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/finetune_model.py"


# runs.csv: one row per run (model, task, regulariser, λ, seed, metric, IsoScore*, TwoNN).
rule istar_runs:
    input:
        metrics=studies.istar.run_files(ISTAR),
    output:
        table=report(
            paths.ISTAR_RUNS,
            caption="../report/istar.rst",
            category="istar study",
        ),
    log:
        logs(f"{paths.ISTAR_RUNS}.log"),
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        models=[r["model"] for r in studies.istar.runs(ISTAR)],
    script:
        "../scripts/istar_runs.py"


# Figures 5-7 (+ the table each one draws), from runs.csv only.
rule istar_figure:
    input:
        runs=paths.ISTAR_RUNS,
    output:
        pdf=paths.istar_figure(ext="pdf"),
        png=report(
            paths.istar_figure(ext="png"),
            caption="../report/istar.rst",
            category="istar study",
        ),
        table=paths.istar_figure(ext="csv"),
    log:
        logs(paths.istar_figure(ext="pdf.log")),
    wildcard_constraints:
        figure="figure5|figure6|figure7",
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        figure6_selection=lookup(dpath="istar/figure6_selection", within=config),
        figure7_task=lookup(dpath="istar/figure7_task", within=config),
    script:
        "../scripts/istar_figure.py"


# The poster's estimator figures on point clouds of known isotropy (CPU seconds, no model):
# Figure 4 (IsoScore* against ζ; IsoScore vs IsoScore* against the mini-batch size).
rule istar_figure4:
    output:
        pdf=paths.istar_estimator_file("figure4.pdf"),
        png=report(
            paths.istar_estimator_file("figure4.png"),
            caption="../report/istar_estimator.rst",
            category="istar study",
        ),
        zeta_table=paths.istar_estimator_file("figure4_zeta.csv"),
        batch_table=paths.istar_estimator_file("figure4_batches.csv"),
    log:
        logs(paths.istar_estimator_file("figure4.pdf.log")),
    benchmark:
        benchmarks(paths.istar_estimator_file("figure4.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        settings=lookup(dpath="istar_estimator", within=config),
    script:
        "../scripts/istar_estimator_figure.py"


# Figures 2-3: clouds with the poster's average cosines (0.978, 0.005) and their IsoScore.
rule istar_figures2_3:
    output:
        pdf=paths.istar_estimator_file("figures2_3.pdf"),
        png=report(
            paths.istar_estimator_file("figures2_3.png"),
            caption="../report/istar_estimator.rst",
            category="istar study",
        ),
        table=paths.istar_estimator_file("figures2_3.csv"),
        points=paths.istar_estimator_file("figures2_3_points.csv"),
    log:
        logs(paths.istar_estimator_file("figures2_3.pdf.log")),
    benchmark:
        benchmarks(paths.istar_estimator_file("figures2_3.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        settings=lookup(dpath="istar_estimator", within=config),
    script:
        "../scripts/istar_estimator_figure.py"


# The poster's line, circle and sphere in 3-D: IsoScore against (k - 1)/(d - 1).
rule istar_shapes:
    output:
        pdf=paths.istar_estimator_file("shapes.pdf"),
        png=report(
            paths.istar_estimator_file("shapes.png"),
            caption="../report/istar_estimator.rst",
            category="istar study",
        ),
        table=paths.istar_estimator_file("shapes.csv"),
        points=paths.istar_estimator_file("shapes_points.csv"),
    log:
        logs(paths.istar_estimator_file("shapes.pdf.log")),
    benchmark:
        benchmarks(paths.istar_estimator_file("shapes.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        settings=lookup(dpath="istar_estimator", within=config),
    script:
        "../scripts/istar_estimator_figure.py"


# Figure 1: average activation per dimension of sentence embeddings of SST-2 validation.
rule istar_figure1:
    input:
        validation=lambda wc: readers.task_inputs(config, "sst2")["validation"],
        model=lambda wc: models.model_manifests(
            config,
            *[
                configuration.encoder(config, name)["model"]
                for name in config["istar_estimator"]["figure1_encoders"]
            ],
        ),
    output:
        pdf=paths.istar_estimator_file("figure1.pdf"),
        png=report(
            paths.istar_estimator_file("figure1.png"),
            caption="../report/istar_estimator.rst",
            category="istar study",
        ),
        table=paths.istar_estimator_file("figure1.csv"),
        summary=paths.istar_estimator_file("figure1_summary.csv"),
    log:
        logs(paths.istar_estimator_file("figure1.pdf.log")),
    benchmark:
        benchmarks(paths.istar_estimator_file("figure1.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=lambda wc, attempt: 8000 * attempt,
        runtime=lambda wc, attempt: 30 * attempt,
    params:
        encoders=lambda wc: {
            name: configuration.sentence_encoder_spec(config, name)
            for name in config["istar_estimator"]["figure1_encoders"]
        },
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/istar_activation_figure.py"
