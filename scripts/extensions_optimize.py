"""One run of the extension study: a seeded sample of a setup's items, the main study's direct
optimisation, a linear, deep or triplet head; hidden layers' metrics recorded per step."""

import pandas as pd

from isotropy.compute import resolve_device
from isotropy.extensions.design import sample_items
from isotropy.extensions.probes import HiddenLayerProbe
from isotropy.logs import configure_from_snakemake
from isotropy.optimize import (
    Head,
    OptimisationSettings,
    problem_from_files,
    run_optimisation,
    save_run,
)
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    run = snakemake.params.run
    table = sample_items(pd.read_parquet(snakemake.input.table), run["items"], run["item_seed"])
    problem = problem_from_files(table, snakemake.input.vectors, snakemake.input.index)
    settings = OptimisationSettings(**run["settings"])
    head = Head(**run["head"])
    probe = None
    if head.hidden_layers:
        sample_size = settings.metric_sample_size
        probe = HiddenLayerProbe(problem, head.hidden_layers, device, sample_size, settings.seed)
    trace, summary = run_optimisation(problem, settings, device, probe=probe, head=head)
    summary.update(
        dataset=snakemake.wildcards.dataset,
        head=snakemake.wildcards.head,
        head_settings=run["head"],
        item_sample=run["items"],
        item_seed=run["item_seed"],
    )
    save_run(trace, summary, snakemake.output.trace, snakemake.output.summary)
    record_step(snakemake, device=device, seeds=[settings.seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
