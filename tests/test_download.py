"""Downloader tests: a real HTTP server on 127.0.0.1, real archives, and the real mirror."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from tiny_workflow import write_mirror_manifest

from isotropy import sources
from isotropy.embeddings import word_vectors
from isotropy.sources import (
    ArchiveError,
    ChecksumError,
    DownloadError,
    UnverifiedFileError,
    layouts,
)
from isotropy.workflow.config import with_sources

REPO_ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------
FAST = {"backoff": 0.01, "timeout": 5}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------
# download_file


def test_download_ok_records_sha256(server, tmp_path):
    data = b"hello world\n" * 1000
    server.files["/a.txt"] = data
    digest = sources.download_file(server.url("/a.txt"), tmp_path / "a.txt", sha(data), **FAST)
    assert digest == sha(data)
    assert (tmp_path / "a.txt").read_bytes() == data


def words_and_tarball() -> dict[str, bytes]:
    words = "".join(f"word{i}\n" for i in range(20_000)).encode()
    return {"/data/words.txt": words, "/rt-polaritydata.tar.gz": tar_gz({"a/b.txt": words})}


@pytest.mark.parametrize("path", ["/data/words.txt", "/rt-polaritydata.tar.gz"])
def test_gzip_encoded_response_saves_the_published_bytes(server, tmp_path, path):
    # A server that gzips the body when asked for gzip (GitHub's raw server does so for text) is
    # asked for the file's own bytes: the saved file is the published one, its sha256 that file's.
    original = words_and_tarball()[path]
    server.files[path] = original
    server.encode[path] = "negotiate"
    digest = sources.download_file(
        server.url(path), tmp_path / "f", sha(original), retries=0, **FAST
    )
    assert (tmp_path / "f").read_bytes() == original and digest == sha(original)
    assert server.accept_encodings == ["identity"] and list(tmp_path.iterdir()) == [tmp_path / "f"]


@pytest.mark.parametrize("path", ["/data/words.txt", "/rt-polaritydata.tar.gz"])
def test_a_body_gzipped_against_the_request_is_not_the_pinned_file(server, tmp_path, path):
    # One that gzips whatever it is asked sends other bytes: kept as sent, never inflated, so
    # the pin refuses them and nothing is kept.
    original = words_and_tarball()[path]
    server.files[path] = original
    server.encode[path] = "always"
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        sources.download_file(server.url(path), tmp_path / "f", sha(original), retries=0, **FAST)
    assert list(tmp_path.iterdir()) == []


def test_gz_file_merely_labelled_gzip_is_kept_as_sent(server, tmp_path):
    original = words_and_tarball()["/rt-polaritydata.tar.gz"]
    server.files["/rt-polaritydata.tar.gz"] = original
    server.encode["/rt-polaritydata.tar.gz"] = "label"
    sources.download_file(server.url("/rt-polaritydata.tar.gz"), tmp_path / "f", retries=0, **FAST)
    assert (tmp_path / "f").read_bytes() == original


def test_503_then_200_is_retried(server, tmp_path):
    data = b"payload"
    server.files["/f"] = data
    server.script["/f"] = [503, 503]
    digest = sources.download_file(server.url("/f"), tmp_path / "f", **FAST)
    assert digest == sha(data)
    assert server.requests == ["/f"] * 3


def test_connection_cut_mid_stream_is_retried(server, tmp_path):
    data = bytes(range(256)) * 64
    server.files["/big"] = data
    server.script["/big"] = ["truncate"]
    sources.download_file(server.url("/big"), tmp_path / "big", sha(data), **FAST)
    assert (tmp_path / "big").read_bytes() == data
    assert len(server.requests) == 2


def test_persistent_5xx_gives_up(server, tmp_path):
    server.files["/f"] = b"x"
    server.script["/f"] = [500] * 10
    with pytest.raises(DownloadError, match="failed after 3 attempts"):
        sources.download_file(server.url("/f"), tmp_path / "f", retries=2, **FAST)
    assert len(server.requests) == 3
    assert list(tmp_path.iterdir()) == []


def test_unreachable_source_is_named_and_the_mirror_suggested(tmp_path, monkeypatch):
    # Nothing listens on a port just released: every attempt is a ConnectionError.
    import socket

    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = {
        "name": "polarity",
        "kind": "polarity",
        "urls": [f"http://127.0.0.1:{port}/rt.tar.gz"],
        "sha256": [None],
        "mirror": None,
    }
    with pytest.raises(DownloadError) as info:
        sources.fetch_source(
            "polarity", params, tmp_path / "raw", retries=1, backoff=0.01, timeout=5
        )
    message = str(info.value)
    assert message.startswith("source 'polarity': download of http://127.0.0.1:")
    assert "failed after 2 attempts: ConnectionError" in message
    assert "set ISOTROPY_MIRROR to a folder laid out like shared/mirror" in message
    assert list((tmp_path / "raw").iterdir()) == []  # no half-fetched source left behind


def test_404_fails_at_once(server, tmp_path):
    with pytest.raises(DownloadError, match=r"HTTP 404.*fix 'sources'") as info:
        sources.download_file(server.url("/missing.zip"), tmp_path / "m.zip", **FAST)
    assert "/missing.zip" in str(info.value)
    assert server.requests == ["/missing.zip"]
    assert list(tmp_path.iterdir()) == []


def test_checksum_mismatch_leaves_no_file(server, tmp_path):
    server.files["/f"] = b"actual content"
    with pytest.raises(ChecksumError, match="sha256 mismatch") as info:
        sources.download_file(server.url("/f"), tmp_path / "f", sha(b"expected content"), **FAST)
    assert sha(b"actual content") in str(info.value)
    assert list(tmp_path.iterdir()) == []  # neither the file nor a partial temp file


def test_file_url_is_copied_with_checks(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"abc")
    assert sources.download_file(src.as_uri(), tmp_path / "out" / "dst.bin", sha(b"abc")) == sha(
        b"abc"
    )
    with pytest.raises(ChecksumError):
        sources.download_file(src.as_uri(), tmp_path / "out" / "bad.bin", sha(b"xyz"))
    assert not (tmp_path / "out" / "bad.bin").exists()


# ---------------------------------------------------------------------------------------------
# Whole sources from URLs: the raw layout is the mirror's


def tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def params(name: str, urls: list[str], kind: str | None = None, pins=None) -> dict:
    return {
        "name": name,
        "kind": kind or sources.source_kind(name),
        "urls": urls,
        "sha256": pins or [None] * len(urls),
        "mirror_files": [],
        "mirror": None,
    }


def mirror_params(name: str, config: dict, mirror: Path) -> dict:
    p = sources.source_params({**config, "mirror": None}, name)
    p["mirror"] = str(mirror)
    return p


@pytest.fixture(scope="module")
def config() -> dict:
    return with_sources(yaml.safe_load((REPO_ROOT / "config.yaml").read_text()))


def test_polarity_tarball_latin1_matches_mirror_utf8(server, tmp_path, mirror_root, config):
    """The Cornell tarball (Latin-1 with Windows-1252 punctuation) and the mirror (UTF-8) end as
    the same UTF-8 raw files."""
    members = {
        f"rt-polaritydata/{name}": (mirror_root / "polarity" / name)
        .read_text("utf-8")
        .encode("cp1252")
        for name in ("rt-polarity.pos", "rt-polarity.neg")
    }
    pos_bytes = members["rt-polaritydata/rt-polarity.pos"]
    assert b"\xe9" in pos_bytes and b"\x97" in pos_bytes  # é (Latin-1) and — (cp1252 only)
    tarball = tar_gz(members)
    server.files["/rt-polaritydata.tar.gz"] = tarball
    from_url = sources.fetch_source(
        "polarity",
        params("polarity", [server.url("/rt-polaritydata.tar.gz")], pins=[sha(tarball)]),
        tmp_path / "url",
        **FAST,
    )
    from_mirror = sources.fetch_source(
        "polarity", mirror_params("polarity", config, mirror_root), tmp_path / "mirror"
    )
    for name in ("rt-polarity.pos", "rt-polarity.neg"):
        assert (tmp_path / "url" / name).read_bytes() == (tmp_path / "mirror" / name).read_bytes()
    assert [f["sha256"] for f in from_url["files"]] == [f["sha256"] for f in from_mirror["files"]]
    assert from_url["inputs"] == [
        {
            "url": server.url("/rt-polaritydata.tar.gz"),
            "sha256": sha(tarball),
            "bytes": len(tarball),
            "pinned": True,
            "pinned_by": ["config"],
            "checked_against": ["sha256"],
            "trust": sources.TRUST_PUBLISHED,
        }
    ]
    manifest = json.loads((tmp_path / "url" / "manifest.json").read_text())
    assert manifest["origin"] == "url" and from_mirror["origin"] == "mirror"
    assert all(entry["pinned"] for entry in from_mirror["inputs"])  # checked against MANIFEST.tsv


def test_glue_zip_skips_macos_debris(server, tmp_path):
    train = b"sentence\tlabel\nok film \t1\n"
    archive = zip_bytes(
        {"SST-2/train.tsv": train, "SST-2/dev.tsv": b"x", "__MACOSX/SST-2/._train.tsv": b"junk"}
    )
    server.files["/SST-2.zip"] = archive
    manifest = sources.fetch_source(
        "glue_sst2", params("glue_sst2", [server.url("/SST-2.zip")]), tmp_path / "raw", **FAST
    )
    assert [f["path"] for f in manifest["files"]] == ["train.tsv"]
    assert (tmp_path / "raw" / "train.tsv").read_bytes() == train


def test_mrpc_rebuilt_like_glue_equals_mirror_train(server, tmp_path, mirror_root):
    """Microsoft's pairs minus GLUE's dev ids give exactly GLUE's train.tsv (the mirror's copy)."""
    train_lines = (mirror_root / "glue/MRPC/train.tsv").read_text("utf-8").splitlines()
    dev_lines = (mirror_root / "glue/MRPC/dev.tsv").read_text("utf-8").splitlines()
    # msr_paraphrase_train.txt holds train and dev pairs together, behind a BOM and the header.
    msr = (
        "\ufeff"
        + "\n".join(train_lines[:1] + dev_lines[1:200] + train_lines[1:] + dev_lines[200:])
        + "\n"
    ).encode()
    dev_ids = "".join(
        f"{row.split(chr(9))[1]}\t{row.split(chr(9))[2]}\n" for row in dev_lines[1:]
    ).encode()
    server.files["/msr_paraphrase_train.txt"] = msr
    server.files["/mrpc_dev_ids.tsv"] = dev_ids
    urls = [server.url("/msr_paraphrase_train.txt"), server.url("/mrpc_dev_ids.tsv")]
    sources.fetch_source("glue_mrpc", params("glue_mrpc", urls), tmp_path / "raw", **FAST)
    rebuilt = (tmp_path / "raw/train.tsv").read_text("utf-8").splitlines()
    assert rebuilt == train_lines
    assert len(rebuilt) - 1 == 3668


def test_failed_fetch_leaves_nothing(server, tmp_path):
    server.files["/SST-2.zip"] = zip_bytes({"SST-2/train.tsv": b"sentence\tlabel\n"})
    with pytest.raises(ChecksumError):
        sources.fetch_source(
            "glue_sst2",
            params("glue_sst2", [server.url("/SST-2.zip")], pins=[sha(b"other")]),
            tmp_path / "raw",
            **FAST,
        )
    assert list((tmp_path / "raw").iterdir()) == []


def test_archive_without_expected_member_is_an_error(server, tmp_path):
    server.files["/RTE.zip"] = zip_bytes({"RTE/dev.tsv": b"x"})
    with pytest.raises(ValueError, match="none of the expected files"):
        sources.fetch_source(
            "glue_rte", params("glue_rte", [server.url("/RTE.zip")]), tmp_path / "raw", **FAST
        )


def small_vectors():
    from gensim.models import KeyedVectors

    vectors = KeyedVectors(vector_size=4)
    words = ["the", "dog", "run", "quickly"]
    vectors.add_vectors(words, np.arange(16, dtype=np.float32).reshape(4, 4) / 7)
    return vectors, words


def test_nlpl_zip_gives_model_bin_and_loads(server, tmp_path):
    vectors, words = small_vectors()
    vectors.save_word2vec_format(str(tmp_path / "model.bin"), binary=True)
    archive = zip_bytes(
        {"meta.json": b"{}", "model.bin": (tmp_path / "model.bin").read_bytes(), "README": b"x"}
    )
    server.files["/222.zip"] = archive
    sources.fetch_source(
        "word2vec",
        params("word2vec", [server.url("/222.zip")], kind="word_vectors"),
        tmp_path / "raw",
        **FAST,
    )
    path = sources.word_vectors_file(tmp_path / "raw")
    assert path.name == "model.bin"
    assert word_vectors.is_word2vec_binary(path)
    loaded = word_vectors.load_word_vectors(path)
    assert loaded.index_to_key == words
    np.testing.assert_allclose(loaded["dog"], vectors["dog"])


def test_word2vec_text_gz_detected_as_text(tmp_path):
    vectors, words = small_vectors()
    vectors.save_word2vec_format(str(tmp_path / "v.txt"), binary=False)
    with gzip.open(tmp_path / "v.txt.gz", "wb") as handle:
        handle.write((tmp_path / "v.txt").read_bytes())
    assert not word_vectors.is_word2vec_binary(tmp_path / "v.txt.gz")
    assert word_vectors.load_word_vectors(tmp_path / "v.txt.gz").index_to_key == words
    (tmp_path / "bad.txt").write_text("not a header\n")
    with pytest.raises(ValueError, match="line 1: expected a word2vec header"):
        word_vectors.is_word2vec_binary(tmp_path / "bad.txt")


def test_malformed_word2vec_text_names_the_file_and_gensims_reason(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("3 4\nthe 0.1 0.2 0.3 0.4\nof 0.1 0.2 x 0.4\nand 0.1 0.2 0.3 0.4\n")
    with pytest.raises(ValueError, match=r"v.txt: not a valid word2vec text file .*'x'"):
        word_vectors.load_word_vectors(path)
    path.write_text("3 4\nthe 0.1 0.2 0.3 0.4\nof 0.1 0.2 0.3\nand 0.1 0.2 0.3 0.4\n")
    with pytest.raises(ValueError, match=r"v.txt: not a valid word2vec text file .*shape"):
        word_vectors.load_word_vectors(path)
    path.write_text("4 4\nthe 0.1 0.2 0.3 0.4\nof 0.1 0.2 0.3 0.4\n")
    with pytest.raises(ValueError, match=r"v.txt: not a valid word2vec text file .*end of input"):
        word_vectors.load_word_vectors(path)
    assert (
        len(word_vectors.load_word_vectors(path, limit=2)) == 2
    )  # what a limit does not reach is not read


def test_mirror_word_vectors_are_glove_text(mirror_root, config, tmp_path):
    sources.fetch_source(
        "word2vec", mirror_params("word2vec", config, mirror_root), tmp_path / "raw"
    )
    path = sources.word_vectors_file(tmp_path / "raw")
    assert not word_vectors.is_word2vec_binary(path)
    vectors = word_vectors.load_word_vectors(path, limit=100)
    assert vectors.vector_size == 50 and vectors.index_to_key[0] == "the"


# ---------------------------------------------------------------------------------------------
# Mirror resolution and availability


def test_resolve_mirror_env_overrides_config(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    assert sources.resolve_mirror(None) is None
    assert sources.resolve_mirror(str(tmp_path / "a")) == tmp_path / "a"
    monkeypatch.setenv(sources.MIRROR_ENV, str(tmp_path / "b"))
    assert sources.resolve_mirror(str(tmp_path / "a")) == tmp_path / "b"
    assert sources.resolve_mirror(None) == tmp_path / "b"
    monkeypatch.setenv(sources.MIRROR_ENV, str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match=f"{sources.MIRROR_ENV}"):
        sources.resolve_mirror(None)


def test_source_params_follow_config(config, monkeypatch, mirror_root):
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    p = sources.source_params(config, "glue_mrpc")
    assert (
        p["kind"] == "glue"
        and len(p["urls"]) == 2
        and p["sha256"] == config["sources"]["glue_mrpc"]["sha256"]
        and p["bytes"] == [1047044, 6222]
        and p["mirror"] is None
    )
    monkeypatch.setenv(sources.MIRROR_ENV, str(mirror_root))
    assert sources.source_params(config, "polarity")["mirror"] == str(mirror_root)
    assert sources.source_outputs("polarity") == ["resources/raw/polarity/manifest.json"]
    with pytest.raises(ValueError, match="not in config"):
        sources.source_params(config, "nope")


def test_glue_task_missing_from_mirror_is_reported(mirror_root, config, tmp_path, monkeypatch):
    """A needed file the mirror lacks fails its download job, which names it (no parse-time
    check)."""
    monkeypatch.setenv(sources.MIRROR_ENV, str(mirror_root))
    for name, rel in (("glue_qqp", "glue/QQP/train.tsv"), ("glue_mnli", "glue/MNLI/train.tsv")):
        with pytest.raises(FileNotFoundError) as info:
            sources.fetch_source(
                name, sources.source_params(config, name), tmp_path / "raw", config=config
            )
        assert f"source {name!r} is unavailable: the mirror {mirror_root} lacks {rel}" in str(
            info.value
        )
        assert list((tmp_path / "raw").iterdir()) == []


def test_a_plain_source_needs_no_layout_code(tmp_path, monkeypatch):
    """kind files: a data set's files are kept as they are, under their own names (a missing
    file is named before any copy)."""
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy/a.tsv").write_text("x\ty\n")
    (mirror / "toy/b.txt").write_text("words\n")
    write_mirror_manifest(mirror)
    config = {
        "mirror": str(mirror),
        "sources": {
            "toy": {
                "kind": "files",
                "url": ["https://example.org/a.tsv", "https://example.org/b.txt"],
                "mirror": ["toy/a.tsv", "toy/b.txt"],
            }
        },
    }
    manifest = sources.fetch_source("toy", sources.source_params(config, "toy"), tmp_path / "raw")
    assert [f["path"] for f in manifest["files"]] == ["a.tsv", "b.txt"]
    assert (tmp_path / "raw/a.tsv").read_text() == "x\ty\n"
    (mirror / "toy/b.txt").unlink()
    with pytest.raises(FileNotFoundError) as run_time:
        sources.fetch_source(
            "toy", sources.source_params(config, "toy"), tmp_path / "raw2", config=config
        )
    assert "lacks toy/b.txt" in str(run_time.value)
    assert not (tmp_path / "raw2/a.tsv").exists()


def test_mirror_file_checked_against_mirror_manifest(tmp_path, config):
    mirror = tmp_path / "mirror"
    (mirror / "supersense").mkdir(parents=True)
    (mirror / "supersense/words.txt").write_text("dog\ncat\n")
    (mirror / "MANIFEST.tsv").write_text(
        f"path\tbytes\tsha256\nsupersense/words.txt\t8\t{sha(b'other')}\n"
    )
    with pytest.raises(ChecksumError, match="MANIFEST.tsv"):
        sources.fetch_source(
            "supersense_words", mirror_params("supersense_words", config, mirror), tmp_path / "raw"
        )
    assert not (tmp_path / "raw" / "words.txt").exists()


def test_mirror_polarity_wrong_encoding_names_file_and_line(tmp_path, config):
    mirror = tmp_path / "mirror"
    (mirror / "polarity").mkdir(parents=True)
    (mirror / "polarity/rt-polarity.pos").write_bytes(
        "fine\nalso fine\nna\u00efve\n".encode("latin-1")
    )
    (mirror / "polarity/rt-polarity.neg").write_text("bad\n")
    write_mirror_manifest(mirror)
    with pytest.raises(ValueError, match=r"polarity/rt-polarity.pos, line 3: .* not valid utf-8"):
        sources.fetch_source(
            "polarity", mirror_params("polarity", config, mirror), tmp_path / "raw"
        )


def test_refetch_replaces_previous_files(tmp_path, mirror_root, config):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "stale.json").write_text("[]")
    sources.fetch_source("codwoe", mirror_params("codwoe", config, mirror_root), raw)
    assert sorted(p.name for p in raw.iterdir()) == ["en.trial.complete.json", "manifest.json"]
    assert sources.source_files(raw) == [raw / "en.trial.complete.json"]


# ---------------------------------------------------------------------------------------------
# Bad input never gets through (issue 17): pins, unverified mirrors, confinement, archive bombs


def small_mirror(tmp_path: Path, manifest: bool = True) -> Path:
    mirror = tmp_path / "mirror"
    (mirror / "supersense").mkdir(parents=True)
    (mirror / "supersense/words.txt").write_bytes(b"dog\ncat\n")
    if manifest:
        write_mirror_manifest(mirror)
    return mirror


def test_config_pin_is_enforced_on_mirror_reads(tmp_path, config):
    mirror = small_mirror(tmp_path)
    p = mirror_params("supersense_words", config, mirror)
    p["sha256"] = [sha(b"something else")]
    with pytest.raises(ChecksumError) as info:
        sources.fetch_source("supersense_words", p, tmp_path / "raw")
    message = str(info.value)
    assert "(config sources.supersense_words.sha256)" in message and sha(b"dog\ncat\n") in message
    assert (
        "fix sources.supersense_words.sha256 in the config only if this file is known to be right"
        in message
    )
    assert list((tmp_path / "raw").iterdir()) == []
    p["sha256"] = [sha(b"dog\ncat\n")]
    manifest = sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert manifest["inputs"][0]["pinned"] is True
    assert manifest["inputs"][0]["pinned_by"] == ["MANIFEST.tsv", "config"]


@pytest.mark.parametrize(
    "row",
    [
        "supersense/words.txt\t8",  # cut short before its sha256 (issue 26, case 1)
        "supersense/words.txt\t\t" + "0" * 64,  # no byte count
        "supersense/words.txt\t8\tnot-a-digest",
        "supersense/words.txt\teight\t" + "0" * 64,
    ],
)
def test_mirror_manifest_row_without_sha256_and_bytes_is_an_error_naming_the_line(
    tmp_path, config, row
):
    mirror = small_mirror(tmp_path, manifest=False)
    (mirror / "MANIFEST.tsv").write_text(f"path\tbytes\tsha256\n\n{row}\n")
    (mirror / "supersense/words.txt").write_bytes(b"dog\ncow\n")  # and the file edited
    with pytest.raises(UnverifiedFileError) as info:
        sources.fetch_source(
            "supersense_words", mirror_params("supersense_words", config, mirror), tmp_path / "raw"
        )
    message = str(info.value)
    assert f"{mirror / 'MANIFEST.tsv'} line 3: row 'supersense/words.txt'" in message
    assert "64-hex-digit sha256" in message
    assert list((tmp_path / "raw").iterdir()) == []


def test_mirror_file_of_another_size_is_refused_even_with_its_hash(tmp_path, config):
    mirror = small_mirror(tmp_path, manifest=False)
    digest = sha(b"dog\ncat\n")
    (mirror / "MANIFEST.tsv").write_text(
        f"path\tbytes\tsha256\nsupersense/words.txt\t9\t{digest}\n"
    )
    with pytest.raises(ChecksumError, match=r"size mismatch .*: pinned 9 bytes, got 8"):
        sources.fetch_source(
            "supersense_words", mirror_params("supersense_words", config, mirror), tmp_path / "raw"
        )
    assert list((tmp_path / "raw").iterdir()) == []


def test_pinned_by_names_only_what_was_compared(tmp_path, config):
    mirror = small_mirror(tmp_path)
    manifest = sources.fetch_source(
        "supersense_words",
        mirror_params("supersense_words", unpinned_words(config), mirror),
        tmp_path / "raw",
    )
    assert manifest["inputs"][0]["pinned_by"] == ["MANIFEST.tsv"]


def test_mirror_manifest_mismatch_does_not_blame_the_config(tmp_path, config):
    mirror = small_mirror(tmp_path)
    (mirror / "supersense/words.txt").write_bytes(
        b"dog\ncow\n"
    )  # edited after MANIFEST.tsv was written
    with pytest.raises(ChecksumError) as info:
        sources.fetch_source(
            "supersense_words", mirror_params("supersense_words", config, mirror), tmp_path / "raw"
        )
    message = str(info.value)
    assert (
        "(its MANIFEST.tsv entry)" in message and "restore it from the original source" in message
    )
    assert "config" not in message
    assert list((tmp_path / "raw").iterdir()) == []


def test_config_pin_of_a_file_the_mirror_lacks_pins_only_the_download(tmp_path, config):
    # The URL's file (an archive, say) is not in the mirror: its pin cannot check the mirror's
    # copies, so MANIFEST.tsv must (issue 35: every URL source is pinned, mirrors still work).
    mirror = small_mirror(tmp_path)
    p = mirror_params("supersense_words", config, mirror)
    p["urls"] = ["https://example.org/words.tar.gz"]
    p["sha256"] = [sha(b"the tarball")]
    manifest = sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert manifest["inputs"][0]["pinned_by"] == ["MANIFEST.tsv"]
    (mirror / "MANIFEST.tsv").unlink()
    with pytest.raises(UnverifiedFileError, match="has no MANIFEST.tsv"):
        sources.fetch_source("supersense_words", p, tmp_path / "raw2")
    assert list((tmp_path / "raw2").iterdir()) == []


def unpinned_words(config: dict) -> dict:
    """``config`` with supersense_words unpinned: a mirror file only MANIFEST.tsv could check."""
    sources = {**config["sources"]}
    sources["supersense_words"] = {**sources["supersense_words"], "sha256": None}
    return {**config, "sources": sources}


def test_mirror_without_manifest_is_refused(tmp_path, config):
    config = unpinned_words(config)
    mirror = small_mirror(tmp_path, manifest=False)
    p = mirror_params("supersense_words", config, mirror)
    with pytest.raises(UnverifiedFileError) as info:
        sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert str(info.value) == (
        f"mirror file {mirror / 'supersense/words.txt'} cannot be checked ({mirror} has no "
        "MANIFEST.tsv) and "
        "nothing was kept; add its path and sha256 to the mirror's MANIFEST.tsv"
    )
    assert list((tmp_path / "raw").iterdir()) == []
    # A MANIFEST.tsv that does not list the file is no better.
    (mirror / "MANIFEST.tsv").write_text("path\tbytes\tsha256\n")
    with pytest.raises(UnverifiedFileError, match="MANIFEST.tsv does not list it"):
        sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert list((tmp_path / "raw").iterdir()) == []


def test_unverifiable_mirror_files_stop_the_download_job(tmp_path, config, monkeypatch):
    config = unpinned_words(config)
    mirror = small_mirror(tmp_path, manifest=False)
    monkeypatch.setenv(sources.MIRROR_ENV, str(mirror))
    params = sources.source_params(config, "supersense_words")
    with pytest.raises(
        UnverifiedFileError,
        match=r"supersense/words.txt cannot be checked \(.* has no MANIFEST.tsv\)",
    ):
        sources.fetch_source("supersense_words", params, tmp_path / "raw")
    write_mirror_manifest(mirror)
    sources.fetch_source("supersense_words", params, tmp_path / "raw")


def test_url_ending_in_dot_dot_is_named(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"URL 'http://127.0.0.1:9/data/%2e%2e' ends in '..' once decoded, which is "
        r"not a file name; give the address of the file itself",
    ):
        sources.fetch_source(
            "supersense_words",
            params("supersense_words", ["http://127.0.0.1:9/data/%2e%2e"]),
            tmp_path / "raw",
            **FAST,
        )
    assert list((tmp_path / "raw").iterdir()) == []


def fetch_glue_archive(server, tmp_path, archive: bytes, suffix: str = "zip", **limits) -> dict:
    server.files[f"/SST-2.{suffix}"] = archive
    p = {**params("glue_sst2", [server.url(f"/SST-2.{suffix}")]), **limits}
    return sources.fetch_source("glue_sst2", p, tmp_path / "raw", **FAST)


def test_zip_bomb_is_refused_by_unpacked_size(server, tmp_path):
    archive = zip_deflated({"SST-2/train.tsv": b"sentence\tlabel\n" + b"0" * (8 << 20)})
    assert len(archive) < 64 << 10  # 8 MiB that compress to a few kB
    with pytest.raises(ArchiveError) as info:
        fetch_glue_archive(server, tmp_path, archive, max_extracted_bytes=1 << 20)
    assert str(info.value) == (
        "archive SST-2.zip unpacks to more than 1048576 bytes (at member 'SST-2/train.tsv'), which "
        "looks like a "
        "decompression bomb; check the source, or raise downloads.max_extracted_bytes in the "
        "config if it is known "
        "to be right"
    )
    assert list((tmp_path / "raw").iterdir()) == []
    assert (
        fetch_glue_archive(server, tmp_path, archive, max_extracted_bytes=16 << 20)["files"][0][
            "path"
        ]
        == "train.tsv"
    )


def test_size_is_counted_as_read_not_as_declared(server, tmp_path):
    """A tar header may understate its member; the bytes actually read are what count."""
    item = sources.Fetched("x.tar", tmp_path / "x.tar", max_bytes=100, max_members=10)
    (tmp_path / "x.tar").write_bytes(tar_gz({"train.tsv": b"a" * 500}))
    reader = io.BytesIO(b"a" * 500)  # declares 10 bytes, holds 500
    with pytest.raises(ArchiveError, match="more than 100 bytes"):
        layouts._write_member(item, "train.tsv", 10, reader, tmp_path / "train.tsv", 100)


def test_archive_with_too_many_members_is_refused(server, tmp_path):
    members = {f"SST-2/junk{i}.txt": b"" for i in range(50)} | {
        "SST-2/train.tsv": b"sentence\tlabel\nok\t1\n"
    }
    for suffix, archive in (("zip", zip_bytes(members)), ("tar.gz", tar_gz(members))):
        with pytest.raises(
            ArchiveError,
            match=rf"archive SST-2.{suffix} holds more than 20 members, which looks like an "
            r"archive bomb; check the source, or raise downloads.max_archive_members",
        ):
            fetch_glue_archive(server, tmp_path, archive, suffix, max_archive_members=20)
        assert list((tmp_path / "raw").iterdir()) == []


def zip_deflated(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def tar_with(special: tarfile.TarInfo) -> bytes:
    """A GLUE-like tarball holding a good train.tsv and one crafted member."""
    buffer = io.BytesIO()
    good = b"sentence\tlabel\nok\t1\n"
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("SST-2/train.tsv")
        info.size = len(good)
        archive.addfile(info, io.BytesIO(good))
        payload = b"escaped\n" if special.isfile() else b""
        special.size = len(payload)
        archive.addfile(special, io.BytesIO(payload))
    return buffer.getvalue()


def crafted(name: str, kind: bytes = tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    "member",
    [
        crafted("../../escaped.txt"),
        crafted("/tmp/escaped-absolute.txt"),
        crafted("SST-2/link", tarfile.SYMTYPE, "/etc/passwd"),
        crafted("SST-2/up", tarfile.SYMTYPE, "../../.."),
        crafted("SST-2/hard", tarfile.LNKTYPE, "../../outside.txt"),
    ],
    ids=["dotdot", "absolute", "symlink-absolute", "symlink-up", "hardlink-outside"],
)
def test_crafted_tar_members_are_refused_and_write_nothing(server, tmp_path, member):
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(
        ArchiveError, match=rf"archive SST-2.tar.gz: member '{re.escape(member.name)}' "
    ):
        fetch_glue_archive(server, tmp_path, tar_with(member), "tar.gz")
    assert list((tmp_path / "raw").iterdir()) == []
    assert sorted(p for p in tmp_path.rglob("*")) == before + [tmp_path / "raw"]
    assert not Path("/tmp/escaped-absolute.txt").exists()


@pytest.mark.parametrize("name", ["../../escaped.txt", "/tmp/escaped-absolute.txt"])
def test_crafted_zip_members_are_refused(server, tmp_path, name):
    archive = zip_bytes({"SST-2/train.tsv": b"sentence\tlabel\nok\t1\n", name: b"escaped\n"})
    with pytest.raises(
        ArchiveError, match=rf"member '{re.escape(name)}' would unpack outside its folder"
    ):
        fetch_glue_archive(server, tmp_path, archive)
    assert list((tmp_path / "raw").iterdir()) == []
    assert not (tmp_path.parent / "escaped.txt").exists()


def sst5_hub_config(hub: dict) -> dict:
    """A configuration whose one source is SST-5's training split on the hub."""
    url = "https://huggingface.co/datasets/SetFit/sst5"
    return {"sources": {"hf_sst5_train": {"kind": "hub", "url": url, "hub": hub}}}


