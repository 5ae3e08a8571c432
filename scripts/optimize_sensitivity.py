"""One sensitivity run: the main study's optimisation, with the subspace probe recorded per step."""

import numpy as np
import pandas as pd

from isotropy.compute import resolve_device
from isotropy.embeddings import load_embeddings
from isotropy.io import atomic_path, write_json
from isotropy.logs import configure_from_snakemake
from isotropy.optimize import OptimisationSettings, build_problem, run_optimisation
from isotropy.provenance import record_step
from isotropy.sensitivity import SubspaceProbe, rms_centred_norm


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    table = pd.read_parquet(snakemake.input.table)
    vectors, index = load_embeddings(snakemake.input.vectors, snakemake.input.index)
    problem = build_problem(table, index, vectors)
    basis = np.load(snakemake.input.basis) if snakemake.input.get("basis") else None
    probe = SubspaceProbe(basis if basis is not None and basis.size else None, device)
    settings = OptimisationSettings(**snakemake.params.settings)
    trace, summary = run_optimisation(problem, settings, device, probe=probe)
    norm = rms_centred_norm(problem.vectors)
    summary.update(
        encoder=snakemake.wildcards.encoder,
        dataset=snakemake.wildcards.dataset,
        rms_centred_norm=norm,
    )
    with atomic_path(snakemake.output.trace) as tmp:
        trace.to_parquet(tmp, index=False)
    write_json(snakemake.output.summary, summary)
    record_step(snakemake, device=device, seeds=[settings.seed], extra={"rms_centred_norm": norm})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
