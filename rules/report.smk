# The opening page of the HTML report (make report; report/workflow.rst inserts it): what ran,
# then every claim and every paper number with its verdict. Science in isotropy.reporting.


rule report_overview:
    input:
        claims=paths.CLAIMS,
        comparison=paths.PAPER_COMPARISON,
    output:
        html=report(
            paths.REPORT_OVERVIEW,
            caption="../report/overview.rst",
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
        studies=verdict_inputs.configured_studies(config),
        seeds={
            study: setting(study, "seeds")
            for study in verdict_inputs.configured_studies(config)
            if setting(study, "seeds")
        },
        stand_ins=stand_ins(),
    script:
        "../scripts/report_overview.py"
