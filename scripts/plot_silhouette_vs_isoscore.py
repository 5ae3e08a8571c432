"""Silhouette against IsoScore per setup, coloured by update (paper Figure 3)."""

import pandas as pd

from isotropy.logs import configure_from_snakemake
from isotropy.plots.checks import PAPER_TEXT_WIDTH, save_figure, stamp
from isotropy.plots.main import setup_label, silhouette_vs_isoscore
from isotropy.provenance import record_step
from isotropy.traces import read_traces


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [{k: v for k, v in key.items() if k != "seed"} for key in snakemake.params.run_keys]
    traces = read_traces(snakemake.input.traces, keys)
    correlations = pd.read_csv(snakemake.input.correlations)
    # panels name the vectors each setup really used (the GloVe stand-in as such)
    labels = snakemake.params.encoder_labels
    for frame in (traces, correlations):
        frame["dataset"] = [
            setup_label(d, e, labels) for d, e in zip(frame["dataset"], frame["encoder"])
        ]
    figure = silhouette_vs_isoscore(traces, panel="dataset", correlations=correlations)
    stamp(figure, snakemake.params.stamp)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png, page_width=PAPER_TEXT_WIDTH)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
