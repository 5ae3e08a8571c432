# Direct optimisation of embedding tables (paper section 3 and appendix A), then its tables and
# figures. Both studies share these rules: a study is configuration, not a pipeline.


# section2_metrics is a parameter only when a study records section 2's quantities
# (targets.section2_params), so default runs keep the parameters they were made with.
rule optimize_embeddings:
    input:
        table=paths.dataset_table(),
        vectors=inputs.verified_embedding(),
        index=paths.embedding_file("index.parquet"),
    output:
        trace=paths.optimisation_run_file("trace.parquet"),
        summary=paths.optimisation_run_file("summary.json"),
    log:
        logs(paths.optimisation_run_file("optimize.log")),
    benchmark:
        benchmarks(paths.optimisation_run_file("optimize.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        # The loaded file, the used rows, the table, its gradient and Adam's two moments are six
        # copies of the vectors; pair tasks add [u; v] and its gradient (~3 more at GLUE's
        # items/rows ratio): ~10x the file, plus 2 GB for metric blocks.
        mem_mb=lambda wc, input, attempt: int(2000 + 10 * input.size_mb) * attempt,
        runtime=lambda wc, attempt: 240 * attempt,
        gpu=1,
    params:
        **targets.section2_params(SETTINGS),
        settings=lambda wc: targets.optimisation_settings(
            SETTINGS, wc.study, wc.dataset, int(wc.seed)
        ),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/optimize_embeddings.py"


rule tabulate_parameters:
    input:
        summaries=lambda wc: targets.optimisation_run_files(
            SETTINGS, wc.study, "summary.json"
        ),
    output:
        table=report(
            paths.study_file("{table}.csv"),
            caption="../report/parameter_table.rst",
            category="{study} study",
        ),
    log:
        logs(paths.study_file("{table}.log")),
    wildcard_constraints:
        table="table1|table2",
    conda:
        "../envs/plots.yaml"
    params:
        run_keys=lambda wc: targets.table_runs(SETTINGS, wc.study),
        stand_ins=STAND_INS,
        encoder_labels=ENCODER_LABELS,
        stamp=lambda wc: targets.settings_stamp(SETTINGS, wc.study),
        facts=lambda wc: targets.caption_facts(SETTINGS, wc.study),
    script:
        "../scripts/tabulate_parameters.py"


rule tabulate_correlations:
    input:
        traces=lambda wc: targets.optimisation_run_files(
            SETTINGS, wc.study, "trace.parquet"
        ),
        published=paths.PUBLISHED_VALUES,
    output:
        table=report(
            paths.study_file("{table}.csv"),
            caption="../report/correlation_table.rst",
            category="{study} study",
        ),
    log:
        logs(paths.study_file("{table}.log")),
    wildcard_constraints:
        table="correlations|table3",
    conda:
        "../envs/plots.yaml"
    params:
        run_keys=lambda wc: targets.table_runs(SETTINGS, wc.study),
        stand_ins=STAND_INS,
        encoder_labels=ENCODER_LABELS,
        stamp=lambda wc: targets.settings_stamp(SETTINGS, wc.study),
        facts=lambda wc: targets.caption_facts(SETTINGS, wc.study),
    script:
        "../scripts/tabulate_correlations.py"


rule plot_metric_curves:
    input:
        traces=lambda wc: targets.optimisation_run_files(
            SETTINGS, wc.study, "trace.parquet"
        ),
    output:
        pdf=paths.study_file("{figure}.pdf"),
        png=report(
            paths.study_file("{figure}.png"),
            caption="../report/metric_curves.rst",
            category="{study} study",
        ),
    log:
        logs(paths.study_file("{figure}.log")),
    wildcard_constraints:
        figure="figure2|figure4",
    conda:
        "../envs/plots.yaml"
    params:
        run_keys=lambda wc: targets.table_runs(SETTINGS, wc.study),
        stand_ins=STAND_INS,
        encoder_labels=ENCODER_LABELS,
        stamp=lambda wc: targets.settings_stamp(SETTINGS, wc.study),
        facts=lambda wc: targets.caption_facts(SETTINGS, wc.study),
    script:
        "../scripts/plot_metric_curves.py"


rule plot_silhouette_vs_isoscore:
    input:
        traces=lambda wc: targets.optimisation_run_files(
            SETTINGS, wc.study, "trace.parquet"
        ),
        correlations=paths.study_file("correlations.csv"),
    output:
        pdf=paths.study_file("figure3.pdf"),
        png=report(
            paths.study_file("figure3.png"),
            caption="../report/silhouette_vs_isoscore.rst",
            category="{study} study",
        ),
    log:
        logs(paths.study_file("figure3.log")),
    conda:
        "../envs/plots.yaml"
    params:
        run_keys=lambda wc: targets.table_runs(SETTINGS, wc.study),
        stand_ins=STAND_INS,
        encoder_labels=ENCODER_LABELS,
        stamp=lambda wc: targets.settings_stamp(SETTINGS, wc.study),
        facts=lambda wc: targets.caption_facts(SETTINGS, wc.study),
    script:
        "../scripts/plot_silhouette_vs_isoscore.py"


rule figures:
    # The figures of the configured optimisation studies. To re-draw them from stored
    # traces without ever training, run with --allowed-rules and --forcerun on the plot
    # rules (make figures).
    input:
        [
            p
            for p in studies.study_targets(
                SETTINGS, [s for s in SETTINGS.studies if s in ("main", "glue")]
            )
            if "figure" in p
        ],


# The main paper's section 2 on real points: Eq. (3) ascent from a main-study data set's vectors.
rule section2_figure:
    input:
        table=lambda wc: paths.dataset_table(config["section2"]["dataset"]),
        vectors=lambda wc: paths.embedding_file(
            "vectors.npy", config["section2"]["encoder"], config["section2"]["dataset"]
        ),
        index=lambda wc: paths.embedding_file(
            "index.parquet",
            config["section2"]["encoder"],
            config["section2"]["dataset"],
        ),
    output:
        pdf=paths.section2_file("figure.pdf"),
        png=report(
            paths.section2_file("figure.png"),
            caption="../report/section2.rst",
            category="main study",
        ),
        trace=paths.section2_file("trace.csv"),
        classes=paths.section2_file("classes.csv"),
    log:
        logs(paths.section2_file("figure.pdf.log")),
    benchmark:
        benchmarks(paths.section2_file("figure.tsv"))
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 4000 * attempt,
        runtime=lambda wc, attempt: 20 * attempt,
    params:
        settings=lookup(dpath="section2", within=config),
    script:
        "../scripts/section2_figure.py"
