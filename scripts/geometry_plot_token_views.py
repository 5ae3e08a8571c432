"""Draw Cai et al.'s token views of one PCA view (by token kind, by corpus frequency)."""

import pandas as pd

from isotropy.logs import configure_from_snakemake
from isotropy.plots import geometry as geometry_plots
from isotropy.plots.checks import save_figure
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    # token strings such as "null" or "nan" are tokens, not missing values
    view = pd.read_csv(snakemake.input.view, keep_default_na=False)
    frequencies = pd.read_csv(snakemake.input.frequency, keep_default_na=False)
    wildcards = snakemake.wildcards
    figure = geometry_plots.plot_token_views(
        view, frequencies, title=f"{wildcards.model} on {wildcards.corpus}"
    )
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake, seeds=[int(wildcards.seed)])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
