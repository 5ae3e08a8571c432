"""Copy a file of the workflow into the results folder (rule ``copy_published_values``): the file
``params.source`` names, relative to the workflow's root, if it still has the sha256 the rule was
planned with (``params.sha256``), then its provenance record."""

import hashlib
from pathlib import Path

from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step, workflow_root_of


def main(snakemake):
    configure_from_snakemake(snakemake)
    source = workflow_root_of(snakemake) / snakemake.params.source
    content = source.read_bytes()
    if hashlib.sha256(content).hexdigest() != snakemake.params.sha256:
        raise SystemExit(f"{source} changed while the workflow ran: run it again")
    with atomic_path(snakemake.output.table) as tmp:
        Path(tmp).write_bytes(content)
    record_step(snakemake, extra={"copied_from": snakemake.params.source})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
