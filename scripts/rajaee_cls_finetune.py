"""Fine-tune one model on one task without or with the cluster-based method on the CLS states
(wildcard method: none or cluster) and one seed; write metrics.json. Rule rajaee_cls_finetune
(isotropy.rajaee_cls.method), through the fine-tuning loop and inputs I-STAR's runs use
(isotropy.finetune.training.rule_run), resuming as they do.
"""

from isotropy.compute import resolve_device
from isotropy.configuration.studies import ClusterMethod
from isotropy.finetune.training import rule_run
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.rajaee_cls.method import run_and_save


def main(snakemake):
    configure_from_snakemake(snakemake)
    run = rule_run(snakemake)
    run_and_save(
        snakemake.output.metrics,
        method=snakemake.wildcards.method,
        cluster=ClusterMethod(**snakemake.params.cluster_method),
        **run,
    )
    record_step(snakemake, device=resolve_device(run["device"]), seeds=[run["seed"]])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
