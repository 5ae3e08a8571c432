"""The items of one sensitivity label set: the setup's words with a vector, then filtered."""

import logging

import pandas as pd

from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.readers.registry import write_dataset
from isotropy.sensitivity import label_set_table

log = logging.getLogger(__name__)


def main(snakemake):
    configure_from_snakemake(snakemake)
    table = pd.read_parquet(snakemake.input.table)
    vocabulary = pd.read_parquet(snakemake.input.index)["text"]
    kept = label_set_table(table, vocabulary, snakemake.params.label_set, snakemake.params.section)
    log.info(
        "%s/%s: %d of %d items kept (%d with a vector)",
        snakemake.wildcards.dataset,
        snakemake.params.label_set,
        len(kept),
        len(table),
        int(table["text"].astype(str).isin(set(vocabulary.astype(str))).sum()),
    )
    write_dataset(kept, snakemake.output.table)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
