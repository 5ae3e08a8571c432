"""Corpus frequency of every token type, for Cai et al.'s token views (tokens coloured by
frequency): counted over the whole configured corpus as the model's tokenizer splits it, not
over the embedded instances, which are capped per type (``geometry.clusters.max_per_type``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import pandas as pd

from isotropy.embeddings.hidden_states import tokenize_batch

FREQUENCY_COLUMNS = ["token", "token_id", "count"]


def token_frequencies(
    sentences: Sequence[str], tokenizer, *, max_length: int, batch_size: int = 256
) -> pd.DataFrame:
    """Occurrences of every token type in ``sentences``, tokenized as the embedding step
    tokenizes them (truncated at ``max_length``, special tokens and padding left out): one row
    per type, the most frequent first (ties by token id)."""
    if not sentences:
        raise ValueError("no sentences to count tokens in")
    counts: Counter[int] = Counter()
    for start in range(0, len(sentences), batch_size):
        inputs, special = tokenize_batch(
            tokenizer, sentences[start : start + batch_size], max_length
        )
        keep = inputs["attention_mask"].bool() & ~special.bool()
        counts.update(inputs["input_ids"][keep].tolist())
    return _frequency_table(counts, tokenizer)


def window_frequencies(windows: Iterable[Sequence[int]], tokenizer) -> pd.DataFrame:
    """Occurrences of every token id in Cai et al.'s windows (every position, special tokens
    included, as the window protocol embeds them)."""
    counts: Counter[int] = Counter()
    for window in windows:
        counts.update(window)
    return _frequency_table(counts, tokenizer)


def _frequency_table(counts: Counter[int], tokenizer) -> pd.DataFrame:
    if not counts:
        raise ValueError("the corpus has no token to count")
    ids = sorted(counts, key=lambda i: (-counts[i], i))
    tokens = tokenizer.convert_ids_to_tokens(ids)
    return pd.DataFrame(
        {"token": tokens, "token_id": ids, "count": [counts[i] for i in ids]},
        columns=FREQUENCY_COLUMNS,
    )
