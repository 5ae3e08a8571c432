"""One sensitivity run: the main study's optimisation, with the subspace probe recorded per step."""

import numpy as np
import pandas as pd

from isotropy.compute import resolve_device
from isotropy.logs import configure_from_snakemake
from isotropy.optimize import OptimisationSettings, problem_from_files, run_optimisation, save_run
from isotropy.provenance import record_step
from isotropy.sensitivity import SubspaceProbe, rms_centred_norm


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    table = pd.read_parquet(snakemake.input.table)
    problem = problem_from_files(table, snakemake.input.vectors, snakemake.input.index)
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
    save_run(trace, summary, snakemake.output.trace, snakemake.output.summary)
    record_step(snakemake, device=device, seeds=[settings.seed], extra={"rms_centred_norm": norm})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
