"""Draw one I-STAR figure (5: IsoScore* vs. performance, 6: average performance per method,
7: TwoNN per λ) from results/istar/runs.csv, as PDF + PNG plus the table it plots."""

import pandas as pd

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.plots import istar as istar_plots
from isotropy.plots.checks import save_figure
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    runs = pd.read_csv(snakemake.input.runs)
    figure = snakemake.wildcards.figure
    out = snakemake.output
    options = {
        "figure6": {"selection": snakemake.params.figure6_selection},
        "figure7": {"task": snakemake.params.figure7_task},
    }.get(figure, {})
    drawn, table = istar_plots.FIGURES[figure](runs, **options)
    save_figure(drawn, out.pdf, out.png)
    with atomic_path(out.table) as tmp:
        table.to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
