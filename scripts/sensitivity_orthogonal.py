"""An encoder's vectors mapped into more dimensions by a seeded random isometry (the control)."""

import logging
import shutil

import numpy as np

from isotropy.embeddings import load_embeddings
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.sensitivity import orthogonal_embedding

log = logging.getLogger(__name__)


def main(snakemake):
    configure_from_snakemake(snakemake)
    spec = snakemake.params.orthogonal
    vectors, _ = load_embeddings(snakemake.input.vectors, snakemake.input.index)
    embedded = orthogonal_embedding(vectors, spec["dim"], spec.get("seed", 0))
    log.info("%s: %s -> %s", spec["of"], vectors.shape, embedded.shape)
    with atomic_path(snakemake.output.vectors) as tmp:
        np.save(tmp, embedded)
    shutil.copyfile(snakemake.input.index, snakemake.output.index)
    record_step(snakemake, seeds=[spec.get("seed", 0)])


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
