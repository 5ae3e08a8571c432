"""Concatenate the per-model tables of the geometry study into one table."""

from isotropy import geometry
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    table = geometry.concatenate_tables(
        list(snakemake.input), geometry.TABLE_COLUMNS[snakemake.params.table]
    )
    geometry.write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=geometry.table_seeds(table), extra={"rows": len(table)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
