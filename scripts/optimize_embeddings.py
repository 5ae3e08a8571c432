"""Train an embedding table and a linear classifier, recording IsoScore and silhouette per
update."""

import pandas as pd

from isotropy.compute import resolve_device
from isotropy.logs import configure_from_snakemake
from isotropy.optimize import (
    OptimisationSettings,
    Section2Probe,
    problem_from_files,
    run_optimisation,
    save_run,
)
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    table = pd.read_parquet(snakemake.input.table)
    problem = problem_from_files(table, snakemake.input.vectors, snakemake.input.index)
    settings = OptimisationSettings(**snakemake.params.settings)
    # section 2's quantities after each recorded update, when the study asks (quadratic in items)
    probe = Section2Probe(problem, device) if snakemake.params.get("section2_metrics") else None
    trace, summary = run_optimisation(problem, settings, device, probe)
    summary.update(encoder=snakemake.wildcards.encoder, dataset=snakemake.wildcards.dataset)
    save_run(trace, summary, snakemake.output.trace, snakemake.output.summary)
    record_step(snakemake, device=device, seeds=[settings.seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
