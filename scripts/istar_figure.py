"""Draw one I-STAR figure (5: IsoScore* vs. performance, 6: average performance per method,
7: TwoNN per λ) from results/istar/runs.csv, as PDF + PNG plus the table it plots."""

import pandas as pd

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.plots import istar as istar_plots
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    runs = pd.read_csv(snakemake.input.runs)
    figure = snakemake.wildcards.figure
    out = snakemake.output
    if figure == "figure5":
        table = istar_plots.plot_figure5(runs, out.pdf, out.png)
    elif figure == "figure6":
        table = istar_plots.plot_figure6(
            runs, out.pdf, out.png, selection=snakemake.params.figure6_selection
        )
    elif figure == "figure7":
        table = istar_plots.plot_figure7(runs, out.pdf, out.png, task=snakemake.params.figure7_task)
    else:
        raise ValueError(f"unknown I-STAR figure {figure!r}; expected figure5, figure6 or figure7")
    with atomic_path(out.table) as tmp:
        table.to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
