"""Last-layer token states of an STS data set's sentences, [CLS]/[SEP] removed (Rajaee & Pilehvar
transform these and mean-pool afterwards).

An optional data set that cannot be had (SICK-R offline) gives a file marked unavailable.
"""

from isotropy import geometry
from isotropy.device import resolve_device
from isotropy.download import resolve_mirror
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    device = resolve_device(params.device)
    mirror = resolve_mirror(params.mirror)
    table = geometry.load_sts_dataset(snakemake.wildcards.sts, split=params.split, mirror=None if mirror is None else str(mirror))
    if table is None:
        geometry.StsEmbeddings.unavailable(snakemake.wildcards.sts, params.split).save(snakemake.output.embeddings)
        record_step(snakemake, device=device, extra={"available": False})
        return
    sentences, first, second = geometry.sts_sentence_index(table)
    tokenizer, model = geometry.load_hidden_state_model(geometry.ModelSpec(**params.model), device)
    tokens, offsets = geometry.token_states_by_sentence(sentences, tokenizer, model, device=device, batch_size=params.batch_size, max_length=params.max_length)
    embeddings = geometry.StsEmbeddings(tokens, first, second, table["score"].to_numpy(float), snakemake.wildcards.sts, params.split, offsets=offsets)
    embeddings.save(snakemake.output.embeddings)
    record_step(snakemake, device=device, extra={"available": True, "pairs": len(first), "sentences": len(sentences), "tokens": len(tokens)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
