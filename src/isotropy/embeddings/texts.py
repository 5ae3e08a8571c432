"""Vectors for the texts of a prepared data set, one row per unique text: a sentence
transformer's, streamed to a memory-mapped ``.npy`` file, or static word vectors looked up in a
word2vec file (text or binary, optionally gzipped) read as gensim ``KeyedVectors``."""

from __future__ import annotations

import gzip
import itertools
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isotropy.io import atomic_path, npy_problem, reserve
from isotropy.logs import ProgressLog
from isotropy.models import RECORD_KEYS, ModelSpec, load_pretrained

log = logging.getLogger(__name__)


def unique_texts(table: pd.DataFrame) -> list[str]:
    """All distinct texts of a prepared table (both sides of pairs), in first-appearance order."""
    columns = [table[column].tolist() for column in ("text", "text_pair") if column in table]
    return list(dict.fromkeys(itertools.chain.from_iterable(columns)))


@dataclass(frozen=True)
class SentenceEncoderSpec:
    """A sentence transformer: the pretrained model and how the encoder runs it."""

    model: ModelSpec
    batch_size: int = 64

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SentenceEncoderSpec:
        """The embedding rule's ``encoder`` parameter: the model's record and its settings."""
        settings = {k: v for k, v in params.items() if k not in RECORD_KEYS}
        return cls(model=ModelSpec.from_record(params), **settings)


def load_sentence_encoder(spec: SentenceEncoderSpec, device: str):
    """A sentence-transformers model on ``device``."""
    from sentence_transformers import SentenceTransformer

    return load_pretrained(spec.model, SentenceTransformer, device=device)


def encode_to_file(
    texts: Sequence[str],
    encode_batch,
    dim: int,
    vectors_path: str | os.PathLike,
    chunk_size: int = 2048,
) -> None:
    """Encode ``texts`` with ``encode_batch`` chunk by chunk into a float32 ``.npy`` file written
    atomically: only one chunk is in memory."""
    logged = ProgressLog(len(texts), "encoded texts")  # the time left, in the log
    with atomic_path(vectors_path) as tmp:
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(len(texts), dim))
        # the file's blocks taken now: a full disk is named here, not a SIGBUS later
        reserve(tmp, os.path.getsize(tmp), vectors_path)
        for start in range(0, len(texts), chunk_size):
            chunk = list(texts[start : start + chunk_size])
            vectors = np.asarray(encode_batch(chunk), dtype=np.float32)  # (len(chunk), dim)
            if not np.isfinite(vectors).all():
                raise ValueError(
                    f"encoder returned non-finite values for texts {start}..{start + len(chunk)}"
                )
            out[start : start + len(chunk)] = vectors
            logged.update(len(chunk))
        out.flush()
        del out


def embed_sentences(
    table: pd.DataFrame,
    spec: SentenceEncoderSpec,
    device: str,
    vectors_path: str | os.PathLike,
    index_path: str | os.PathLike,
) -> int:
    """Embed every unique text of ``table``; write vectors and their text index; the row count."""
    texts = unique_texts(table)
    model = load_sentence_encoder(spec, device)
    dim = model.get_embedding_dimension()
    log.info("encoding %d unique texts with %s on %s (dim %d)", len(texts), spec.model, device, dim)
    encode_batch = partial(
        model.encode, batch_size=spec.batch_size, convert_to_numpy=True, show_progress_bar=False
    )
    encode_to_file(texts, encode_batch, dim, vectors_path)
    write_index(texts, index_path)
    return len(texts)


def write_index(texts: Iterable[str], index_path: str | os.PathLike) -> None:
    """Write the text index: row i of the vectors file embeds ``text`` i."""
    with atomic_path(index_path) as tmp:
        pd.DataFrame({"text": list(texts)}).to_parquet(tmp, index=False)


def load_embeddings(
    vectors_path: str | os.PathLike, index_path: str | os.PathLike
) -> tuple[np.ndarray, pd.Series]:
    """Read vectors and index back, checking that they agree."""
    problem = npy_problem(vectors_path)
    if problem is not None:
        raise ValueError(
            f"{problem}; re-make it: delete it (rm -f {vectors_path}) and run the workflow again, "
            "which embeds the texts anew"
        )
    vectors = np.load(vectors_path, mmap_mode="r")
    index = pd.read_parquet(index_path)["text"]
    if vectors.ndim != 2 or vectors.shape[0] != len(index):
        raise ValueError(
            f"{vectors_path} has shape {vectors.shape} but {index_path} lists {len(index)} texts"
        )
    return vectors, index


def lookup_word_vectors(
    table: pd.DataFrame,
    keyed_vectors,
    vectors_path: str | os.PathLike,
    index_path: str | os.PathLike,
    source: str | os.PathLike = "the word-vector file",
) -> tuple[int, list[str]]:
    """Look up every unique text of ``table`` as a word (as given, lower-cased, then its most
    frequent tagged entry such as NLPL's ``dog_NOUN``); write the vectors found and their index;
    (rows written, words not found)."""
    texts = unique_texts(table)
    tagged = _tagged_entries(keyed_vectors)
    keys: dict[str, str] = {}  # word → the entry it is found under
    missing: list[str] = []
    by_tag = 0
    for word in texts:
        key = word if word in keyed_vectors.key_to_index else word.lower()
        if key not in keyed_vectors.key_to_index and key in tagged:
            key, by_tag = tagged[key], by_tag + 1
        if key in keyed_vectors.key_to_index:
            keys[word] = key
        else:
            missing.append(word)
    if not keys:
        raise ValueError(
            f"none of the {len(texts)} words is in the word-vector vocabulary; wrong vector file?"
        )
    if by_tag:
        log.info("%d words found through their most frequent tagged entry (word_TAG)", by_tag)
    if missing:
        dropped = (len(missing), len(texts), missing[:5])
        log.warning("%d of %d words are out of vocabulary and dropped (e.g. %s)", *dropped)
    found = list(keys)
    matrix = np.asarray(keyed_vectors[list(keys.values())], dtype=np.float32)  # gensim's vstack
    broken = [word for word, row in zip(found, matrix) if not np.isfinite(row).all()]
    if broken:  # named here: the metrics downstream can only count NaN, not name the words
        raise ValueError(
            f"{source}: the vectors of {len(broken)} word(s) hold NaN or infinite values "
            f"({', '.join(map(repr, broken[:5]))}{', ...' if len(broken) > 5 else ''}); "
            "the file is damaged: re-fetch it (snakemake --forcerun download_source)"
        )
    with atomic_path(vectors_path) as tmp:
        np.save(tmp, matrix)
    write_index(found, index_path)
    return len(found), missing


_TAGGED = re.compile(r"^(.+)_([A-Z]+)$")


def _tagged_entries(keyed_vectors) -> dict[str, str]:
    """Lower-cased word → its first (most frequent: word2vec files are in frequency order)
    ``word_TAG`` key, when the vocabulary is tagged ({} otherwise)."""
    keys = keyed_vectors.index_to_key
    if not any(_TAGGED.match(key) for key in keys[:100]):
        return {}
    # reversed: a word's first key is the last written, and wins
    return {m.group(1).lower(): key for key in reversed(keys) if (m := _TAGGED.match(key))}


def is_word2vec_binary(path: str | os.PathLike) -> bool:
    """Whether a word2vec file is binary: its first record is not a word and ``dim`` numbers."""
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