def test_hub_source_is_downloaded_as_parquet(tmp_path, monkeypatch):
    import datasets

    fake = datasets.Dataset.from_dict({"text": ["a fine film", "dull"], "label": [4, 0]})
    calls = []

    def load_dataset(*args, **kwargs):
        calls.append((args, kwargs))
        return fake

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.delenv("ISOTROPY_MIRROR", raising=False)
    hub = {
        "path": "SetFit/sst5",
        "split": "train",
        "revision": "e51bdcd8cd3a30da231967c1a249ba59361279a3",
    }
    config = sst5_hub_config(hub)
    params = sources.source_params(config, "hf_sst5_train")
    manifest = sources.fetch_source("hf_sst5_train", params, tmp_path / "raw")
    assert calls == [(("SetFit/sst5",), {"split": "train", "revision": hub["revision"]})]
    assert manifest["inputs"][0]["revision"] == hub["revision"]
    assert pd.read_parquet(tmp_path / "raw" / "data.parquet").to_dict("list") == {
        "text": ["a fine film", "dull"],
        "label": [4, 0],
    }
    assert (
        manifest["inputs"][0]["fingerprint"] == fake._fingerprint
        and manifest["files"][0]["path"] == "data.parquet"
    )


def test_hub_source_without_mirror_files_is_named_by_its_download(tmp_path, monkeypatch):
    monkeypatch.setenv("ISOTROPY_MIRROR", str(tmp_path))
    hub = {"path": "SetFit/sst5", "split": "train", "revision": "e51bdcd8"}
    params = sources.source_params(sst5_hub_config(hub), "hf_sst5_train")
    with pytest.raises(
        FileNotFoundError,
        match=r"'hf_sst5_train' is unavailable: .*no mirror files configured .*unset mirror",
    ):
        sources.fetch_source("hf_sst5_train", params, tmp_path / "raw")


