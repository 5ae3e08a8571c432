"""The two phases: IsoScore and silhouette against updates, IsoScore's minimum marked."""

import pandas as pd

from isotropy.logs import configure_from_snakemake
from isotropy.plots.checks import save_figure
from isotropy.plots.main import phases
from isotropy.provenance import record_step
from isotropy.sensitivity import derived_labels


def main(snakemake):
    configure_from_snakemake(snakemake)
    labels = {**snakemake.params.encoder_labels, **derived_labels(snakemake.params.derived)}
    traces = pd.concat(
        [
            pd.read_parquet(path).assign(
                setup=run["setup"], vectors=run["vectors"], label_set=run["label_set"]
            )
            for path, run in zip(snakemake.input.traces, snakemake.params.runs)
        ],
        ignore_index=True,
    )
    figure = phases(traces, snakemake.params.settings_line, labels)
    save_figure(figure, snakemake.output.pdf, snakemake.output.png)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
