# Entry points for a fresh machine: `make run` (the main study), `make preview`, `make test`.
# Each creates the virtual environment if it is missing and installs the pinned project into it.
# Measured wall times of every target: docs/measurements.md, "What each command costs".
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all
SNAKEMAKE_ARGS ?=
# Your own overlay(s), laid over config.yaml (and the offline overlay): make run CONFIG=my.yaml
CONFIG ?=
# With a local data mirror there is usually no hub either: lay the offline overlay over config.yaml.
# Later files win key by key; one --configfile takes them all (a second --configfile would replace the first).
CONFIG_FILES ?= config.yaml $(if $(ISOTROPY_MIRROR),config/offline.yaml) $(CONFIG)
CONFIGFILES := --configfile $(CONFIG_FILES)
# Before a long run: the settings and the time left, from measured per-update costs; refused when
# the target's results are a finished run with other settings, unless REPLACE=1 (isotropy.estimate).
REPLACE ?=
ESTIMATE = $(BIN)/python -m isotropy.estimate --finished $(if $(plan_only),plan,$(if $(REPLACE),replace,refuse)) \
	--configfile $(CONFIG_FILES) --target

.PHONY: help slurm-plan run preview sensitivity study resume test test-fast figures traces-check audit report folder-check lint install clean-venv relock

# `make run`, `make preview` and `make resume` remember their target in LAST_RUN once their
# estimate took it and its configuration (a typo leaves LAST_RUN as it was; the run, when it
# starts, writes its effective configuration to logs/effective-config/<target>.yaml;
# the estimate writes nothing); `make report` reports that run (or REPORT_TARGET=...
# REPORT_CONFIG_FILES="..." instead).
# Written beside it and renamed over it: a planted link there is replaced, never written through.
LAST_RUN := logs/last_run.txt
# Snakemake options that only plan or list (a dry run: -n, -np; --summary, -S, -D; graphs): such
# a command runs nothing, so it leaves LAST_RUN, and what `make report` reports, as it was.
PLAN_OPTIONS := --dry-run --dryrun --summary --detailed-summary --list-changes --lc --dag \
	--rulegraph --filegraph --d3dag --list-rules --list-target-rules
plan_only = $(strip $(filter $(PLAN_OPTIONS),$(SNAKEMAKE_ARGS)) $(foreach word,$(filter-out \
	--%,$(filter -%,$(SNAKEMAKE_ARGS))),$(if $(findstring n,$(word))$(findstring S,$(word))$(findstring D,$(word)),$(word))))
remember = $(if $(plan_only),@echo "$(plan_only) only plans: $(LAST_RUN) unchanged (make report reports the last run)",\
	@mkdir -p logs && tmp=$$(mktemp logs/.last_run.XXXXXX) && \
	printf 'TARGET=%s\nCONFIG_FILES=%s\n' '$(1)' '$(CONFIG_FILES)' > "$$tmp" && mv -f "$$tmp" $(LAST_RUN))
# Each target's last line: what it made and what to run next (a dry run: that it only planned).
said = @echo 'make $@: $(if $(plan_only),$(plan_only) only planned it; next: the same without $(plan_only),$(1); next: $(2))'
# The folder may be someone else's: before Snakemake starts, its records, links, pipes and the
# config files are checked (isotropy.trust), and no `python -m` here imports from it
# (PYTHONSAFEPATH; Snakemake's processes: rules/common.smk).
TRUST = $(BIN)/python -m isotropy.trust
run preview study resume folder-check: export PYTHONSAFEPATH = 1

# `make` alone, or `make help`: every target with its one line (the `## ` after its name).
.DEFAULT_GOAL := help
help:  ## this list
	@awk -F ':[^#]*## ' '/^[a-z-]+:[^#=]*## /{printf "  make %-12s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# torch is installed first and alone so no other package can pull a different (CUDA) build.
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[workflow,test]'
	touch $@

install: $(VENV)/.installed  ## the pinned packages into .venv (about 2.3 GB; every target runs it first)

run: install  ## the main study as in the paper -> results/main/ (prints its estimate first)
	$(TRUST) --configfile $(CONFIG_FILES)
	$(ESTIMATE) main_study
	$(call remember,main_study)
	$(BIN)/snakemake --cores $(CORES) main_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(call said,results/main/ holds the main_study results,make report (report.html))

