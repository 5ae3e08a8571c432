"""Embed every unique text of a prepared data set with a sentence transformer."""

import pandas as pd

from isotropy.compute import resolve_device
from isotropy.embeddings.texts import SentenceEncoderSpec, embed_sentences
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    device = resolve_device(snakemake.params.device)
    table = pd.read_parquet(snakemake.input.table)
    spec = SentenceEncoderSpec.from_params(snakemake.params.encoder)
    rows = embed_sentences(
        table, spec, str(device), snakemake.output.vectors, snakemake.output.index
    )
    record_step(snakemake, device=device, extra={"unique_texts": rows})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
