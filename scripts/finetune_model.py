"""Fine-tune one model on one task with one regulariser, λ and seed; write metrics.json. Rule
finetune of the I-STAR study (isotropy.finetune.training).

The task's splits are the downloads of its sources (inputs train and validation). Resumes from
checkpoint.pt in the output folder when a previous attempt was killed.
"""

from isotropy.compute import resolve_device
from isotropy.finetune.training import rule_run, run_and_save
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    run = rule_run(snakemake)
    run_and_save(
        snakemake.output.metrics,
        regulariser=snakemake.wildcards.regulariser,
        lam=snakemake.params.lam,
        **run,
    )
    record_step(snakemake, device=resolve_device(run["device"]), seeds=[run["seed"]])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
