"""The corpus of the geometry study's cluster analysis (Cai et al.): a text file or a WikiText
split, from the download of config ``geometry.clusters.corpus.source``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from isotropy.configuration.geometry import Corpus
from isotropy.io import decode_text
from isotropy.readers.registry import raw_file
from isotropy.sources import HUB_FILE

# A sentence ends at final punctuation followed by an upper-case start (nltk's punkt cannot be
# fetched offline, and sentence-sized contexts are all the analysis needs).
_SENTENCE_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[])")


def wikitext_sentences(lines: Iterable[str], max_sentences: int | None = None) -> list[str]:
    """Sentences of WikiText raw lines: headings (`` = Title = ``) and empty lines dropped."""
    sentences: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or (stripped.startswith("=") and stripped.endswith("=")):
            continue
        sentences.extend(_SENTENCE_BOUNDARY.split(stripped))
        if max_sentences and len(sentences) >= max_sentences:
            return sentences[:max_sentences]
    return sentences


def _corpus_lines(corpus: Corpus, raw_dir: Path) -> list[str]:
    """The raw lines of the corpus: of ``file`` (``format: lines``, line ends kept) or the rows
    of the WikiText split (``format: wikitext``)."""
    if corpus.format == "lines":
        path = raw_file(raw_dir, str(corpus.file))  # Corpus requires a file for format lines
        return decode_text(path.read_bytes(), "utf-8", str(path)).splitlines(keepends=True)
    return list(pd.read_parquet(raw_file(raw_dir, HUB_FILE))["text"].astype(str))


def read_corpus(corpus: Corpus, raw_dir: str | os.PathLike) -> list[str]:
    """The first ``max_sentences`` sentences of the corpus: its non-empty lines, or the WikiText
    split split into sentences."""
    lines = _corpus_lines(corpus, Path(raw_dir))
    max_sentences = corpus.max_sentences
    if corpus.format == "wikitext":
        sentences = wikitext_sentences(lines, max_sentences)
    else:
        sentences = [line.strip() for line in lines if line.strip()][: max_sentences or None]
    if not sentences:
        raise ValueError(f"the corpus in {raw_dir} yielded no sentence")
    return sentences


def read_corpus_text(corpus: Corpus, raw_dir: str | os.PathLike) -> str:
    """The corpus as one running text, for contiguous windows (Cai et al.'s code reads the file
    whole): the file as it is, or the WikiText rows, headings included, joined by newlines."""
    lines = _corpus_lines(corpus, Path(raw_dir))
    return ("" if corpus.format == "lines" else "\n").join(lines)
