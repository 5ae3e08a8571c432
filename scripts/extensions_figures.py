"""The extension study's figures, one per question (isotropy.plots.extensions), each saved to the
files named after its question."""

import pandas as pd

from isotropy.extensions import results
from isotropy.logs import configure_from_snakemake
from isotropy.plots.extensions import question_figures, save_question_figure
from isotropy.provenance import record_step
from isotropy.traces import read_traces


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [{"setup": r["dataset"], "head": r["head"]} for r in snakemake.params.runs]
    traces = read_traces(list(snakemake.input.traces), keys)
    seeds = pd.read_csv(snakemake.input.seeds)
    epochs = pd.DataFrame()
    if snakemake.input.epochs:
        epochs = pd.concat(map(pd.read_csv, snakemake.input.epochs))
    pdfs, pngs = map(results.by_question, (snakemake.output.pdf, snakemake.output.png))
    for question, draw in question_figures(traces, seeds, epochs).items():
        save_question_figure(draw(), pdfs[question], pngs[question], snakemake.params.settings_line)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