def test_git_blob_id_is_gits(mirror_root, tmp_path):
    # `git ls-tree` of altsoph/modality_shifts at bc02c012 lists data/words.txt as this blob;
    # the mirror's copy is the same file (its sha256 is the config pin).
    assert sources.git_blob_id(mirror_root / "supersense/words.txt") == (
        "d227c86caafdd78053292bde9376d9c4574630d2"
    )
    (tmp_path / "hello").write_bytes(b"hello\n")  # `echo hello | git hash-object --stdin`
    assert sources.git_blob_id(tmp_path / "hello") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_git_blob_pin_is_enforced_on_download(server, tmp_path, monkeypatch):
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    data = zip_bytes({"words_features.csv": b"word1,word2\n"})
    server.files["/data/words_features.zip"] = data
    (tmp_path / "blob").write_bytes(data)
    blob = sources.git_blob_id(tmp_path / "blob")
    config = {
        "sources": {
            "supersense_features": {
                "url": server.url("/data/words_features.zip"),
                "kind": "supersense_features",
                "git_blob": blob,
            }
        }
    }
    params = sources.source_params({**config, "mirror": None}, "supersense_features")
    manifest = sources.fetch_source("supersense_features", params, tmp_path / "raw", **FAST)
    assert manifest["inputs"][0]["git_blob"] == blob and manifest["inputs"][0]["pinned"] is True
    assert (tmp_path / "raw" / "words_features.zip").read_bytes() == data
    config["sources"]["supersense_features"]["git_blob"] = "0" * 40
    params = sources.source_params({**config, "mirror": None}, "supersense_features")
    with pytest.raises(
        ChecksumError, match=r"git object id mismatch .*\(sources.supersense_features.git_blob\)"
    ):
        sources.fetch_source("supersense_features", params, tmp_path / "raw2", **FAST)
    assert list((tmp_path / "raw2").iterdir()) == []
    # Sources without a git_blob keep their params (a new key would re-run their downloads).
    del config["sources"]["supersense_features"]["git_blob"]
    assert "git_blob" not in sources.source_params(config, "supersense_features")
