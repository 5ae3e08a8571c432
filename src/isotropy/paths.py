"""Every path the workflow passes between rules, spelled once.

One helper per kind of path. Called without arguments, a helper gives the Snakemake pattern
(``{wildcard}`` placeholders) for a rule's input or output; called with values, the path of one
file. Plain Python: the workflow imports it while it parses.
"""

from __future__ import annotations

RAW_ROOT = "resources/raw"
MANIFEST_NAME = (
    "manifest.json"  # written last by a download: its presence means the folder is complete
)


def raw_manifest(source: str = "{source}") -> str:
    """The manifest of a downloaded source (the output of rule download_source)."""
    return f"{RAW_ROOT}/{source}/{MANIFEST_NAME}"


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
    """One file of an I-STAR fine-tuning run; ``lam`` as :func:`isotropy.istar.grid.format_lambda` spells it."""
    return f"results/istar/{model}/{task}/{regulariser}_{lam}/seed{seed}/{artefact}"


def token_embeddings(model: str = "{model}", corpus: str = "{corpus}") -> str:
    """Hidden states of every layer for the geometry corpus."""
    return f"resources/geometry/{model}/{corpus}/token_embeddings.npz"


def sentence_embeddings(model: str = "{model}", sts: str = "{sts}") -> str:
    """Mean-pooled sentence embeddings of an STS data set."""
    return f"resources/geometry/{model}/{sts}/sentence_embeddings.npz"


def geometry_run_file(
    artefact: str, model: str = "{model}", data: str = "{corpus}", seed: int | str = "{seed}"
) -> str:
    """One per-model, per-seed table of the geometry study (``data``: the corpus, or an STS set)."""
    return f"results/geometry/{model}/{data}/seed{seed}/{artefact}"


def static_geometry_file(
    artefact: str, source: str = "{source}", seed: int | str = "{seed}"
) -> str:
    """One table of the static word-vector comparison rows."""
    return f"results/geometry/static/{source}/seed{seed}/{artefact}"
