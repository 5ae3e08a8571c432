"""Draw one figure of the geometry study from its stored table (PDF + PNG)."""

import pandas as pd

from isotropy.geometry.tables import table_seeds
from isotropy.logs import configure_from_snakemake
from isotropy.plots import geometry as geometry_plots
from isotropy.plots.checks import save_figure
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    table = pd.read_csv(snakemake.input.table)
    figure = snakemake.params.figure
    table = geometry_plots.name_static_rows(
        table, snakemake.params.stand_ins.get("word_vectors_label")
    )
    if figure == "cosine_by_layer":
        fig = geometry_plots.plot_cosine_by_layer(table)
    elif figure == "lid_by_layer":
        fig = geometry_plots.plot_lid_by_layer(table)
    elif figure == "isotropy_by_layer":
        fig = geometry_plots.plot_isotropy_by_layer(table)
    elif figure == "sts":
        fig = geometry_plots.plot_sts(table)
    elif figure == "pca_view":
        fig = geometry_plots.plot_pca_view(
            table, title=f"{snakemake.wildcards.model} on {snakemake.wildcards.corpus}"
        )
    else:
        raise ValueError(f"unknown geometry figure {figure!r}")
    save_figure(fig, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake, seeds=table_seeds(table))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
