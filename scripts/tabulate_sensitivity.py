"""The sensitivity table: one row per cell, correlations with t-intervals over seeds."""

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.sensitivity import write_tables


def main(snakemake):
    configure_from_snakemake(snakemake)
    write_tables(
        snakemake.input.cells,
        snakemake.output,
        snakemake.params.settings_line,
        snakemake.params.level,
        opener=atomic_path,
    )
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
