# The opening page of the HTML report (make report; report/workflow.rst inserts it): the forest
# plot of every judged paper number, what ran, then every claim and every paper number with its
# verdict. Science in isotropy.reporting and isotropy.verdicts.forest (the figure reads the paper
# comparison only).


rule report_overview:
    input:
        claims=paths.CLAIMS,
        comparison=paths.PAPER_COMPARISON,
        committed=paths.COMMITTED_VERDICTS,
    output:
        html=report(
            paths.REPORT_OVERVIEW,
            caption="../report/overview.rst",
            category="claims and paper comparison",
        ),
        forest_pdf=f"{paths.REPORT_FOREST}.pdf",
        forest_png=report(
            f"{paths.REPORT_FOREST}.png",
            caption="../report/forest.rst",
            category="claims and paper comparison",
        ),
    log:
        logs(f"{paths.REPORT_OVERVIEW}.log"),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 1000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        studies=inputs.configured_studies(SETTINGS),
        seeds={
            study: config[study]["seeds"]
            for study in inputs.configured_studies(SETTINGS)
            if config.get(study, {}).get("seeds")
        },
        recorded={
            study: targets.every_nth_update(config[study]["metric_stride"])
            for study in inputs.configured_studies(SETTINGS)
            if config.get(study, {}).get("metric_stride")
        },
        stand_ins=STAND_INS,
        preview="",
    script:
        "../scripts/report_overview.py"


# make preview, then make report: the preview's page, on its claims and paper comparison.
use rule report_overview as report_overview_preview with:
    input:
        claims=paths.PREVIEW_CLAIMS,
        comparison=paths.PREVIEW_PAPER_COMPARISON,
        committed=paths.COMMITTED_VERDICTS,
    output:
        html=report(
            paths.PREVIEW_REPORT_OVERVIEW,
            caption="../report/overview.rst",
            category="preview study",
        ),
        forest_pdf=f"{paths.PREVIEW_REPORT_FOREST}.pdf",
        forest_png=report(
            f"{paths.PREVIEW_REPORT_FOREST}.png",
            caption="../report/forest.rst",
            category="preview study",
        ),
    log:
        logs(f"{paths.PREVIEW_REPORT_OVERVIEW}.log"),
    params:
        studies=["preview"],
        seeds={"preview": SETTINGS.preview.seeds},
        recorded={"preview": targets.every_nth_update(SETTINGS.preview.metric_stride)},
        stand_ins=STAND_INS,
        preview=targets.settings_stamp(SETTINGS, "preview"),
