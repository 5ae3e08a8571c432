"""The sensitivity table: r and rho with bootstrap intervals, counts and endpoints per grid cell."""

import json

import pandas as pd

from isotropy.bootstrap import BootstrapSettings
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.sensitivity import markdown_table, sensitivity_table
from isotropy.summaries import correlation_table, read_traces


def main(snakemake):
    configure_from_snakemake(snakemake)
    keys = [
        {"encoder": r["vectors"], "dataset": r["setup"], "label_set": r["label_set"]}
        for r in snakemake.params.runs
    ]
    traces = read_traces(snakemake.input.traces, keys)
    summaries = pd.DataFrame(
        [
            {**key, "seed": run["seed"], **json.load(open(path, encoding="utf-8"))}
            for key, run, path in zip(keys, snakemake.params.runs, snakemake.input.summaries)
        ]
    )
    by = ["encoder", "dataset", "label_set"]
    correlations = correlation_table(
        traces, by=by, bootstrap=BootstrapSettings(**snakemake.params.bootstrap)
    )
    table = sensitivity_table(correlations, summaries, traces)
    table.insert(len(table.columns), "settings", snakemake.params.settings_line)
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(snakemake.output.markdown) as tmp:
        tmp.write_text(
            markdown_table(table)
            + f"\nSettings: {snakemake.params.settings_line}. Intervals: {table['ci'].iloc[0]}.\n",
            encoding="utf-8",
        )
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
