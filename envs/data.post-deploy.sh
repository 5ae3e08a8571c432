#!/usr/bin/env bash
# Snakemake runs this once inside the freshly created environment (--sdm conda), from the
# workflow's working directory: the repository root, unless --directory points elsewhere,
# in which case set ISOTROPY_REPO to the repository. Installs the project package
# (`import isotropy`) editable and without dependencies: the environment file pins those.
# By hand: conda env create -f envs/<family>.yaml -n <name> && conda activate <name> &&
# pip install --no-deps -e .
set -euo pipefail
repo="${ISOTROPY_REPO:-$PWD}"
if [[ ! -f "$repo/pyproject.toml" || ! -d "$repo/src/isotropy" ]]; then
    echo "post-deploy: $repo is not the isotropy repository; set ISOTROPY_REPO to it" >&2
    exit 1
fi
python -m pip install --no-deps --editable "$repo"
