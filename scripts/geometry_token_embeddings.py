"""Contextual token embeddings of every layer of one transformer on the geometry corpus (Cai et al.)."""

from pathlib import Path

from isotropy import geometry
from isotropy.device import resolve_device
from isotropy.logs import configure_from_snakemake
from isotropy.provenance import record_step
from isotropy.readers import read_corpus


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    device = resolve_device(params.device)
    sentences = read_corpus(params.corpus, Path(snakemake.input.corpus).parent)
    tokenizer, model = geometry.load_hidden_state_model(geometry.ModelSpec(**params.model), device)
    embeddings = geometry.extract_token_embeddings(
        sentences,
        tokenizer,
        model,
        device=device,
        batch_size=params.batch_size,
        max_length=params.max_length,
        max_per_type=params.max_per_type,
        max_tokens=params.max_tokens,
    )
    embeddings.save(snakemake.output.embeddings)
    n_layers, n_tokens, dim = embeddings.layers.shape
    record_step(
        snakemake,
        device=device,
        extra={"sentences": len(sentences), "layers": n_layers, "tokens": n_tokens, "dim": dim},
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
