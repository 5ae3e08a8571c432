"""NaN word vectors are named by their words when they are looked up (issue 34, case 13)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from isotropy.embeddings.texts import lookup_word_vectors


def test_nan_word_vectors_name_their_words_and_file(tmp_path):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3)
    vectors = np.array([[1, 0, 0], [np.nan, 1, 0], [0, np.inf, 1]], dtype=np.float32)
    kv.add_vectors(["dog", "cat", "eel"], vectors)
    table = pd.DataFrame({"text": ["dog", "cat", "eel"], "labels": [["a"], ["b"], ["a"]]})
    with pytest.raises(ValueError) as info:
        lookup_word_vectors(table, kv, tmp_path / "v.npy", tmp_path / "i.parquet", "w2v.bin")
    message = str(info.value)
    assert message.startswith("w2v.bin: the vectors of 2 word(s) hold NaN or infinite values")
    assert "'cat', 'eel'" in message and "re-fetch it" in message and "\n" not in message
    assert not (tmp_path / "v.npy").exists()
