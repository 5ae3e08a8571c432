"""Fine-tune one model on one task with one regulariser, λ and seed; write metrics.json. Rule
finetune of the I-STAR study (isotropy.finetune.training).

The task's splits are the downloads of its sources (inputs train and validation). Resumes from
checkpoint.pt in the output folder when a previous attempt was killed.
"""

from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.finetune.settings import TrainingSettings
from isotropy.finetune.training import run_and_save, task_splits
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    wildcards = snakemake.wildcards
    settings = TrainingSettings.from_mapping(dict(snakemake.params.training))
    folders = (Path(snakemake.input[split]).parent for split in ("train", "validation"))
    run_and_save(
        snakemake.output.metrics,
        model_spec=ModelSpec.from_record(snakemake.params.model),
        task=wildcards.task,
        regulariser=wildcards.regulariser,
        lam=snakemake.params.lam,
        seed=int(wildcards.seed),
        data=task_splits(wildcards.task, *folders, settings),
        settings=settings,
        device=snakemake.params.device,
    )
    record_step(
        snakemake, device=resolve_device(snakemake.params.device), seeds=[int(wildcards.seed)]
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
