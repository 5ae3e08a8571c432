"""Fine-tune one model on one task with one regulariser, λ and seed; write metrics.json. Rule
finetune (I-STAR study; wildcard regulariser) and rule finetune_cls (the cluster method on CLS;
wildcard method, none or cluster, λ = 0).

The task's splits are the downloads of its sources (inputs train and validation). Resumes from
checkpoint.pt in the output folder when a previous attempt was killed.
"""

from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.istar.study import TrainingSettings
from isotropy.istar.training import run_and_save
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step
from isotropy.readers.tasks import load_task_split


def main(snakemake):
    configure_from_snakemake(snakemake)
    wildcards = snakemake.wildcards
    settings = TrainingSettings.from_mapping(dict(snakemake.params.training))
    train, validation = (
        load_task_split(
            wildcards.task, split, Path(snakemake.input[split]).parent, subset, settings.subset_seed
        )
        for split, subset in (
            ("train", settings.train_subset),
            ("validation", settings.eval_subset),
        )
    )
    run_and_save(
        snakemake.output.metrics,
        model_spec=ModelSpec.from_record(snakemake.params.model),
        task=wildcards.task,
        regulariser=wildcards.get("regulariser", wildcards.get("method")),
        lam=snakemake.params.lam,
        seed=int(wildcards.seed),
        data=(train, validation),
        settings=settings,
        device=snakemake.params.device,
    )
    record_step(
        snakemake, device=resolve_device(snakemake.params.device), seeds=[int(wildcards.seed)]
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
