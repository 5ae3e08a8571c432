# Configuration validation and the helper functions every stage uses. Stage files hold rules only.
# Everything imported here is plain Python (no torch): a dry run, a lint or a report needs only
# Snakemake and the light configuration code.
import re
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from isotropy import readers as isotropy_datasets
from isotropy import sources as isotropy_download
from isotropy import model_parts as isotropy_model_parts
from isotropy import paths
from isotropy import provenance as isotropy_provenance
from isotropy import sensitivity as isotropy_sensitivity
from isotropy import studies
from isotropy.istar import grid as istar_grid
from isotropy.istar import tasks as istar_tasks
from isotropy.verdicts import standins as verdict_stand_ins
from isotropy.verdicts import workflow as verdicts

# The files Snakemake laid over each other (the Snakefile's config.yaml first, then --configfile):
# an empty mapping in an overlay removes nothing and is refused, naming the file.
studies.load_config_files(
    [f for f in workflow.configfiles if f not in workflow.overwrite_configfiles]
    + list(workflow.overwrite_configfiles)
)
try:
    validate(config, "../schemas/config.schema.yaml")
except WorkflowError as error:
    # Snakemake's message holds the whole schema: name the key, its value and what is allowed.
    schema = os.path.join(workflow.basedir, "schemas", "config.schema.yaml")
    raise studies.config_validation_error(error, schema) from None
studies.check_config(config)
studies.check_geometry_config(config)
# device: cuda on a machine without CUDA, refused before any job (jobs sent to a cluster by a
# profile or an executor are checked where they run).
if workflow.is_main_process and not studies.submits_jobs_elsewhere(sys.argv):
    if (problem := studies.cuda_problem(config)) is not None:
        raise studies.ConfigError(problem)

STUDIES = studies.OPTIMISATION_STUDIES


wildcard_constraints:
    study="|".join(STUDIES),
    encoder=r"[A-Za-z0-9_\-]+",
    seed=r"\d+",
    source="|".join(re.escape(name) for name in config["sources"]),
    dataset="|".join(re.escape(name) for name in isotropy_datasets.DATASETS),


def setting(*keys, default=None):
    """A configuration value by key path, ``default`` when it or a section on the way is absent
    (the one way rules read the configuration)."""
    return studies.setting(config, *keys, default=default)


def study_runs(study):
    """Every (encoder, dataset, seed) run of a direct-optimisation study, as dicts."""
    return studies.study_runs(config, study)


def table_runs(study):
    """The runs a study's tables and figures hold: the configured ones, then those already on
    disk that the configuration can name (tables accumulate run by run; studies.table_runs).
    """
    return studies.table_runs(config, study)


def run_files(study, artefact):
    """Paths of one artefact (trace.parquet, summary.json) for every run of a study's tables."""
    return [
        paths.optimisation_run_file(
            artefact, study, r["encoder"], r["dataset"], r["seed"]
        )
        for r in table_runs(study)
    ]


def run_keys(study):
    """The keys that tag each run's file in tables and figures, in run_files order."""
    return [
        {"encoder": r["encoder"], "dataset": r["dataset"], "seed": r["seed"]}
        for r in table_runs(study)
    ]


def settings_stamp(wildcards):
    """Written on every table and figure of a preview; empty for the full studies."""
    return studies.settings_stamp(config, wildcards.study)


def optimisation_settings(wildcards):
    """Training settings of one run, from its study's config (bias per main-study setup)."""
    return studies.optimisation_settings(
        config, wildcards.study, wildcards.dataset, int(wildcards.seed)
    )


def verified_embedding(artefact):
    """An embeddings file (vectors.npy) of a run, checked when it exists (size against header and
    record): a damaged one is named while the DAG is built, before Snakemake removes any valid
    result made from it."""

    def path(wildcards):
        file = paths.embedding_file(artefact, wildcards.encoder, wildcards.dataset)
        if os.path.isfile(file):
            problem = isotropy_provenance.damaged_npy(file)
            if problem is not None:
                kind = studies.encoder(config, wildcards.encoder)["kind"]
                maker = (
                    "embed_sentences"
                    if kind == "sentence-transformer"
                    else "lookup_word_vectors"
                )
                raise WorkflowError(
                    f"{problem}; re-make it: rm -f {file}, then run again (rule {maker} makes it "
                    "anew); nothing was run or removed"
                )
        return file

    return path


def sentence_encoder(wildcards):
    return studies.sentence_encoder_spec(config, wildcards.encoder)


def split_model_input(path):
    """The manifest of a `parts:<name>` model (assembled by rule assemble_model), else nothing."""
    return isotropy_model_parts.required_manifests([path], config)


def word_vector_file(wildcards):
    return studies.word_vector_file(config, wildcards.encoder)


def stand_ins():
    """What this run uses in place of the paper's data and vectors (for captions and figures)."""
    return verdict_stand_ins.workflow_stand_ins(config)


def encoder_labels():
    """Encoder name → a label naming its vectors (the GloVe stand-in as such), for figures."""
    return verdict_stand_ins.encoder_labels(config, stand_ins())


def main_study_outputs(study="main"):
    """Tables and figures of the main study (or of its preview, study="preview")."""
    return [
        f"results/{study}/table1.csv",
        f"results/{study}/correlations.csv",
        f"results/{study}/figure2.pdf",
        f"results/{study}/figure2.png",
        f"results/{study}/figure3.pdf",
        f"results/{study}/figure3.png",
    ]


def glue_study_outputs():
    return [
        "results/glue/table2.csv",
        "results/glue/table3.csv",
        "results/glue/figure4.pdf",
        "results/glue/figure4.png",
    ]


def optimisation_studies():
    """The configured studies built by direct optimisation (main, glue), in config order."""
    return [study for study in config["studies"] if study in ("main", "glue")]


def study_targets(studies):
    """The final outputs of each listed study (the inputs of its target rule)."""
    targets = {
        "main": main_study_outputs,
        "glue": glue_study_outputs,
        "istar": lambda: list(rules.istar_study.input),
        "geometry": lambda: list(rules.geometry_study.input),
    }
    return [path for study in studies for path in targets[study]()]


# I-STAR (rules/istar.smk): the run grid of config `istar` (empty without the section).
ISTAR = setting("istar", default={})
ISTAR_RUNS = istar_grid.run_grid(ISTAR) if ISTAR else []
ISTAR_WILDCARDS = {
    "model": "|".join(re.escape(m) for m in ISTAR.get("models", {})) or "^$",
    "task": "|".join(istar_tasks.TASKS),
    "regulariser": "|".join(istar_tasks.REGULARISERS),
    "lam": r"-?\d+(\.\d+)?(e-?\d+)?",
    "seed": r"\d+",
}


def istar_lambda(wildcards):
    """The configured λ of a run (never parsed back from its path)."""
    return istar_grid.configured_lambda(ISTAR, wildcards.regulariser, wildcards.lam)


# Geometry (rules/geometry.smk): wildcards match only the configured models and corpus.
GEOMETRY_WILDCARDS = studies.geometry_wildcards(config)
# A data set the mirror lacks makes no job: planned out here, with one line (SICK-R is optional).
for _name in studies.unavailable_sts_datasets(config):
    print(
        f"geometry: STS data set {_name!r} is not in the data mirror; no job is planned for it "
        "(config geometry.sts.datasets lists it; add its files to the mirror to run it)",
        file=sys.stderr,
    )


# Sensitivity study (rules/sensitivity.smk): vector sets made by orthogonal embedding.
SENSITIVITY_ORTHOGONAL = setting("sensitivity", "orthogonal", default={})
