"""Build one prepared data set, resources/data/<dataset>.parquet, from its fetched raw sources.

Thin entry point for rule ``prepare_dataset``: the work is
:func:`isotropy.readers.registry.prepare_dataset`.
"""

from pathlib import Path

from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.readers.registry import (
    input_trust,
    prepare_dataset,
    read_source_manifest,
    write_dataset,
)


def main(snakemake) -> None:
    configure_from_snakemake(snakemake)
    sources = dict(snakemake.params.sources)
    # Each named input is a source's manifest; its folder holds the raw files.
    raw_dirs = {name: Path(snakemake.input[name]).parent for name in set(sources.values())}
    table = prepare_dataset(
        snakemake.wildcards.dataset, raw_dirs, sources, dict(snakemake.params.options)
    )
    write_dataset(table, snakemake.output.table)
    # Which inputs rest on a published pin and which on the sources lock (trusted on first use).
    trust = {name: input_trust(read_source_manifest(d)) for name, d in sorted(raw_dirs.items())}
    record_step(snakemake, extra={"rows": len(table), "inputs_rest_on": trust})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
