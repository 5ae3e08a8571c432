"""Items and parameter counts per setup (paper Tables 1 and 2)."""

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.summaries import parameter_table


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [{k: v for k, v in key.items() if k != "seed"} for key in snakemake.params.run_keys]
    table = parameter_table(snakemake.input.summaries, keys, snakemake.params.encoder_labels)
    if snakemake.params.stamp:  # a preview's table says so in every row
        table.insert(0, "preview", snakemake.params.stamp)
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
