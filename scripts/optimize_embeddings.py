"""Train an embedding table and a linear classifier, recording IsoScore and silhouette per
update."""

import pandas as pd

from isotropy.compute import resolve_device
from isotropy.embeddings import load_embeddings
from isotropy.io import atomic_path, write_json
from isotropy.logs import configure_from_snakemake
from isotropy.optimize import OptimisationSettings, Section2Probe, build_problem, run_optimisation
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    table = pd.read_parquet(snakemake.input.table)
    vectors, index = load_embeddings(snakemake.input.vectors, snakemake.input.index)
    problem = build_problem(table, index, vectors)
    settings = OptimisationSettings(**snakemake.params.settings)
    # section 2's quantities after each recorded update, when the study asks (quadratic in items)
    probe = Section2Probe(problem, device) if snakemake.params.get("section2_metrics") else None
    trace, summary = run_optimisation(problem, settings, device, probe)
    summary.update(encoder=snakemake.wildcards.encoder, dataset=snakemake.wildcards.dataset)
    with atomic_path(snakemake.output.trace) as tmp:
        trace.to_parquet(tmp, index=False)
    write_json(snakemake.output.summary, summary)
    record_step(snakemake, device=device, seeds=[settings.seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