# The main study's tables and figures with one seed and a coarse metric stride (config `preview`),
# in results/preview/: a first look (docs/measurements.md), never to be mistaken for results/main/.
preview: install  ## the main study, one seed, coarse metrics -> results/preview/ (5-27 min)
	$(TRUST) --configfile $(CONFIG_FILES)
	$(ESTIMATE) preview_study
	$(call remember,preview_study)
	$(BIN)/snakemake --cores $(CORES) preview_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(call said,results/preview/ holds the preview_study results,make report (report.html))

# The sensitivity study (config `sensitivity`; docs/sensitivity.md): its cost first.
sensitivity: install  ## the sensitivity study -> results/sensitivity/
	$(ESTIMATE) sensitivity_study
	$(BIN)/snakemake --cores $(CORES) sensitivity_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(call said,results/sensitivity/ holds the sensitivity_study results,make report REPORT_TARGET=sensitivity_study)

# Any other target (docs: README, "The other studies"), its estimate first: TARGET=glue_study,
# or several, TARGET="check_claims compare_with_papers"; a study target is what make report reports.
study: install  ## any TARGET (a study, or several targets), its estimate first
	$(TRUST) --configfile $(CONFIG_FILES)
	$(ESTIMATE) $(TARGET)
	$(if $(filter $(REPORT_TARGETS),$(TARGET)),$(call remember,$(TARGET)))
	$(BIN)/snakemake --cores $(CORES) $(TARGET) $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(call said,$(TARGET) ran to its end,make report$(if $(filter $(REPORT_TARGETS),$(TARGET)),, REPORT_TARGET=all) (report.html))

# After a killed run (Ctrl-C twice, SIGKILL, a lost session): release Snakemake's lock, then carry
# on; the profile's rerun-incomplete makes the half-written jobs again. TARGET=preview_study etc.
# Refused while a Snakemake process still runs in this folder (isotropy.resume).
TARGET ?= main_study
resume: install  ## after a killed run: unlock, then run TARGET (default main_study) again
	$(BIN)/python -m isotropy.resume
	$(TRUST) --configfile $(CONFIG_FILES)
	$(BIN)/snakemake --unlock $(TARGET) $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(ESTIMATE) $(TARGET)
	$(call remember,$(TARGET))
	$(BIN)/snakemake --cores $(CORES) $(TARGET) $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(call said,$(TARGET) ran to its end,make report (report.html))

# SLURM's plan for TARGET without running a job: each rule's job count and what it asks SLURM for
# (threads, memory, minutes, GPU), one line a rule instead of the dry run's block a job.
SLURM_PLAN_AWK = /^(local)?rule [a-z0-9_]+:$$/ { rule = $$2; sub(":", "", rule); if (!(rule in jobs)) \
	names[++k] = rule; jobs[rule]++; threads = 1 } /^    threads: / { threads = $$2 } /^    resources: / \
	{ sub(/^    resources: /, ""); gsub(/(tmpdir|mem|mem_mib|disk|disk_mb|disk_mib)=[^,]*(, |$$)/, ""); \
	r = "threads=" threads ", " $$0; if (!((rule, r) in seen)) { seen[rule, r] = 1; \
	req[rule] = req[rule] (req[rule] ? " | " : "") r } } END { printf "%-30s %5s  %s\n", "rule", \
	"jobs", "requests"; for (i = 1; i <= k; i++) printf "%-30s %5d  %s\n", names[i], jobs[names[i]], req[names[i]] }
slurm-plan: install  ## SLURM's requests for TARGET (default main_study), one line a rule; runs nothing
	@plan=$$($(BIN)/snakemake --profile slurm -n $(TARGET) $(CONFIGFILES) $(SNAKEMAKE_ARGS) 2>&1) || \
		{ printf '%s\n' "$$plan" | tail -n 20; exit 1; }; printf '%s\n' "$$plan" | awk '$(SLURM_PLAN_AWK)'

# Re-draw the figures of FIGURE_STUDIES (default: what `make run` makes) from stored traces.
# --allowed-rules guarantees that nothing upstream runs: a missing trace is an error, never a retraining.
FIGURE_STUDIES ?= main
PLOT_RULES := plot_metric_curves plot_silhouette_vs_isoscore
# Nothing stored to re-draw (no run yet): one line before install or Snakemake, naming what to
# run (a prerequisite, as folder-check is: `make -n figures` shows the refusal, runs nothing).
comma := ,
FIGURES_MISSING = $(firstword $(foreach study,$(subst $(comma), ,$(FIGURE_STUDIES)),\
	$(if $(wildcard results/$(study)/*/*/seed*/trace.parquet),,$(study))))
