# What sets the sign of the supersense correlation (config `sensitivity`, science in
# isotropy.sensitivity, grid in isotropy.workflow.targets;
# docs/sensitivity.md): the main study's direct optimisation of the word setups over cells
# (vector set x label set x learning-rate factor), several seeds each, with subspace measurements
# per step. Each cell's per-seed numbers are written as soon as its seeds have run, cells in the
# configured order (priority); then one table and two figures in results/sensitivity/.


# The items of one label set: the setup's words with a vector in `items_from`, then filtered.
rule sensitivity_labels:
    input:
        table=paths.dataset_table(),
        index=lambda wc: paths.embedding_file(
            "index.parquet",
            lookup(dpath="sensitivity/items_from", within=config),
            wc.dataset,
        ),
    output:
        table=paths.label_set_file(),
    log:
        logs("resources/sensitivity/labels/{dataset}/{label_set}.log"),
    wildcard_constraints:
        dataset="supersense|pos",
        label_set="|".join(studies.sensitivity.LABEL_SETS),
    priority: 1000  # cheap, and the runs' priorities do not pass to their inputs
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        label_set=lambda wc: wc.label_set,
        section=lambda wc: {
            key: config["sensitivity"][key] for key in ("paper_size", "label_seed")
        },
    script:
        "../scripts/sensitivity_labels.py"


# A derived vector set: an encoder's vectors rescaled to another set's RMS centred norm, reduced
# by PCA, rotated, zero-padded or isometrically embedded; with the basis of the original span.
rule sensitivity_vectors:
    input:
        unpack(
            lambda wc: studies.sensitivity.derived_inputs(
                SETTINGS, wc.vectors, wc.dataset
            )
        ),
    output:
        vectors=paths.derived_file("vectors.npy"),
        index=paths.derived_file("index.parquet"),
        basis=paths.derived_file("basis.npy"),
    log:
        logs("resources/sensitivity/embeddings/{vectors}/{dataset}/derive.log"),
    wildcard_constraints:
        vectors=targets.names_pattern(SENSITIVITY_DERIVED),
        dataset="supersense|pos",
    priority: 1000  # cheap, and the runs' priorities do not pass to their inputs
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=lambda wc, attempt: 4000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        spec=lambda wc: SENSITIVITY_DERIVED[wc.vectors],
    script:
        "../scripts/sensitivity_vectors.py"


# One run: the main study's optimisation (isotropy.optimize, same settings) of a label set's
# items from a vector set's vectors, recording the subspace probe beside IsoScore and silhouette.
rule optimize_sensitivity:
    input:
        unpack(
            lambda wc: studies.sensitivity.vector_inputs(
                SETTINGS, wc.encoder, wc.dataset
            )
        ),
        table=paths.label_set_file(),
    output:
        trace=paths.sensitivity_run_file("trace.parquet"),
        summary=paths.sensitivity_run_file("summary.json"),
    log:
        logs(paths.sensitivity_run_file("optimize.log")),
    benchmark:
        benchmarks(paths.sensitivity_run_file("optimize.tsv"))
    wildcard_constraints:
        dataset="supersense|pos",
        label_set="|".join(studies.sensitivity.LABEL_SETS),
        lr=r"[0-9.e+-]+",
    priority: lambda wc: studies.sensitivity.priority(SETTINGS, wc)
    conda:
        "../envs/torch.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, input, attempt: int(2000 + 10 * input.size_mb) * attempt,
        runtime=lambda wc, attempt: 60 * attempt,
        gpu=1,
    params:
        settings=lambda wc: targets.sensitivity_settings(SETTINGS, int(wc.seed), wc.lr),
        device=lookup(dpath="device", within=config),
    script:
        "../scripts/optimize_sensitivity.py"


# One cell's per-seed numbers (isotropy.sensitivity.seed_row), as soon as it has run.
rule sensitivity_cell:
    input:
        traces=lambda wc: studies.sensitivity.run_files(
            SETTINGS, "trace.parquet", studies.sensitivity.cell_of(wc)
        ),
        summaries=lambda wc: studies.sensitivity.run_files(
            SETTINGS, "summary.json", studies.sensitivity.cell_of(wc)
        ),
    output:
        seeds=paths.sensitivity_cell_file(),
    log:
        logs(paths.sensitivity_cell_file().replace(".csv", ".log")),
    wildcard_constraints:
        dataset="supersense|pos",
        lr=r"[0-9.e+-]+",
    priority: lambda wc: studies.sensitivity.priority(SETTINGS, wc)
    conda:
        "../envs/plots.yaml"
    params:
        cell=studies.sensitivity.cell_of,
    script:
        "../scripts/sensitivity_cell.py"


rule tabulate_sensitivity:
    input:
        cells=studies.sensitivity.cell_files(SETTINGS),
    output:
        table=report(
            paths.SENSITIVITY_TABLE,
            caption="../report/sensitivity_table.rst",
            category="sensitivity",
        ),
        markdown=paths.SENSITIVITY_MARKDOWN,
        seeds=paths.SENSITIVITY_SEEDS,
    log:
        logs(paths.sensitivity_file("table.log")),
    conda:
        "../envs/plots.yaml"
    params:
        level=lookup(dpath="sensitivity/interval_level", within=config),
        settings_line=studies.sensitivity.settings_line(SETTINGS),
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
        encoder_labels=ENCODER_LABELS,
        derived=SENSITIVITY_DERIVED,
        settings_line=studies.sensitivity.settings_line(SETTINGS),
    script:
        "../scripts/plot_sensitivity.py"


# IsoScore and silhouette against updates for the configured `phases` cells, minimum marked.
rule plot_sensitivity_phases:
    input:
        traces=studies.sensitivity.phase_files(SETTINGS),
    output:
        pdf=report(
            paths.sensitivity_figure("pdf", "phases"),
            caption="../report/sensitivity_phases.rst",
            category="sensitivity",
        ),
        png=paths.sensitivity_figure("png", "phases"),
    log:
        logs(paths.sensitivity_file("phases.log")),
    conda:
        "../envs/plots.yaml"
    params:
        runs=studies.sensitivity.phase_runs(SETTINGS),
        encoder_labels=ENCODER_LABELS,
        derived=SENSITIVITY_DERIVED,
        settings_line=studies.sensitivity.settings_line(SETTINGS),
    script:
        "../scripts/plot_sensitivity_phases.py"
