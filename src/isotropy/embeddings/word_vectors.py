"""Word2vec files (text or binary, optionally gzipped) read as gensim ``KeyedVectors``."""

from __future__ import annotations

import gzip
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def is_word2vec_binary(path: str | os.PathLike) -> bool:
    """Whether a word2vec file is binary: its first record after the header is not a word and
    ``dim`` decimal numbers."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        header = handle.readline()
        first = handle.readline(1 << 20)
    fields = header.split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise ValueError(
            f"{path}, line 1: expected a word2vec header '<count> <dim>', found {header[:80]!r}"
        )
    dim = int(fields[1])
    parts = first.split()
    if len(parts) == dim + 1:
        try:
            [float(x) for x in parts[-dim:]]
            return False
        except ValueError:
            pass
    return True


def load_word_vectors(path: str | os.PathLike, limit: int | None = None):
    """A word2vec file as gensim ``KeyedVectors``, its first (most frequent) ``limit`` words."""
    from gensim.models import KeyedVectors

    binary = is_word2vec_binary(path)
    log.info("loading word vectors from %s (%s)", path, "binary" if binary else "text")
    try:
        # "replace": a stray broken token in a large crawled vocabulary only fails its own lookup.
        return KeyedVectors.load_word2vec_format(
            str(path), binary=binary, limit=limit, unicode_errors="replace"
        )
    except (ValueError, EOFError) as error:
        raise ValueError(
            f"{path}: not a valid word2vec {'binary' if binary else 'text'} file ({error}); "
            "re-download its source"
        ) from error
