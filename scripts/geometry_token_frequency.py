"""The corpus count of every token type as one transformer's tokenizer splits the geometry
corpus (Cai et al.'s token views colour tokens by it)."""

import logging
from pathlib import Path

from isotropy.configuration.geometry import Corpus
from isotropy.embeddings.hidden_states import load_tokenizer, text_windows
from isotropy.geometry.tables import write_table
from isotropy.geometry.tokens import token_frequencies, window_frequencies
from isotropy.logs import configure_from_snakemake
from isotropy.models import ModelSpec
from isotropy.provenance import record_step
from isotropy.readers.corpus import read_corpus, read_corpus_text


def main(snakemake):
    configure_from_snakemake(snakemake)
    params = snakemake.params
    raw_dir = Path(snakemake.input.corpus).parent
    corpus = Corpus.model_validate(params.corpus)
    tokenizer = load_tokenizer(ModelSpec.from_record(params.model))
    if corpus.windows:  # Cai et al.'s protocol: every position of every window
        windows = text_windows(
            read_corpus_text(corpus, raw_dir), tokenizer, corpus.windows, corpus.max_windows
        )
        table = window_frequencies(windows, tokenizer)
        read = {"windows": len(windows)}
    else:
        sentences = read_corpus(corpus, raw_dir)
        table = token_frequencies(sentences, tokenizer, max_length=params.max_length)
        read = {"sentences": len(sentences)}
    write_table(table, snakemake.output.table)
    extra = {**read, "types": len(table), "tokens": int(table["count"].sum())}
    logging.getLogger("isotropy.geometry").info("token frequencies: %s", extra)
    record_step(snakemake, extra=extra)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821
