"""Last-layer token states of an STS data set's sentences, [CLS]/[SEP] removed (Rajaee & Pilehvar
transform these and mean-pool afterwards).

An optional data set that cannot be had (SICK-R when the mirror lacks it: no input) gives a
file marked unavailable.
"""

import logging
from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.embeddings.hidden_states import load_hidden_state_model, token_states_by_sentence
from isotropy.geometry.sts import StsEmbeddings, sts_sentence_index
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step
from isotropy.readers.sts import read_sts


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    name = snakemake.wildcards.sts
    device = resolve_device(params.device)
    data = getattr(snakemake.input, "data", None)
    if data is None:
        logging.getLogger("isotropy").warning(
            "%s unavailable: the mirror does not hold it; skipping it", name
        )
        StsEmbeddings.unavailable(name, params.split).save(snakemake.output.embeddings)
        record_step(snakemake, device=device, extra={"available": False})
        return
    table = read_sts(name, params.split, Path(data).parent)
    sentences, first, second = sts_sentence_index(table)
    tokenizer, model = load_hidden_state_model(ModelSpec.from_record(params.model), device)
    tokens, offsets = token_states_by_sentence(
        sentences,
        tokenizer,
        model,
        device=device,
        batch_size=params.batch_size,
        max_length=params.max_length,
    )
    embeddings = StsEmbeddings(
        tokens, first, second, table["score"].to_numpy(float), name, params.split, offsets=offsets
    )
    embeddings.save(snakemake.output.embeddings)
    record_step(
        snakemake,
        device=device,
        extra={
            "available": True,
            "pairs": len(first),
            "sentences": len(sentences),
            "tokens": len(tokens),
        },
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
