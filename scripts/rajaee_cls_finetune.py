"""Fine-tune one model on one task with or without the cluster-based method on the CLS states
(wildcard method: none or cluster) and one seed; write metrics.json. Rule finetune_cls of the
Rajaee CLS study (isotropy.istar.cls_method, the loop of isotropy.finetune.training).

The task's splits are the downloads of its sources (inputs train and validation). Resumes from
checkpoint.pt in the output folder when a previous attempt was killed.
"""

from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.finetune.settings import TrainingSettings
from isotropy.finetune.training import run_and_save, task_splits
from isotropy.istar.cls_method import cluster_method
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    wildcards = snakemake.wildcards
    settings = TrainingSettings.from_mapping(dict(snakemake.params.training))
    seed = int(wildcards.seed)
    method = (
        cluster_method(settings.cls_clusters, settings.cls_directions, seed)
        if wildcards.method == "cluster"
        else None
    )
    folders = (Path(snakemake.input[split]).parent for split in ("train", "validation"))
    run_and_save(
        snakemake.output.metrics,
        model_spec=ModelSpec.from_record(snakemake.params.model),
        task=wildcards.task,
        regulariser="none",
        lam=0.0,
        seed=seed,
        data=task_splits(wildcards.task, *folders, settings),
        settings=settings,
        device=snakemake.params.device,
        head_transform=method,
    )
    record_step(snakemake, device=resolve_device(snakemake.params.device), seeds=[seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
