"""One held-out run of the extension study: MiniLM fine-tuned end to end with a linear head on a
training sample, scored on held-out sentences after every epoch until convergence."""

import pandas as pd

from isotropy.compute import resolve_device
from isotropy.extensions.heldout import Heldout, finetune
from isotropy.io import atomic_path, write_json
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    settings = Heldout.model_validate(snakemake.params.settings)
    seed = int(snakemake.wildcards.seed)
    table = pd.read_parquet(snakemake.input.table)
    spec = ModelSpec.from_record(snakemake.params.model)
    epochs, summary = finetune(spec, table, settings, seed, device)
    epochs.insert(0, "setup", snakemake.wildcards.dataset)
    with atomic_path(snakemake.output.epochs) as tmp:
        epochs.to_csv(tmp, index=False)
    write_json(snakemake.output.summary, {**summary, "dataset": snakemake.wildcards.dataset})
    record_step(snakemake, device=device, seeds=[seed])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
