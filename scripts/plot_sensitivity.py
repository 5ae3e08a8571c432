"""Pearson r of IsoScore and silhouette by condition: every seed and the interval over seeds."""

import pandas as pd

from isotropy.logs import configure_from_snakemake
from isotropy.plots.checks import save_figure
from isotropy.plots.main import r_by_condition
from isotropy.provenance import record_step
from isotropy.sensitivity import derived_labels


def main(snakemake):
    configure_from_snakemake(snakemake)
    labels = {**snakemake.params.encoder_labels, **derived_labels(snakemake.params.derived)}
    table = pd.read_csv(snakemake.input.table)
    figure = r_by_condition(table, snakemake.params.settings_line, labels)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
