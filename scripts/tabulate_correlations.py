"""Pearson and Spearman correlation of IsoScore and silhouette per setup (paper Table 3, section 3),
each seed's values and the interval over seeds, with the paper's printed r beside ours."""

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.summaries import correlation_table, with_paper_values
from isotropy.traces import read_traces
from isotropy.verdicts.comparison import read_published


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [{k: v for k, v in key.items() if k != "seed"} for key in snakemake.params.run_keys]
    traces = read_traces(snakemake.input.traces, keys)
    table = correlation_table(traces, by=["encoder", "dataset"])
    study = "glue" if snakemake.wildcards.study == "glue" else "main"  # a preview: main's values
    table = with_paper_values(table, read_published(snakemake.input.published), study)
    if snakemake.params.stamp:  # a preview's table says so in every row; its settings: the caption
        table.insert(0, "preview", "yes")
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
