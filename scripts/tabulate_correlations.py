"""Pearson and Spearman correlation of IsoScore and silhouette per setup (paper Table 3, section 3)."""

from isotropy.bootstrap import BootstrapSettings
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.summaries import correlation_table, read_traces


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [{k: v for k, v in key.items() if k != "seed"} for key in snakemake.params.run_keys]
    traces = read_traces(snakemake.input.traces, keys)
    bootstrap = BootstrapSettings(**snakemake.params.bootstrap)
    table = correlation_table(traces, by=["encoder", "dataset"], bootstrap=bootstrap)
    if snakemake.params.stamp:  # a preview's table says so in every row
        table.insert(0, "preview", snakemake.params.stamp)
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
