"""The report's opening page: the run, its claims and the paper comparison (isotropy.reporting)."""

import pandas as pd

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.reporting import configuration_line, overview_html


def main(snakemake):
    configure_from_snakemake(snakemake)
    page = overview_html(
        pd.read_csv(snakemake.input.claims),
        pd.read_csv(snakemake.input.comparison),
        studies=snakemake.params.studies,
        seeds=dict(snakemake.params.seeds),
        stand_ins=dict(snakemake.params.stand_ins),
        # Which files were laid over each other depends on how the run was invoked (the audit
        # re-reads the same configuration from one file), so a file list would make this page
        # stale on every audit: its content, by digest, is what made the run.
        configfiles=[configuration_line(snakemake.config, snakemake.output.html)],
        preview=snakemake.params.preview,
        tables={path: pd.read_csv(path) for path in snakemake.input.tables},
    )
    with atomic_path(snakemake.output.html) as tmp:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(page)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
