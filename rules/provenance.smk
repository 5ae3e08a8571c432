# Audit of every result against its provenance records, and the check of the paper's claims.
# Records: every step writes <output>.provenance.json (isotropy.provenance.record_step); raw
# downloads end in resources/raw/<source>/manifest.json. Science in isotropy.audit and
# isotropy.verdicts; isotropy.workflow.inputs.workflow_inputs decides the inputs of check_claims
# and compare_with_papers: the same result tables, measured by the same function.


# results/claims.csv (one row per claim × setup: measured value, threshold, verdict) and a
# markdown summary. Its inputs are the result tables of every study in config `studies`, made
# if needed (the I-STAR grid too, when listed); a study left out has its claims "not run".
rule check_claims:
    input:
        **inputs.claims_inputs(config),
    output:
        table=report(
            paths.CLAIMS,
            caption="../report/claims.rst",
            category="claims and paper comparison",
        ),
        markdown=report(
            paths.CLAIMS_MARKDOWN,
            caption="../report/claims.rst",
            category="claims and paper comparison",
        ),
    log:
        logs(f"{paths.CLAIMS}.log"),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        run_keys=inputs.workflow_run_keys(config),
        config=inputs.config_subset(config),
        stand_ins=STAND_INS,
    script:
        "../scripts/check_claims.py"


# results/paper_comparison.csv: every number the seed papers print (config/published_values.csv)
# beside ours, with the convention, the stand-in and a verdict with its tolerance.
rule compare_with_papers:
    input:
        **inputs.workflow_inputs(config),
        published=os.path.join(workflow.basedir, "config", "published_values.csv"),
        # the measured effects of protocol settings (isotropy.verdicts.declarations.protocol_gate)
        protocol_effects=os.path.join(
            workflow.basedir, "config", "protocol_effects.csv"
        ),
    output:
        table=report(
            paths.PAPER_COMPARISON,
            caption="../report/paper_comparison.rst",
            category="claims and paper comparison",
        ),
        markdown=report(
            paths.PAPER_COMPARISON_MARKDOWN,
            caption="../report/paper_comparison.rst",
            category="claims and paper comparison",
        ),
    log:
        logs(f"{paths.PAPER_COMPARISON}.log"),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 10 * attempt,
    params:
        run_keys=inputs.workflow_run_keys(config),
        config=inputs.config_subset(config),
        stand_ins=STAND_INS,
    script:
        "../scripts/compare_with_papers.py"


# The audit walks every result back to the raw downloads (checksums, staleness, code) and asks
# Snakemake whether parameters and rule code are still those of today's workflow and config.
# No inputs on purpose: it checks what exists and never (re)builds it; no output, so it runs
# whenever asked and never goes stale. Run it on its own: `snakemake audit`. Fails on any
# mismatch; the table goes to the log and to results/audit.tsv. Snakemake is called with the
# interpreter running this workflow (a conda env of the step need not hold Snakemake).
rule audit:
    log:
        logs("audit.log"),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 2000 * attempt,
        runtime=lambda wc, attempt: 30 * attempt,
    params:
        snakefile=workflow.main_snakefile,
        snakemake_python=sys.executable,
        table=paths.AUDIT_TABLE,
    script:
        "../scripts/audit_results.py"


# make preview, then make report: the main study's claims and paper comparison judged on the
# preview's results (results/preview/), every row stamped PREVIEW (isotropy.verdicts.measurements).
use rule check_claims as check_claims_preview with:
    input:
        **inputs.preview_inputs(config),
    output:
        table=report(
            paths.PREVIEW_CLAIMS,
            caption="../report/claims.rst",
            category="preview study",
        ),
        markdown=report(
            paths.PREVIEW_CLAIMS_MARKDOWN,
            caption="../report/claims.rst",
            category="preview study",
        ),
    log:
        logs(f"{paths.PREVIEW_CLAIMS}.log"),
    params:
        run_keys=inputs.preview_run_keys(config),
        config=inputs.config_subset(config),
        stand_ins=STAND_INS,
        preview=targets.settings_stamp(config, "preview"),


use rule compare_with_papers as compare_with_papers_preview with:
    input:
        **inputs.preview_inputs(config),
        published=os.path.join(workflow.basedir, "config", "published_values.csv"),
        protocol_effects=os.path.join(
            workflow.basedir, "config", "protocol_effects.csv"
        ),
    output:
        table=report(
            paths.PREVIEW_PAPER_COMPARISON,
            caption="../report/paper_comparison.rst",
            category="preview study",
        ),
        markdown=report(
            paths.PREVIEW_PAPER_COMPARISON_MARKDOWN,
            caption="../report/paper_comparison.rst",
            category="preview study",
        ),
    log:
        logs(f"{paths.PREVIEW_PAPER_COMPARISON}.log"),
    params:
        run_keys=inputs.preview_run_keys(config),
        config=inputs.config_subset(config),
        stand_ins=STAND_INS,
        preview=targets.settings_stamp(config, "preview"),
