"""Look up every unique word of a prepared data set in a word-vector file."""

from pathlib import Path

import numpy as np
import pandas as pd

from isotropy.embeddings.texts import load_word_vectors, lookup_word_vectors
from isotropy.io import atomic_path
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.readers.registry import word_vectors_file
from isotropy.sensitivity import rms_centred_norm


def main(snakemake):
    configure_from_snakemake(snakemake)
    table = pd.read_parquet(snakemake.input.table)
    source = word_vectors_file(Path(snakemake.input.word_vectors).parent)
    vectors = load_word_vectors(source)
    rows, missing = lookup_word_vectors(
        table, vectors, snakemake.output.vectors, snakemake.output.index, source
    )
    with atomic_path(snakemake.output.missing) as tmp:
        tmp.write_text("".join(f"{word}\n" for word in missing))
    # The vectors' scale, which Adam's fixed step meets (docs/sensitivity.md): recorded so that a
    # prediction for the downloaded vectors (online: NLPL word2vec) can be checked.
    norm = rms_centred_norm(np.load(snakemake.output.vectors, mmap_mode="r"))
    record_step(
        snakemake,
        extra={"words_found": rows, "words_missing": len(missing), "rms_centred_norm": norm},
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
