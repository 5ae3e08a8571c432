# Entry points for a fresh machine: `make run` (the main study), `make preview`, `make test`.
# Each creates the virtual environment if it is missing and installs the pinned project into it.
# Measured wall times of every target: README.md, "Quick start".
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
# Before a long run: the effective configuration and the time left, from measured per-update costs.
ESTIMATE = $(BIN)/python -m isotropy.estimate --configfile $(CONFIG_FILES) --target

.PHONY: run preview sensitivity resume test test-fast figures audit report lint install clean-venv

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# torch is installed first and alone so no other package can pull a different (CUDA) build.
$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[workflow,test]'
	touch $@

install: $(VENV)/.installed

run: install
	$(ESTIMATE) main_study
	$(BIN)/snakemake --cores $(CORES) main_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)

# The main study's tables and figures with one seed and a coarse metric stride (config `preview`),
# in results/preview/: a first look in minutes, never to be mistaken for results/main/.
preview: install
	$(ESTIMATE) preview_study
	$(BIN)/snakemake --cores $(CORES) preview_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)

# The sensitivity study (config `sensitivity`; README "Sensitivity study"): its cost first.
sensitivity: install
	$(ESTIMATE) sensitivity_study
	$(BIN)/snakemake --cores $(CORES) sensitivity_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)

# After a killed run (Ctrl-C twice, SIGKILL, a lost session): release Snakemake's lock, then carry
# on; the profile's rerun-incomplete makes the half-written jobs again. TARGET=preview_study etc.
TARGET ?= main_study
resume: install
	$(BIN)/snakemake --unlock $(TARGET) $(CONFIGFILES) $(SNAKEMAKE_ARGS)
	$(ESTIMATE) $(TARGET)
	$(BIN)/snakemake --cores $(CORES) $(TARGET) $(CONFIGFILES) $(SNAKEMAKE_ARGS)

# Re-draw the figures of FIGURE_STUDIES (default: what `make run` makes) from stored traces.
# --allowed-rules guarantees that nothing upstream runs: a missing trace is an error, never a retraining.
FIGURE_STUDIES ?= main
PLOT_RULES := plot_metric_curves plot_silhouette_vs_isoscore
figures: install
	$(BIN)/snakemake --cores $(CORES) figures $(CONFIGFILES) --config 'studies=[$(FIGURE_STUDIES)]' \
		--allowed-rules $(PLOT_RULES) --forcerun $(PLOT_RULES) $(SNAKEMAKE_ARGS)

# The audit of every result (see README), the browsable report, and the style checks.
audit: install
	$(BIN)/snakemake --cores 1 audit $(CONFIGFILES) $(SNAKEMAKE_ARGS)

report: install
	$(BIN)/snakemake --cores 1 --report report.zip $(CONFIGFILES) $(SNAKEMAKE_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/snakemake --lint --cores 1 $(CONFIGFILES)

# Everything CI runs (.ci/run), end-to-end and SLURM tests included.
test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The quick tier: everything but the end-to-end Snakemake runs and the SLURM cluster (markers
# `slow` and `slurm`, pyproject.toml).
test-fast: install
	$(BIN)/python -m pytest -m 'not slow and not slurm' $(PYTEST_ARGS)

clean-venv:
	rm -rf $(VENV)
