# Configuration validation and the helper functions every stage uses. Stage files hold rules only.
# Everything here comes from one package, isotropy.workflow (config, targets, inputs, paths), all
# plain Python (no torch): a dry run, a lint or a report needs only Snakemake and that code.
import sys

from isotropy import workflow as isotropy_workflow

configuration = isotropy_workflow.config
targets = isotropy_workflow.targets
inputs = isotropy_workflow.inputs
verdict_inputs = isotropy_workflow.verdict_inputs
paths = isotropy_workflow.paths
logs = paths.logs
benchmarks = paths.benchmarks

# The files Snakemake laid over each other (the Snakefile's config.yaml first, then --configfile):
# an empty mapping in an overlay removes nothing and is refused, naming the file. Snakemake's
# merge of the same files is `config`, validated (defaults filled in) and cross-checked here, as
# configuration.load_config does for python -m isotropy.estimate and the audit.
configuration.load_config_files(
    [f for f in workflow.configfiles if f not in workflow.overwrite_configfiles]
    + list(workflow.overwrite_configfiles)
)
# The schema beside these rules (not beside the Snakefile, which may be a user's own).
configuration.check_loaded_config(
    config,
    os.path.join(
        str(workflow.current_basedir), os.pardir, "schemas", "config.schema.yaml"
    ),
)
# device: cuda on a machine without CUDA, refused before any job (jobs sent to a cluster by a
# profile or an executor are checked where they run).
if workflow.is_main_process and not configuration.submits_jobs_elsewhere(sys.argv):
    if (problem := configuration.cuda_problem(config)) is not None:
        raise configuration.ConfigError(problem)


wildcard_constraints:
    **targets.wildcard_patterns(config),


def setting(*keys, default=None):
    """A configuration value by key path, ``default`` when it or a section on the way is absent
    (the one way rules read the configuration)."""
    return configuration.setting(config, *keys, default=default)


def run_files(study, artefact):
    """Paths of one artefact (trace.parquet, summary.json) for every run of a study's tables:
    the configured runs, then those on disk the configuration can name (targets.table_runs).
    """
    return targets.optimisation_run_files(config, study, artefact)


def run_keys(study):
    """The keys that tag each run's file in tables and figures, in run_files order."""
    return targets.run_keys(config, study)


def settings_stamp(wildcards):
    """Written on every table and figure of a preview; empty for the full studies."""
    return targets.settings_stamp(config, wildcards.study)


def preview_stamp():
    """The preview's stamp, for its claims, paper comparison and report page."""
    return targets.settings_stamp(config, "preview")


def preview_seeds():
    """The preview's seeds (config ``preview``, else the main study's)."""
    return list(targets.study_section(config, "preview")["seeds"])


def caption_facts(wildcards):
    """What a study's tables and figures hold, for their report captions."""
    return targets.caption_facts(config, wildcards.study)


def optimisation_settings(wildcards):
    """Training settings of one run, from its study's config (bias per main-study setup)."""
    return targets.optimisation_settings(
        config, wildcards.study, wildcards.dataset, int(wildcards.seed)
    )


def verified_embedding(artefact):
    """An embeddings file of a run, checked when it exists (inputs.verified_embedding)."""
    return inputs.verified_embedding(config, artefact)


def sentence_encoder(wildcards):
    return inputs.sentence_encoder(config, wildcards)


def split_model_input(path):
    """The manifest of a `parts:<name>` model (assembled by rule assemble_model), else nothing."""
    return inputs.split_model_input(config, path)


def word_vector_file(wildcards):
    return inputs.word_vector_file(config, wildcards.encoder)


def stand_ins():
    """What this run uses in place of the paper's data and vectors (for captions and figures)."""
    return inputs.stand_ins(config)


def encoder_labels():
    """Encoder name → a label naming its vectors (the GloVe stand-in as such), for figures."""
    return inputs.encoder_labels(config)


def study_targets(studies):
    """The final outputs of each listed study (the inputs of its target rule)."""
    return targets.study_targets(config, studies)


# I-STAR (rules/istar.smk): the run grid of config `istar` (empty without the section).
ISTAR = setting("istar", default={})
ISTAR_WILDCARDS = targets.istar_wildcards(ISTAR)


def istar_lambda(wildcards):
    """The configured λ of a run (never parsed back from its path)."""
    return targets.istar_lambda(ISTAR, wildcards.regulariser, wildcards.lam)


# Geometry (rules/geometry.smk): wildcards match only the configured models and corpus.
GEOMETRY_WILDCARDS = targets.geometry_wildcards(config)
_SAID_UNAVAILABLE = set()


def geometry_sts_tables(wildcards):
    """Every per-model STS table to collect. A data set the mirror lacks makes no job: planned
    out, with one line, said only when the geometry study's STS table is planned (SICK-R is
    optional): a main or preview run never mentions it."""
    for name in inputs.unavailable_sts_datasets(config):
        if name not in _SAID_UNAVAILABLE:
            _SAID_UNAVAILABLE.add(name)
            print(
                f"geometry: STS data set {name!r} is not in the data mirror; no job is planned "
                "for it (config geometry.sts.datasets lists it; add its files to the mirror to "
                "run it)",
                file=sys.stderr,
            )
    return inputs.geometry_sts_files(config)


# Sensitivity study (rules/sensitivity.smk): vector sets derived from an encoder's.
SENSITIVITY_DERIVED = setting("sensitivity", "derived", default={})


# When a run starts (not a dry run, not a report): record its effective configuration for
# `make report` (logs/effective-config/<target>.yaml), and print the whole run's done share
# and time left after every finished job (isotropy.workflow.run).
onstart:
    isotropy_workflow.run.started(workflow, config)
