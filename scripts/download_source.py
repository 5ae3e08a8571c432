"""Fetch one raw source into resources/raw/<source>/ (from its original URLs or from the mirror).

Thin entry point for rule ``download_source``: the work is :func:`isotropy.sources.fetch_source`.
"""

from pathlib import Path

from isotropy.logs import configure_from_snakemake
from isotropy.sources import fetch_source


def main(snakemake) -> None:
    configure_from_snakemake(snakemake)
    source = snakemake.params.source
    fetch_source(
        source["name"],
        source,
        Path(snakemake.output.manifest).parent,
        config=snakemake.config,
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
