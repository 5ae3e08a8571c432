"""A derived vector set: an encoder's vectors rescaled, reduced, rotated, padded or embedded."""

import logging
import shutil

import numpy as np

from isotropy.configuration.optimisation import Derived
from isotropy.embeddings.texts import load_embeddings
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.sensitivity import derive_vectors, rescale_to, rms_centred_norm

log = logging.getLogger(__name__)


def main(snakemake):
    configure_from_snakemake(snakemake)
    spec = Derived.model_validate(snakemake.params.spec)  # its defaults filled in
    vectors, index = load_embeddings(snakemake.input.vectors, snakemake.input.index)
    norms = {spec.of: rms_centred_norm(vectors)}
    # rescale: the vectors themselves; pca with norm_of: the reduced vectors, then rescaled
    derived, basis = derive_vectors(vectors, spec)
    if spec.norm_of:
        # The target scale: the other set's RMS centred norm on the words both sets have.
        other, other_index = load_embeddings(
            snakemake.input.norm_vectors, snakemake.input.norm_index
        )
        derived, target = rescale_to(derived, index, other, other_index)
        norms[spec.norm_of] = target
    norms[snakemake.wildcards.vectors] = rms_centred_norm(derived)
    log.info("%s: %s -> %s; RMS centred norms %s", spec.of, vectors.shape, derived.shape, norms)
    with atomic_path(snakemake.output.vectors) as tmp:
        np.save(tmp, derived)
    with atomic_path(snakemake.output.basis) as tmp:  # empty: no original span to measure in
        np.save(tmp, np.zeros((0, 0)) if basis is None else basis)
    shutil.copyfile(snakemake.input.index, snakemake.output.index)
    record_step(snakemake, seeds=[spec.seed], extra={"rms_centred_norm": norms})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
