"""Concatenate the per-model tables of the geometry study into one table."""

from isotropy.geometry.tables import TABLE_COLUMNS, concatenate_tables, table_seeds, write_table
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    table = concatenate_tables(list(snakemake.input), TABLE_COLUMNS[snakemake.params.table])
    write_table(table, snakemake.output.table)
    record_step(snakemake, seeds=table_seeds(table), extra={"rows": len(table)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
