"""Every path the workflow passes between rules, and every result table and figure, spelled once.

A helper called without arguments gives the Snakemake pattern; with values, one file's path.
"""

from __future__ import annotations

import functools

RAW_ROOT = "resources/raw"
MODELS_ROOT = "resources/models"
# Written last by a download: its presence means the folder is complete.
MANIFEST_NAME = "manifest.json"


def raw_manifest(source: str = "{source}") -> str:
    """The manifest of a downloaded source (the output of rule download_source)."""
    return f"{RAW_ROOT}/{source}/{MANIFEST_NAME}"


def split_model_manifest(name: str = "{split_model}") -> str:
    """The manifest of a model assembled from its byte-split volumes (isotropy.models)."""
    return f"{MODELS_ROOT}/{name}/{MANIFEST_NAME}"


def dataset_table(dataset: str = "{dataset}") -> str:
    """A prepared data set (isotropy.readers): one parquet table."""
    return f"resources/data/{dataset}.parquet"


def embedding_file(artefact: str, encoder: str = "{encoder}", dataset: str = "{dataset}") -> str:
    """One file (vectors.npy, index.parquet, missing.txt) of the embeddings of a data set."""
    return f"resources/embeddings/{encoder}/{dataset}/{artefact}"


def optimisation_run_file(
    artefact: str,
    study: str = "{study}",
    encoder: str = "{encoder}",
    dataset: str = "{dataset}",
    seed: int | str = "{seed}",
) -> str:
    """One file (trace.parquet, summary.json) of a direct-optimisation run."""
    return f"results/{study}/{encoder}/{dataset}/seed{seed}/{artefact}"


def istar_run_file(
    artefact: str = "metrics.json",
    model: str = "{model}",
    task: str = "{task}",
    regulariser: str = "{regulariser}",
    lam: str = "{lam}",
    seed: int | str = "{seed}",
) -> str:
    """One file of an I-STAR fine-tuning run; ``lam`` as :func:`isotropy.istar.study.format_lambda`
    spells it."""
    return f"results/istar/{model}/{task}/{regulariser}_{lam}/seed{seed}/{artefact}"


def token_embeddings(model: str = "{model}", corpus: str = "{corpus}") -> str:
    """Hidden states of every layer for the geometry corpus."""
    return f"resources/geometry/{model}/{corpus}/token_embeddings.npz"


def sentence_embeddings(model: str = "{model}", sts: str = "{sts}") -> str:
    """Mean-pooled sentence embeddings of an STS data set."""
    return f"resources/geometry/{model}/{sts}/sentence_embeddings.npz"


def classification_features(model: str = "{model}", task: str = "{task}") -> str:
    """Frozen last-layer token states of a classification task's sentences (both splits)."""
    return f"resources/geometry/{model}/{task}/token_features.npz"


def classification_run_file(
    artefact: str = "classification.csv", model: str = "{model}", task: str = "{task}"
) -> str:
    """One model's classification table (every reading, method and seed) or its benchmark."""
    return f"results/geometry/{model}/{task}/{artefact}"


def geometry_run_file(
    artefact: str, model: str = "{model}", data: str = "{corpus}", seed: int | str = "{seed}"
) -> str:
    """One per-model, per-seed table of the geometry study (``data``: the corpus, or an STS set)."""
    return f"results/geometry/{model}/{data}/seed{seed}/{artefact}"


def token_frequency(model: str = "{model}", corpus: str = "{corpus}") -> str:
    """The corpus count of every token type as the model's tokenizer splits the corpus."""
    return f"results/geometry/{model}/{corpus}/token_frequency.csv"


def static_geometry_file(
    artefact: str, source: str = "{source}", seed: int | str = "{seed}"
) -> str:
    """One table of the static word-vector comparison rows."""
    return f"results/geometry/static/{source}/seed{seed}/{artefact}"


# Each study's count table and correlation table (Mickus et al.'s Tables 1-3).
COUNT_TABLES = {"main": "table1", "glue": "table2"}
CORRELATION_TABLES = {"main": "correlations", "glue": "table3"}


def study_file(name: str, study: str = "{study}") -> str:
    """One table (``table1.csv``) or figure (``figure2.pdf``) of a study's own folder."""
    return f"results/{study}/{name}"


# The other studies' own folders, each named once.
sensitivity_file = functools.partial(study_file, study="sensitivity")
section2_file = functools.partial(study_file, study="section2")
istar_estimator_file = functools.partial(study_file, study="istar_estimator")
extensions_file = functools.partial(study_file, study="extensions")
rajaee_cls_file = functools.partial(study_file, study="rajaee_cls")

SENSITIVITY_TABLE = sensitivity_file("table.csv")
SENSITIVITY_MARKDOWN = sensitivity_file("table.md")
SENSITIVITY_SEEDS = sensitivity_file("seeds.csv")


def sensitivity_figure(ext: str = "pdf", name: str = "r_by_condition") -> str:
    """A figure of the sensitivity study: ``r_by_condition`` or ``phases``."""
    return sensitivity_file(f"{name}.{ext}")


def derived_file(artefact: str, name: str = "{vectors}", setup: str = "{dataset}") -> str:
    """One file (vectors.npy, index.parquet, basis.npy) of a derived vector set."""
    return f"resources/sensitivity/embeddings/{name}/{setup}/{artefact}"


def label_set_file(setup: str = "{dataset}", label_set: str = "{label_set}") -> str:
    """The items of one label set of a word setup."""
    return f"resources/sensitivity/labels/{setup}/{label_set}.parquet"


