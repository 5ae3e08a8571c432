# Configuration validation and the names every stage uses. Stage files hold rules only; they call
# the package's functions directly, the configuration first, and read settings with Snakemake's
# lookup(dpath=..., within=config). Everything here comes from isotropy.workflow, the data-layer
# modules whose functions rules call directly, and the layer over it: the studies' records
# (isotropy.studies) and the estimate, for onstart; beside them isotropy.compute's device check.
# All plain Python (no torch): a dry run, a lint or a report needs only Snakemake and that code.
import os
import sys

# Snakemake put the Snakefile's folder first on sys.path before it ran the Snakefile (and
# `python -m snakemake` the working folder): a module planted there would be imported in place of
# the installed one in every Snakemake process. Both go before the first import of the workflow
# (the Snakefile imports nothing before this file); jobs run with PYTHONSAFEPATH=1 (below).
_own_folders = {os.path.realpath(workflow.basedir), os.path.realpath(os.getcwd())}
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") not in _own_folders]

from snakemake.utils import min_version

min_version("9.0")

from isotropy import (
    compute,
    costs,
    estimate,
    models,
    paths,
    readers,
    sources,
    standins,
    studies,
    trust,
    workflow as isotropy_workflow,
)

configuration = isotropy_workflow.config
targets = isotropy_workflow.targets
inputs = isotropy_workflow.inputs
readers = readers.inputs
extensions_design = studies.extensions.design
istar_design = studies.istar.istar_study
logs = paths.logs
benchmarks = paths.benchmarks

# The files Snakemake laid over each other (the Snakefile's config.yaml first, then --configfile):
# an empty mapping in an overlay removes nothing and is refused, naming the file. Snakemake's
# merge of the same files is `config`, laid over config/sources.yaml, validated by the models of
# isotropy.configuration (defaults filled in) and cross-checked here, as
# configuration.load_config does for python -m isotropy.estimate.
configuration.load_config_files(
    [f for f in workflow.configfiles if f not in workflow.overwrite_configfiles]
    + list(workflow.overwrite_configfiles)
)
configuration.with_sources(config)
# The validated model: what the helpers below read (`config` stays the rules' lookup's dict).
SETTINGS = configuration.check_loaded_config(config)
# A results folder may be someone else's: Snakemake's records there are checked before Snakemake
# reads them (its report runs YAML tags in conda_env), no link is written through, and script
# jobs (Snakemake's scripts, its subprocesses) never put their own folder, .snakemake/scripts/,
# first on sys.path (isotropy.trust).
os.environ.update(PYTHONSAFEPATH="1")
if workflow.is_main_process:
    # --trust-io-cache would unpickle the io cache when the DAG is built: it is removed too.
    trust.guard_folder(".")
# device: cuda on a machine without CUDA, refused before any job (jobs sent to a cluster by a
# profile or an executor are checked where they run).
if workflow.is_main_process and not configuration.submits_jobs_elsewhere(sys.argv):
    if (problem := compute.cuda_problem(config["device"])) is not None:
        raise configuration.ConfigError(problem)


wildcard_constraints:
    **targets.wildcard_patterns(SETTINGS),


# Computed once per parse, read by many rules' params.
STAND_INS = standins.workflow_stand_ins(SETTINGS)  # for captions and figures
ENCODER_LABELS = standins.encoder_labels(
    SETTINGS, STAND_INS
)  # the GloVe stand-in named as such

# I-STAR (rules/istar.smk): the run grid of config `istar` (None without the section).
ISTAR = SETTINGS.istar
ISTAR_WILDCARDS = studies.istar.wildcards(ISTAR)

# Geometry (rules/geometry.smk): wildcards match only the configured models and corpus.
GEOMETRY_WILDCARDS = studies.geometry.wildcards(SETTINGS)

# Extension study (rules/extensions.smk): the encoder of a run's setup, the main study's.
EXTENSIONS_ENCODER = lookup(dpath="main/setups/{dataset}/encoder", within=config)

# Sensitivity study (rules/sensitivity.smk): vector sets derived from an encoder's.
SENSITIVITY_DERIVED = config.get("sensitivity", {}).get("derived", {})


# When a run starts (not a dry run, not a report): set the jobs' thread wait policy and record
# its effective configuration for `make report` (logs/effective-config/<target>.yaml;
# isotropy.estimate.started; plain Python like the rest, it adds no package to the parse).
onstart:
    estimate.started(workflow, SETTINGS)
