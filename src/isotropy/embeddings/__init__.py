"""Turn texts into vectors: sentence transformers, static word vectors, and the hidden states of
a pretrained transformer.

Sentence transformers are run batch by batch and streamed to a memory-mapped ``.npy`` file,
so even the largest GLUE tasks (~500k unique sentences) never sit in memory at once; word
vectors are looked up, and words missing from the vocabulary are reported and left out (both in
:mod:`isotropy.embeddings.texts`). The geometry
studies read every layer's hidden states (:mod:`isotropy.embeddings.hidden_states`; torch is
imported only when a model runs).
"""

from isotropy.embeddings.hidden_states import (
    TokenEmbeddings,
    extract_token_embeddings,
    extract_window_embeddings,
    load_hidden_state_model,
    token_states_by_sentence,
)
from isotropy.embeddings.texts import (
    TEXT_COLUMNS,
    SentenceEncoderSpec,
    embed_sentences,
    encode_to_file,
    load_embeddings,
    load_sentence_encoder,
    lookup_word_vectors,
    unique_texts,
    write_index,
)
from isotropy.models import resolve_model_path

__all__ = [
    "TEXT_COLUMNS",
    "SentenceEncoderSpec",
    "TokenEmbeddings",
    "embed_sentences",
    "encode_to_file",
    "extract_token_embeddings",
    "extract_window_embeddings",
    "load_embeddings",
    "load_hidden_state_model",
    "load_sentence_encoder",
    "lookup_word_vectors",
    "resolve_model_path",
    "token_states_by_sentence",
    "unique_texts",
    "write_index",
]
