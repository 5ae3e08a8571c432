# Two entry points for a fresh machine: `make run` (the main study) and `make test`.
# Both create the virtual environment if it is missing and install the pinned project into it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all
SNAKEMAKE_ARGS ?=
# With a local data mirror there is usually no hub either: lay the offline overlay over config.yaml.
CONFIGFILES ?= $(if $(ISOTROPY_MIRROR),--configfile config.yaml config/offline.yaml,)

.PHONY: run test figures audit report lint install clean-venv

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
	$(BIN)/snakemake --cores $(CORES) main_study $(CONFIGFILES) $(SNAKEMAKE_ARGS)

figures: install
	$(BIN)/snakemake --cores $(CORES) figures --forcerun plot_metric_curves plot_silhouette_vs_isoscore $(CONFIGFILES) $(SNAKEMAKE_ARGS)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean-venv:
	rm -rf $(VENV)
