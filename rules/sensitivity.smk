# Sensitivity of the main result (config `sensitivity`, science in isotropy.sensitivity, grid in
# isotropy.workflow.targets): the main study's
# direct optimisation (rule optimize_embeddings, same script and settings) of the word setups
# over vector sets x label sets x seeds, then one table and one figure in results/sensitivity/.


# The items of one label set: the setup's words with a vector in `items_from`, then filtered.
rule sensitivity_labels:
    input:
        table=paths.dataset_table(),
        index=lambda wc: paths.embedding_file(
            "index.parquet", setting("sensitivity", "items_from"), wc.dataset
        ),
    output:
        table=paths.label_set_file(),
    log:
        logs("resources/sensitivity/labels/{dataset}/{label_set}.log"),
    wildcard_constraints:
        dataset="supersense|pos",
        label_set="|".join(targets.SENSITIVITY_LABEL_SETS),
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        label_set=lambda wc: wc.label_set,
        section=lambda wc: {
            key: setting("sensitivity", key) for key in ("paper_size", "label_seed")
        },
    script:
        "../scripts/sensitivity_labels.py"


# The control: an encoder's vectors mapped into more dimensions by a seeded random isometry.
rule sensitivity_orthogonal:
    input:
        vectors=lambda wc: paths.embedding_file(
            "vectors.npy", SENSITIVITY_ORTHOGONAL[wc.vectors]["of"], wc.dataset
        ),
        index=lambda wc: paths.embedding_file(
            "index.parquet", SENSITIVITY_ORTHOGONAL[wc.vectors]["of"], wc.dataset
        ),
    output:
        vectors=paths.orthogonal_file("vectors.npy"),
        index=paths.orthogonal_file("index.parquet"),
    log:
        logs("resources/sensitivity/embeddings/{vectors}/{dataset}/embed.log"),
    wildcard_constraints:
        vectors=targets.names_pattern(SENSITIVITY_ORTHOGONAL),
        dataset="supersense|pos",
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=lambda wc, attempt: 4000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        orthogonal=lambda wc: SENSITIVITY_ORTHOGONAL[wc.vectors],
    script:
        "../scripts/sensitivity_orthogonal.py"


# One run: rule optimize_embeddings on a label set's items and a vector set's vectors.
use rule optimize_embeddings as optimize_sensitivity with:
    input:
        table=paths.label_set_file(),
        vectors=lambda wc: targets.sensitivity_vector_inputs(
            config, wc.encoder, wc.dataset
        )["vectors"],
        index=lambda wc: targets.sensitivity_vector_inputs(
            config, wc.encoder, wc.dataset
        )["index"],
    output:
        trace=paths.sensitivity_run_file("trace.parquet"),
        summary=paths.sensitivity_run_file("summary.json"),
    log:
        logs(paths.sensitivity_run_file("optimize.log")),
    benchmark:
        benchmarks(paths.sensitivity_run_file("optimize.tsv"))
    wildcard_constraints:
        dataset="supersense|pos",
        label_set="|".join(targets.SENSITIVITY_LABEL_SETS),
    params:
        settings=lambda wc: targets.sensitivity_settings(config, int(wc.seed)),
        device=setting("device"),


rule tabulate_sensitivity:
    input:
        traces=targets.sensitivity_run_files(config, "trace.parquet"),
        summaries=targets.sensitivity_run_files(config, "summary.json"),
    output:
        table=report(
            paths.SENSITIVITY_TABLE,
            caption="../report/sensitivity_table.rst",
            category="sensitivity",
        ),
        markdown=paths.SENSITIVITY_MARKDOWN,
    log:
        logs(paths.sensitivity_file("table.log")),
    conda:
        "../envs/plots.yaml"
    params:
        runs=targets.sensitivity_runs(config),
        bootstrap=setting("bootstrap", default={}),
        settings_line=targets.sensitivity_settings_line(config),
    script:
        "../scripts/tabulate_sensitivity.py"


rule plot_sensitivity:
    input:
        table=paths.SENSITIVITY_TABLE,
    output:
        pdf=report(
            paths.sensitivity_figure("pdf"),
            caption="../report/sensitivity_figure.rst",
            category="sensitivity",
        ),
        png=paths.sensitivity_figure("png"),
    log:
        logs(paths.sensitivity_file("figure.log")),
    conda:
        "../envs/plots.yaml"
    params:
        encoder_labels=encoder_labels(),
        settings_line=targets.sensitivity_settings_line(config),
    script:
        "../scripts/plot_sensitivity.py"


rule sensitivity_study:
    input:
        paths.SENSITIVITY_TABLE,
        paths.SENSITIVITY_MARKDOWN,
        paths.sensitivity_figure("pdf"),
        paths.sensitivity_figure("png"),
