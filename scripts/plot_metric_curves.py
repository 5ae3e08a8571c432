"""IsoScore and silhouette against the update step, mean ± std over seeds (paper Figures 2 and
4)."""

from isotropy.logs import configure_from_snakemake
from isotropy.plots.checks import PAPER_TEXT_WIDTH, save_figure, stamp
from isotropy.plots.main import metric_curves, setup_label
from isotropy.provenance import record_step
from isotropy.traces import read_traces


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [{k: v for k, v in key.items() if k != "seed"} for key in snakemake.params.run_keys]
    traces = read_traces(snakemake.input.traces, keys)
    # A grid of encoder rows only where one data set was run with several encoders (GLUE).
    several_encoders = traces.groupby("dataset")["encoder"].nunique().max() > 1
    if not several_encoders:  # name the vectors each panel really used (the GloVe stand-in as such)
        labels = snakemake.params.encoder_labels
        traces["dataset"] = [
            setup_label(d, e, labels) for d, e in zip(traces["dataset"], traces["encoder"])
        ]
    figure = metric_curves(traces, panel="dataset", row="encoder" if several_encoders else None)
    stamp(figure, snakemake.params.stamp)
    # Figure 2 reads at a paper's text width; figure 4's grid of encoders × tasks cannot.
    width = None if several_encoders else PAPER_TEXT_WIDTH
    save_figure(figure, snakemake.output.pdf, snakemake.output.png, page_width=width)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
