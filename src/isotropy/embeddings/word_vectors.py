"""Word2vec files (text or binary, optionally gzipped) read as gensim ``KeyedVectors``."""

from __future__ import annotations

import gzip
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def is_word2vec_binary(path: str | os.PathLike) -> bool:
    """Whether a word2vec file is binary, judged from its first vector record.

    The header (``<count> <dim>``) is text in both formats. In the text format the next line is a
    word followed by ``dim`` decimal numbers; in the binary format it is a word followed by raw
    float32 bytes, which never parse as ``dim`` numbers.
    """

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
    """Load a word2vec file (text or binary, optionally gzipped) as gensim ``KeyedVectors``.

    Binary or text is detected from the file itself; ``limit`` keeps the first (most frequent)
    ``limit`` words.
    """
    from gensim.models import KeyedVectors

    binary = is_word2vec_binary(path)
    log.info("loading word vectors from %s (%s)", path, "binary" if binary else "text")
    try:
        # "replace": a stray broken token in a large crawled vocabulary only fails its own lookup.
        return KeyedVectors.load_word2vec_format(
            str(path), binary=binary, limit=limit, unicode_errors="replace"
        )
    except (ValueError, EOFError) as error:
        where = "" if binary else _first_bad_word2vec_line(path, limit)
        raise ValueError(
            f"{path}{where}: not a valid word2vec {'binary' if binary else 'text'} file ({error}); "
            "re-download its source"
        ) from error


def _first_bad_word2vec_line(path: str | os.PathLike, limit: int | None) -> str:
    """', line N: what is wrong' for the first malformed line of a word2vec text file ('' if
    none)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        count, dim = (int(field) for field in handle.readline().split())
        expected = count if limit is None else min(count, limit)
        lineno = 1
        for lineno, line in enumerate(handle, 2):
            if lineno - 1 > expected:
                break
            parts = line.rstrip("\n").rstrip().split(" ")
            if len(parts) != dim + 1:
                return (
                    f", line {lineno}: expected a word and {dim} numbers, found {len(parts)} fields"
                )
            try:
                [float(x) for x in parts[1:]]
            except ValueError:
                return f", line {lineno}: a vector value is not a number"
        if lineno - 1 < expected:
            return (
                f", line {lineno}: the file ends after {lineno - 1} vectors, "
                f"but its header promises {count}"
            )
    return ""
