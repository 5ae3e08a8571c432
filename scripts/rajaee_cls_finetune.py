"""Fine-tune one model on one task without or with the cluster-based method on the CLS states
(wildcard method: none or cluster) and one seed; write metrics.json. Rule rajaee_cls_finetune
(isotropy.rajaee_cls.method, the loop of isotropy.finetune.training).

The task's splits are the downloads of its sources (inputs train and validation). Resumes from
checkpoint.pt in the output folder when a previous attempt was killed.
"""

from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.finetune.settings import TrainingSettings
from isotropy.finetune.training import task_splits
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step
from isotropy.rajaee_cls.method import ClusterSettings, run_and_save


def main(snakemake):
    configure_from_snakemake(snakemake)
    wildcards = snakemake.wildcards
    settings = TrainingSettings.from_mapping(dict(snakemake.params.training))
    folders = (Path(snakemake.input[split]).parent for split in ("train", "validation"))
    run_and_save(
        snakemake.output.metrics,
        method=wildcards.method,
        cluster=ClusterSettings(**snakemake.params.cluster_method),
        seed=int(wildcards.seed),
        model_spec=ModelSpec.from_record(snakemake.params.model),
        task=wildcards.task,
        data=task_splits(wildcards.task, *folders, settings),
        settings=settings,
        device=snakemake.params.device,
    )
    record_step(
        snakemake, device=resolve_device(snakemake.params.device), seeds=[int(wildcards.seed)]
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