FIGURES_REFUSAL = make figures: no stored traces in results/$(FIGURES_MISSING)/ \
	(*/*/seed*/trace.parquet), and it never trains: run $(if $(filter main,$(FIGURES_MISSING)),`make \
	run` first (`make preview` draws its own in results/preview/),`snakemake \
	$(FIGURES_MISSING)_study` first)
traces-check:
	$(if $(FIGURES_MISSING),@echo '$(FIGURES_REFUSAL)' >&2; exit 1)
figures: traces-check install  ## re-draw the main study's figures from stored traces; never trains
	$(BIN)/snakemake --cores $(CORES) figures $(CONFIGFILES) --config 'studies=[$(FIGURE_STUDIES)]' \
		--allowed-rules $(PLOT_RULES) --forcerun $(PLOT_RULES) $(SNAKEMAKE_ARGS)
	$(call said,the figures of results/$(FIGURE_STUDIES)/ re-drawn,make report (report.html))

# Accept a changed upstream file of a source that no public record pins, deliberately: fetch
# SOURCE again and record its new sha256 in the sources lock (config/sources.lock), keeping
# the record it replaces; the audit then flags what was made before (docs/online-sources.md).
SOURCE ?=
relock: install  ## accept a changed upstream file: make relock SOURCE=<source>
	$(if $(strip $(SOURCE)),,$(error make relock: give SOURCE=<a key of config 'sources'>, e.g. make relock SOURCE=codwoe))
	$(if $(ISOTROPY_MIRROR),$(error make relock: unset ISOTROPY_MIRROR: a relock fetches from the original source (a mirror's files are checked by its MANIFEST.tsv, never the lock)))
	chmod u+w resources/raw/$(SOURCE)/manifest.json 2>/dev/null || true
	ISOTROPY_RELOCK=$(SOURCE) $(BIN)/snakemake --cores 1 --forcerun download_source \
		resources/raw/$(SOURCE)/manifest.json $(CONFIGFILES) $(SNAKEMAKE_ARGS)

# The audit of every result (see README), the browsable report, and the style checks.
# The folder may be someone else's: Snakemake's records are checked before Snakemake reads them,
# and no `python -m` here imports from the folder (isotropy.trust).
audit report: export PYTHONSAFEPATH = 1
# The audit of the run the folder holds: the configuration the target of LAST_RUN ran with (its
# effective configuration), as `make report` reports it (AUDIT_TARGET=... AUDIT_CONFIG_FILES="..."
# choose another).
AUDIT_TARGET ?= $(or $(LAST_TARGET),all)
AUDIT_CONFIG_FILES ?= $(or $(wildcard logs/effective-config/$(AUDIT_TARGET).yaml),$(CONFIG_FILES))
check_audit_target = $(if $(filter-out 1,$(words $(AUDIT_TARGET)))$(filter-out $(REPORT_TARGETS),$(AUDIT_TARGET)),\
	$(error make audit: target '$(AUDIT_TARGET)' (from $(if $(filter command line environment,$(origin AUDIT_TARGET)),AUDIT_TARGET,$(LAST_RUN))) is not one of: $(REPORT_TARGETS); give AUDIT_TARGET=<one of them>))
audit: install folder-check  ## walk every result of the last run back to the raw downloads
	$(check_audit_target)$(BIN)/python -m isotropy.resume --before audit
	$(BIN)/python -m isotropy.trust --configfile $(AUDIT_CONFIG_FILES)
	@echo "make audit: target $(AUDIT_TARGET) with $(AUDIT_CONFIG_FILES) ($(if $(wildcard $(LAST_RUN)),the last make run/preview/resume,no $(LAST_RUN) yet: the defaults); AUDIT_TARGET=... AUDIT_CONFIG_FILES=\"...\" choose another)"
	$(BIN)/snakemake --cores 1 audit --configfile $(AUDIT_CONFIG_FILES) $(SNAKEMAKE_ARGS)
	$(call said,every result audited: results/audit.tsv,make report (report.html))

# The report of the last run (LAST_RUN), with the configuration that run used (its effective
# configuration, so later edits of the files do not change it): its target's results, and for a study target its claims,
# paper comparison and overview page (re-made here in seconds, judging that study alone; nothing
# upstream is ever re-made: --allowed-rules). One self-contained HTML file, figures as PNG.
REPORT ?= report.html
# A name Snakemake refuses only after the report's work (--report: .html or .zip), or a folder
# (a link there is replaced, never written through): refused before anything runs.
REPORT_FOLDER = $(filter $(realpath $(dir $(REPORT)))/$(notdir $(REPORT)),$(realpath $(REPORT)/.))
$(if $(filter report,$(MAKECMDGOALS)),$(if $(and $(filter 1,$(words $(REPORT))),$(filter .html .zip,\
	$(suffix $(REPORT))),$(if $(REPORT_FOLDER),,ok)),,$(error make report: REPORT='$(REPORT)' \
	must be one file name ending in .html or .zip, not a folder: give REPORT=<name>.html or .zip)))
# Written beside it, then renamed (mv -T: rename(2)): a report killed while it is written never
# replaces the last whole one; a link there is replaced, never written through; a folder refused.
REPORT_PARTIAL = $(basename $(REPORT)).partial$(suffix $(REPORT))
# LAST_RUN is read as text by make (never by a shell), and the target must be one of these.
REPORT_TARGETS := all main_study preview_study glue_study istar_study geometry_study sensitivity_study
LAST_TARGET = $(patsubst TARGET=%,%,$(firstword $(filter TARGET=%,$(if $(wildcard $(LAST_RUN)),$(file <$(LAST_RUN))))))
REPORT_TARGET ?= $(or $(LAST_TARGET),all)
check_report_target = $(if $(filter-out 1,$(words $(REPORT_TARGET)))$(filter-out $(REPORT_TARGETS),$(REPORT_TARGET)),\
	$(error make report: target '$(REPORT_TARGET)' (from $(if $(filter command line environment,$(origin REPORT_TARGET)),REPORT_TARGET,$(LAST_RUN))) is not one of: $(REPORT_TARGETS); give REPORT_TARGET=<one of them>))
REPORT_CONFIG_FILES ?= $(or $(wildcard logs/effective-config/$(REPORT_TARGET).yaml),$(CONFIG_FILES))
REPORT_STUDY = $(patsubst %_study,%,$(filter main_study glue_study istar_study geometry_study,$(REPORT_TARGET)))
REPORT_ARGS = --configfile $(REPORT_CONFIG_FILES) $(if $(REPORT_STUDY),--config 'studies=[$(REPORT_STUDY)]')
# Only the reported target's own overview rules: Snakemake plans every job of a forced rule, needed
# or not, so forcing the other target's rules asks for results that run never made (issue 48).
REPORT_RULES = $(if $(filter preview_study,$(REPORT_TARGET)),check_claims_preview compare_with_papers_preview report_overview_preview,check_claims compare_with_papers report_overview)
# The workflow files the verdicts read, copied into the folder (rules/provenance.smk): cheap.
COPY_RULES := copy_published_values copy_protocol_effects copy_committed_verdicts
# The sensitivity study makes no claims: its report has none (report/workflow.rst says so).
REPORT_OVERVIEW = $(if $(filter preview_study,$(REPORT_TARGET)),results/preview/report/overview.html,$(if $(filter sensitivity_study,$(REPORT_TARGET)),,results/report/overview.html))
# Nothing is re-made from results the folder's records do not vouch for: the record walk of the
# audit (its intake's copy of the folder), and on any mismatch one line and a stop, so a result
# forged with its own record stays a finding after any number of reports. The files the report
# re-makes itself (its plan's jobs of REPORT_RULES) are not judged: a second run's stale claims
# never block its report.
AUDIT_GATE = $(BIN)/python -m isotropy.audit --gate 'make report' $(if $(REPORT_OVERVIEW),--remade-by $(REPORT_RULES)) \
	$(if $(wildcard logs/effective-config/$(REPORT_TARGET).yaml),--configfile logs/effective-config/$(REPORT_TARGET).yaml)
# Are the target's results there? Snakemake plans the report with nothing upstream allowed; when
# it cannot, one line names what is missing and a target whose results are whole (isotropy.estimate
# --whole), instead of Snakemake's MissingInputException; any other failure shows its end. Then
# the gate, given the plan.
REPORT_READY = @plan=$$($(BIN)/snakemake -n $(REPORT_TARGET) $(if $(REPORT_OVERVIEW),$(REPORT_OVERVIEW) \
	--forcerun $(REPORT_RULES)) $(REPORT_ARGS) --rerun-triggers mtime \
	--allowed-rules $(REPORT_TARGET) $(REPORT_RULES) $(COPY_RULES) 2>&1) || { $(BIN)/python -m \
	isotropy.estimate --whole --target $(REPORT_TARGET) --configfile $(REPORT_CONFIG_FILES) || exit 1; \
	printf '%s\n' "$$plan" | tail -n 25; exit 1; }; printf '%s\n' "$$plan" | $(AUDIT_GATE)
# Snakemake writes the report; a full disk there is one line naming the file, not its traceback.
REPORT_WRITE = @out=$$($(BIN)/snakemake --cores 1 --report $(REPORT_PARTIAL) --report-stylesheet \
	report/style.css $(REPORT_TARGET) $(REPORT_OVERVIEW) $(REPORT_ARGS) $(SNAKEMAKE_ARGS) 2>&1) \
	|| { rm -f $(REPORT_PARTIAL); case "$$out" in *"[Errno 28]"*|*"[Errno 122]"*) echo "make report: \
	no space left on the device of $(REPORT_PARTIAL) while Snakemake wrote the report ($$(df -Pk . \
	| awk 'NR==2 {print $$4}') KiB free there): nothing was kept; free some space and run again" >&2;; \
	*) printf '%s\n' "$$out" >&2;; esac; exit 1; }; printf '%s\n' "$$out" >&2
# The configuration files the reported run was made with (its effective configuration's first
# line, isotropy.estimate.started), read once the target is known good, kept to plain characters.
MADE_WITH = $(strip $(if $(filter $(REPORT_TARGETS),$(REPORT_TARGET)),$(if $(filter 1,$(words $(REPORT_TARGET))),\
	$(shell f=logs/effective-config/$(REPORT_TARGET).yaml; test -f $$f && head -n 1 $$f | head -c 2000 | \
	sed -n 's/^\# made with: //p' | tr -cd '[:alnum:] ./+_-'))))
# make expands a recipe whole before its first line runs, LAST_RUN read in: the folder is checked
# first, as a prerequisite (a pipe there would block make itself).
folder-check: install
	$(TRUST)
report: install folder-check  ## report.html: the last run, its claims, the paper comparison, every figure
	$(check_report_target)$(BIN)/python -m isotropy.resume --before report
	$(TRUST) --configfile $(REPORT_CONFIG_FILES)
	$(REPORT_READY)
	@echo "make report: target $(REPORT_TARGET) with $(REPORT_CONFIG_FILES)$(if $(MADE_WITH), (made with $(MADE_WITH)),) ($(if $(wildcard $(LAST_RUN)),the last make run/preview/resume,no $(LAST_RUN) yet: the defaults); REPORT_TARGET=... REPORT_CONFIG_FILES=\"...\" choose another)"
	$(if $(REPORT_OVERVIEW),$(BIN)/snakemake --cores 1 $(REPORT_OVERVIEW) $(REPORT_ARGS) --rerun-triggers mtime \
		--forcerun $(REPORT_RULES) --allowed-rules $(REPORT_RULES) $(COPY_RULES) $(SNAKEMAKE_ARGS))
	rm -f $(REPORT_PARTIAL)  # a planted link there is removed, never written through
	$(REPORT_WRITE)
	mv -fT $(REPORT_PARTIAL) $(REPORT)
	$(call said,$(REPORT) reports $(REPORT_TARGET),open $(REPORT) in a browser)

lint: install  ## ruff, mypy, snakefmt, snakemake --lint and the commit messages
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/mypy
	$(BIN)/mypy benchmarks
	$(BIN)/snakemake --lint --cores 1 $(CONFIGFILES)
	$(BIN)/python .ci/commit_msg.py

# Everything CI runs (.ci/run), end-to-end and SLURM tests included.
test: install  ## every test, as CI runs it
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The quick tier: everything but the end-to-end Snakemake runs and the SLURM cluster (markers
# `slow` and `slurm`, pyproject.toml).
test-fast: install  ## the quick tier: no end-to-end runs, no SLURM
	$(BIN)/python -m pytest -m 'not slow and not slurm' $(PYTEST_ARGS)

clean-venv:  ## remove .venv
	rm -rf $(VENV)