def sensitivity_run_file(
    artefact: str,
    vectors: str = "{encoder}",
    setup: str = "{dataset}",
    label_set: str = "{label_set}",
    seed: int | str = "{seed}",
    lr_factor: str = "{lr}",
) -> str:
    """One file (trace.parquet, summary.json) of a sensitivity run."""
    return f"results/sensitivity/{vectors}/{setup}/{label_set}/lr{lr_factor}/seed{seed}/{artefact}"


def sensitivity_cell_file(
    setup: str = "{dataset}",
    vectors: str = "{encoder}",
    label_set: str = "{label_set}",
    lr_factor: str = "{lr}",
) -> str:
    """The per-seed numbers of one cell, written as soon as its seeds have run."""
    return f"results/sensitivity/cells/{setup}/{vectors}/{label_set}/lr{lr_factor}.csv"


ISTAR_RUNS = "results/istar/runs.csv"


def istar_figure(figure: str = "{figure}", ext: str = "pdf") -> str:
    """One figure of Figures 5-7 (``ext`` pdf or png) or the table it draws (``csv``)."""
    return f"results/istar/{figure}.{ext}"


GEOMETRY_COSINE = "results/geometry/cosine_by_layer.csv"
GEOMETRY_LID = "results/geometry/lid.csv"
GEOMETRY_STS = "results/geometry/sts.csv"
GEOMETRY_ISOTROPY = "results/geometry/isotropy_by_layer.csv"
ANALOGIES = "results/geometry/analogies.csv"  # the main paper's footnote 1
GEOMETRY_CLASSIFICATION = "results/geometry/classification.csv"


def geometry_figure(figure: str = "{figure}", ext: str = "pdf") -> str:
    """A study-wide figure of the geometry study."""
    return f"results/geometry/figures/{figure}.{ext}"


def model_view_figure(
    view: str,
    ext: str = "pdf",
    model: str = "{model}",
    corpus: str = "{corpus}",
    seed: int | str = "{seed}",
) -> str:
    """A figure of one model's PCA layer: its ``pca_view``, or its ``token_views`` (by token kind
    and by corpus frequency)."""
    return f"results/geometry/figures/{model}/{corpus}/seed{seed}/{view}.{ext}"


pca_view_figure = functools.partial(model_view_figure, "pca_view")
token_views_figure = functools.partial(model_view_figure, "token_views")


def extensions_run_file(
    artefact: str, dataset: str = "{dataset}", head: str = "{head}", seed: str | int = "{seed}"
) -> str:
    """One direct-optimisation run of the extension study (trace.parquet, summary.json, logs)."""
    return f"results/extensions/runs/{dataset}/{head}/seed{seed}/{artefact}"


def extensions_heldout_file(
    artefact: str, dataset: str = "{dataset}", seed: str | int = "{seed}"
) -> str:
    """One held-out fine-tuning run of the extension study (epochs.csv, summary.json, logs)."""
    return f"results/extensions/heldout/{dataset}/seed{seed}/{artefact}"


CLAIMS = "results/claims.csv"
CLAIMS_MARKDOWN = "results/claims.md"
PAPER_COMPARISON = "results/paper_comparison.csv"
PAPER_COMPARISON_MARKDOWN = "results/paper_comparison.md"
REPORT_OVERVIEW = "results/report/overview.html"
REPORT_FOREST = "results/report/forest"  # + .pdf / .png: the opening page's forest plot
# A preview's verdicts and opening page (make preview; make report), judged on results/preview/.
PREVIEW_CLAIMS = "results/preview/claims.csv"
PREVIEW_CLAIMS_MARKDOWN = "results/preview/claims.md"
PREVIEW_PAPER_COMPARISON = "results/preview/paper_comparison.csv"
PREVIEW_PAPER_COMPARISON_MARKDOWN = "results/preview/paper_comparison.md"
PREVIEW_REPORT_OVERVIEW = "results/preview/report/overview.html"
PREVIEW_REPORT_FOREST = "results/preview/report/forest"
AUDIT_TABLE = "results/audit.tsv"
# Workflow files and their copies in the results folder, which every step reads (the same path
# in every clone; rules/provenance.smk).
WORKFLOW_PUBLISHED_VALUES = "config/published_values.csv"
PUBLISHED_VALUES = "resources/published_values.csv"
WORKFLOW_PROTOCOL_EFFECTS = "config/protocol_effects.csv"
PROTOCOL_EFFECTS = "resources/protocol_effects.csv"
# The committed protocol run's §3.2 verdicts, shown beside every report's own.
WORKFLOW_COMMITTED_VERDICTS = "docs/data/main_verdicts.csv"
COMMITTED_VERDICTS = "resources/committed_verdicts.csv"
EFFECTIVE_CONFIG = "logs/effective-config"  # + /<target>.yaml, written when a run starts
MADE_WITH = "# made with: "  # its first line: the files laid over each other


def logs(path: str) -> str:
    """A rule's log file: ``path`` (its output's path, with the log's name) under ``logs/``."""
    return f"logs/{path}"


def benchmarks(path: str) -> str:
    """A rule's benchmark file: ``path`` (its output's path, ``.tsv``) under ``benchmarks/``."""
    return f"benchmarks/{path}"


def rajaee_cls_run_file(
    artefact: str = "metrics.json",
    model: str = "{model}",
    task: str = "{task}",
    method: str = "{method}",
    seed: int | str = "{seed}",
) -> str:
    """One file of a fine-tuning run with (``cluster``) or without (``none``) the method."""
    return f"results/rajaee_cls/{model}/{task}/{method}/seed{seed}/{artefact}"
