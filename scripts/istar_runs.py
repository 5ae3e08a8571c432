"""Collect every I-STAR run's metrics.json into results/istar/runs.csv (one row per run)."""

from isotropy.io import atomic_path
from isotropy.istar.runs import collect_runs
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    table = collect_runs(list(snakemake.input.metrics), model_names=list(snakemake.params.models))
    with atomic_path(snakemake.output.table) as tmp:
        table.to_csv(tmp, index=False)
    record_step(snakemake)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
