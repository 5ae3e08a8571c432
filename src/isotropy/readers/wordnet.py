"""nltk's WordNet reader over a downloaded ``wordnet`` source (the POS and supersense stand-ins)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from isotropy.readers.tables import raw_file


def open_wordnet(raw_dir: str | os.PathLike):
    """nltk's WordNet reader on ``<raw_dir>/corpora/wordnet.zip``, whatever ``NLTK_DATA`` says.

    nltk only opens files under its data path (``nltk.data.path``), so ``raw_dir`` is added to it
    (the same as ``NLTK_DATA=<raw_dir>``).
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    raw_file(raw_dir, "corpora/wordnet.zip")
    root = str(Path(raw_dir).resolve())
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    pointer = nltk.data.find("corpora/wordnet.zip/wordnet/", paths=[root])
    with warnings.catch_warnings():
        # No Open Multilingual Wordnet on purpose: English lemmas only.
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return WordNetCorpusReader(pointer, None)
