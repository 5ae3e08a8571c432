"""Contextual token embeddings of every layer of one transformer on the geometry corpus (Cai et
al.)."""

from pathlib import Path

from isotropy.compute import resolve_device
from isotropy.configuration.geometry import Corpus
from isotropy.embeddings.hidden_states import (
    extract_token_embeddings,
    extract_window_embeddings,
    load_hidden_state_model,
)
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step
from isotropy.readers.corpus import read_corpus, read_corpus_text


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    device = resolve_device(params.device)
    raw_dir = Path(snakemake.input.corpus).parent
    # the corpus before the model: a corpus that cannot be read is refused at once
    corpus = Corpus.model_validate(params.corpus)
    windows = corpus.windows
    text = read_corpus_text(corpus, raw_dir) if windows else ""
    sentences = [] if windows else read_corpus(corpus, raw_dir)
    tokenizer, model = load_hidden_state_model(ModelSpec.from_record(params.model), device)
    if windows:  # Cai et al.'s protocol: contiguous windows, every position
        embeddings = extract_window_embeddings(
            text,
            tokenizer,
            model,
            window=windows,
            max_windows=corpus.max_windows,
            device=device,
        )
        read = {"windows": int(embeddings.sentence_index.max()) + 1}
    else:
        embeddings = extract_token_embeddings(
            sentences,
            tokenizer,
            model,
            device=device,
            batch_size=params.batch_size,
            max_length=params.max_length,
            max_per_type=params.max_per_type,
            max_tokens=params.max_tokens,
        )
        read = {"sentences": len(sentences)}
    embeddings.save(snakemake.output.embeddings)
    n_layers, n_tokens, dim = embeddings.layers.shape
    record_step(
        snakemake,
        device=device,
        extra={**read, "layers": n_layers, "tokens": n_tokens, "dim": dim},
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
