# Audit of every result against its provenance records, and the check of the paper's claims.
# Records: every step writes <output>.provenance.json (isotropy.provenance.record_step); raw
# downloads end in resources/raw/<source>/manifest.json. Science in isotropy.audit and
# isotropy.verdicts; isotropy.studies.verdict_inputs decides the inputs of check_claims
# and compare_with_papers: the same result tables, measured by the same function.


# The papers' printed numbers (config/published_values.csv, the workflow's file) copied into the
# results folder, named by their sha256: the steps read the copy, so what Snakemake and the records
# name is a path inside the folder, the same in every clone of the commit (a copied folder audits
# clean there), and an edit of the workflow's file re-makes the copy and what reads it (params).
rule copy_published_values:
    output:
        table=paths.PUBLISHED_VALUES,
    log:
        logs(f"{paths.PUBLISHED_VALUES}.log"),
    conda:
        "../envs/plots.yaml"
    threads: 1
    resources:
        mem_mb=lambda wc, attempt: 500 * attempt,
        runtime=lambda wc, attempt: 5 * attempt,
    params:
        source=paths.WORKFLOW_PUBLISHED_VALUES,
        # The file beside these rules (not beside the Snakefile, which may be a user's own).
        sha256=hashlib.sha256(
            Path(
                str(workflow.current_basedir),
                os.pardir,
                paths.WORKFLOW_PUBLISHED_VALUES,
            ).read_bytes()
        ).hexdigest(),
    script:
        "../scripts/copy_workflow_file.py"


# The measured effects of protocol settings (isotropy.verdicts.declarations.protocol_gate), copied
# into the results folder for the same reason as the published values.
use rule copy_published_values as copy_protocol_effects with:
    output:
        table=paths.PROTOCOL_EFFECTS,
    log:
        logs(f"{paths.PROTOCOL_EFFECTS}.log"),
    params:
        source=paths.WORKFLOW_PROTOCOL_EFFECTS,
        sha256=hashlib.sha256(
            Path(
                str(workflow.current_basedir),
                os.pardir,
                paths.WORKFLOW_PROTOCOL_EFFECTS,
            ).read_bytes()
        ).hexdigest(),


# The committed protocol run's verdicts (docs/data/main_verdicts.csv), copied likewise for the
# report's opening page (rule report_overview), which shows them beside its run's own.
use rule copy_published_values as copy_committed_verdicts with:
    output:
        table=paths.COMMITTED_VERDICTS,
    log:
        logs(f"{paths.COMMITTED_VERDICTS}.log"),
    params:
        source=paths.WORKFLOW_COMMITTED_VERDICTS,
        sha256=hashlib.sha256(
            Path(
                str(workflow.current_basedir),
                os.pardir,
                paths.WORKFLOW_COMMITTED_VERDICTS,
            ).read_bytes()
        ).hexdigest(),


# results/claims.csv (one row per claim × setup: measured value, threshold, verdict) and a
# markdown summary. Its inputs are the result tables of every study in config `studies`, made
# if needed (the I-STAR grid too, when listed); a study left out has its claims "not run".
rule check_claims:
    input:
        **studies.verdict_inputs(SETTINGS, claims=True),
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
        run_keys=inputs.workflow_run_keys(SETTINGS),
        config=inputs.config_subset(SETTINGS),
        stand_ins=STAND_INS,
    script:
        "../scripts/check_claims.py"


# results/paper_comparison.csv: every number the seed papers print (config/published_values.csv)
# beside ours, with the convention, the stand-in and a verdict with its tolerance.
rule compare_with_papers:
    input:
        **studies.verdict_inputs(SETTINGS),
        published=paths.PUBLISHED_VALUES,
        protocol_effects=paths.PROTOCOL_EFFECTS,
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
        run_keys=inputs.workflow_run_keys(SETTINGS),
        config=inputs.config_subset(SETTINGS),
        stand_ins=STAND_INS,
    script:
        "../scripts/compare_with_papers.py"


# The audit walks every result back to the raw downloads (checksums, staleness, code).
# No inputs on purpose: it checks what exists and never (re)builds it; no output, so it runs
# whenever asked and never goes stale. Run it on its own: `snakemake audit`. Fails on any
# mismatch; the table goes to the log and to results/audit.tsv.
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
        table=paths.AUDIT_TABLE,
    script:
        "../scripts/audit_results.py"


# make preview, then make report: the main study's claims and paper comparison judged on the
# preview's results (results/preview/), every row stamped PREVIEW (isotropy.verdicts.measurements).
use rule check_claims as check_claims_preview with:
    input:
        **targets.verdict_files(SETTINGS, "main", "preview"),
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
        run_keys={"main": targets.study_runs(SETTINGS, "preview")},
        config=inputs.config_subset(SETTINGS),
        stand_ins=STAND_INS,
        preview=targets.settings_stamp(SETTINGS, "preview"),


use rule compare_with_papers as compare_with_papers_preview with:
    input:
        **targets.verdict_files(SETTINGS, "main", "preview"),
        published=paths.PUBLISHED_VALUES,
        protocol_effects=paths.PROTOCOL_EFFECTS,
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
        run_keys={"main": targets.study_runs(SETTINGS, "preview")},
        config=inputs.config_subset(SETTINGS),
        stand_ins=STAND_INS,
        preview=targets.settings_stamp(SETTINGS, "preview"),
