"""Downloader tests: a real HTTP server on 127.0.0.1, real archives, and the real mirror; hostile
archives, a full disk and changed upstream files."""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import tarfile
import threading
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from local_server import (
    chunked,
    close_delimited,
    cut_after,
    gzipped,
    reply,
    reply_head,
    static_file,
)
from tiny_workflow import write_mirror_manifest

from isotropy import sources
from isotropy.embeddings.texts import is_word2vec_binary, load_word_vectors
from isotropy.io import DiskFullError
from isotropy.readers.registry import word_vectors_file
from isotropy.readers.sts import read_sts
from isotropy.sources import download, layouts, pins
from isotropy.sources.download import DownloadError, download_file
from isotropy.sources.layouts import ArchiveError
from isotropy.sources.pins import ChecksumError

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def online(monkeypatch):
    """Sources fetched from their URLs, or from the mirror their params name: never $ISOTROPY_MIRROR
    unless a test sets it."""
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)


# ---------------------------------------------------------------------------------------------
# download_file against what real servers do, replayed on the local server (tests/local_server.py)
# with the download's clock replaced (``clock``): every wait is recorded, none is waited.

DATA = bytes(range(256)) * 400  # 102,400 bytes


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(http, path: str, dest: Path, sha256: str | None = None, **options) -> str:
    return download_file(http.url(path), dest, sha256, **options)


def test_a_static_file_is_saved_with_its_sha256_and_its_progress_logged(
    http, tmp_path, clock, caplog
):
    http.routes["/a.txt"] = DATA
    with caplog.at_level("INFO", logger="isotropy.progress"):
        assert fetch(http, "/a.txt", tmp_path / "a.txt", sha(DATA), clock=clock) == sha(DATA)
    assert (tmp_path / "a.txt").read_bytes() == DATA and clock.slept == []
    assert "a.txt: bytes: 102,400/102,400 (100.0%)" in caplog.text  # against the sent length
    http.routes["/c.txt"] = lambda h, n: chunked(h, DATA, complete=True)  # no length sent
    assert fetch(http, "/c.txt", tmp_path / "c.txt") == sha(DATA)


def test_a_body_is_kept_as_sent_never_inflated(http, tmp_path):
    # GitHub's raw server gzips text for a client that accepts gzip: asked for identity, it
    # sends the published file, whose sha256 the pin is.
    http.routes["/words.txt"] = gzipped(DATA)
    assert fetch(http, "/words.txt", tmp_path / "f", sha(DATA)) == sha(DATA)
    assert http.seen["/words.txt"][0]["Accept-Encoding"] == "identity"
    # A server that gzips whatever it is asked sends other bytes: kept as sent, never inflated,
    # so the pin refuses them and nothing is kept.
    http.routes["/words.txt"] = gzipped(DATA, always=True)
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        fetch(http, "/words.txt", tmp_path / "g", sha(DATA))
    assert not (tmp_path / "g").exists()
    # Apache's `AddEncoding x-gzip .gz` labels a .gz file's own bytes Content-Encoding: gzip.
    bomb = gzip.compress(b"\0" * (8 << 20))  # 8 MiB in a few kB: kept as the few kB sent
    http.routes["/bomb.gz"] = lambda h, n: reply(h, 200, bomb, Content_Encoding="gzip")
    assert fetch(http, "/bomb.gz", tmp_path / "w", max_bytes=1 << 20) == sha(bomb)


def redirect(target: str):
    return lambda h, n: reply(h, 302, Location=target)


@pytest.mark.parametrize(
    "route, message, slept, requests",
    [  # a busy server (GitHub's, Zenodo's) answers 503 or 429 with Retry-After, waited out
        (
            lambda h, n: reply(h, 503, Retry_After="7") if n == 1 else static_file(h, DATA),
            None,
            [7.0],
            2,
        ),
        (
            lambda h, n: reply(h, 429, Retry_After="3600"),
            r"passed its deadline of 3000 s .*waiting 3600 s",
            [],
            1,
        ),
        (  # backed off, then given up
            lambda h, n: reply(h, 500),
            "failed after 5 retries: too many 500 error responses.*set ISOTROPY_MIRROR to a "
            "folder laid out like shared/mirror",
            [0, 4, 8, 16, 32],  # RETRY: urllib3's backoff, factor 2
            6,
        ),
        (lambda h, n: reply(h, 404), r"/f failed with HTTP 404.*fix 'sources'", [], 1),
        (redirect("/f"), "/f failed after 5 retries: too many redirects", [], 6),
        (redirect("file:///etc/passwd"), "/f was redirected to an address that is not http", [], 1),
    ],
    ids=["retry-after", "retry-after-past-the-deadline", "persistent-5xx", "404", "loop", "file"],
)
def test_a_failed_request_is_retried_as_it_asks_or_given_up_naming_why(
    http, tmp_path, clock, route, message, slept, requests
):
    http.routes["/f"] = route
    if message is None:
        assert fetch(http, "/f", tmp_path / "f", sha(DATA), clock=clock) == sha(DATA)
    else:
        with pytest.raises(DownloadError, match=message):
            fetch(http, "/f", tmp_path / "f", max_seconds=3000, clock=clock)
        assert list(tmp_path.iterdir()) == []
    assert clock.slept == slept and len(http.seen["/f"]) == requests


def short_body(handler, data: bytes) -> None:
    """The whole length announced, 10 bytes sent, the connection closed cleanly."""
    reply_head(handler, 200, Content_Length=str(len(data)))
    handler.wfile.write(data[:10])
    handler.close_connection = True


def unasked_206(handler, data: bytes) -> None:
    part = f"bytes 100-{len(data) - 1}/{len(data)}"
    reply(handler, 206, data[100:], Content_Range=part)


@pytest.mark.parametrize(
    "first",
    [
        lambda h: cut_after(h, DATA, 40_000),  # a connection dropped mid-stream
        lambda h: short_body(h, DATA),
        lambda h: unasked_206(h, DATA),
        lambda h: chunked(h, DATA, complete=False),  # a chunked body cut before its last chunk
        lambda h: close_delimited(h, DATA[:5000]),  # no length, a broken close
    ],
    ids=["dropped", "shorter-than-its-length", "206-nobody-asked-for", "chunked-cut", "unclean"],
)
def test_a_body_cut_short_is_fetched_again_whole(http, tmp_path, clock, first):
    # The server offers ranges, but a retry asks for the whole file (no resumption).
    http.routes["/f"] = lambda h, n: first(h) if n == 1 else static_file(h, DATA)
    assert fetch(http, "/f", tmp_path / "f", clock=clock) == sha(DATA)
    assert (tmp_path / "f").read_bytes() == DATA
    assert [("Range" in headers) for headers in http.seen["/f"]] == [False, False]


def test_a_trickling_server_is_abandoned_at_the_deadline(http, tmp_path, clock):
    def trickle(handler, n):  # half the file, then an hour passes, then the rest
        reply_head(handler, 200, Content_Length=str(len(DATA)))
        handler.wfile.write(DATA[:50_000])
        handler.wfile.flush()
        clock.now += 3600
        handler.wfile.write(DATA[50_000:])

    http.routes["/slow.bin"] = trickle
    with pytest.raises(DownloadError) as info:
        fetch(http, "/slow.bin", tmp_path / "s", max_seconds=60, clock=clock)
    assert "passed its deadline of 60 s (config downloads.max_download_seconds)" in str(info.value)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    "limit, error, message",
    [
        ({"max_bytes": 1000}, ArchiveError, "sends more than 1000 bytes; .*max_extracted_bytes"),
        ({"size": 1000}, ChecksumError, "more sent than pinned.*pinned 1000 bytes"),
    ],
)
def test_a_body_beyond_its_limit_is_stopped_as_it_arrives(http, tmp_path, limit, error, message):
    # A 256 MiB body: the download stops reading past its limit, so the server cannot send it all.
    piece, pieces, sent, done = b"\0" * (1 << 16), 1 << 12, [0], threading.Event()

    def endless(handler, n):
        reply_head(handler, 200, Content_Length=str(len(piece) * pieces))
        try:
            for _ in range(pieces):
                handler.wfile.write(piece)
                sent[0] += len(piece)
        except OSError:  # the client closed the connection
            handler.close_connection = True
        done.set()

    http.routes["/big.bin"] = endless
    with pytest.raises(error, match=message):
        fetch(http, "/big.bin", tmp_path / "b", **limit)
    assert list(tmp_path.iterdir()) == []
    assert done.wait(timeout=60) and sent[0] < len(piece) * pieces


@pytest.mark.parametrize(
    "scheme, pin, message",
    [
        ("http", {"size": 4}, r"size mismatch .*: pinned 4 bytes \(sources.x.bytes\), got 5 bytes"),
        *[
            (
                scheme,
                {"sha256": sha(b"1234")},  # a changed upstream file: both hashes and the remedy
                rf"sha256 mismatch for .*f.txt: pinned {sha(b'1234')} \(sources.x.sha256\), got "
                rf"{sha(b'12345')}; .*accept it deliberately: set sources.x.sha256 to "
                rf"{sha(b'12345')}",
            )
            for scheme in ("http", "file")
        ],
    ],
)
def test_a_pin_that_does_not_match_leaves_no_file(http, tmp_path, scheme, pin, message):
    http.routes["/f.txt"] = b"12345"
    (tmp_path / "f.txt").write_bytes(b"12345")
    url = http.url("/f.txt") if scheme == "http" else (tmp_path / "f.txt").as_uri()
    with pytest.raises(ChecksumError, match=message):
        download_file(url, tmp_path / "out" / "f", source="x", **pin)
    assert list((tmp_path / "out").iterdir()) == []  # neither the file nor a partial temp file
    assert download_file(url, tmp_path / "out" / "f", size=5) == sha(b"12345")


def test_unreachable_source_is_named_and_the_mirror_suggested(tmp_path, clock):
    # Nothing listens on a port just released: every attempt is refused.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = params("polarity", [f"http://127.0.0.1:{port}/rt.tar.gz"])
    with pytest.raises(DownloadError) as info:
        sources.fetch_source("polarity", unreachable, tmp_path / "raw", clock=clock)
    message = str(info.value)
    assert message.startswith("source 'polarity': download of http://127.0.0.1:")
    assert "failed after 5 retries" in message and "Connection refused" in message
    assert "set ISOTROPY_MIRROR to a folder laid out like shared/mirror" in message
    assert list((tmp_path / "raw").iterdir()) == []  # no half-fetched source left behind


def tar_gz(members: dict[str, bytes], symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def params(name: str, urls: list[str], kind: str | None = None, sha256=None) -> dict:
    found = dict(name=name, kind=kind or sources.source_kind(name), urls=urls)
    return found | dict(sha256=sha256 or [None] * len(urls), mirror_files=[], mirror=None)


def mirror_params(name: str, config: dict, mirror: Path) -> dict:
    p = sources.source_params({**config, "mirror": None}, name)
    p["mirror"] = str(mirror)
    return p


def small_mirror(tmp_path: Path, manifest: bool = True, files: dict | None = None) -> Path:
    """A mirror of ``files`` (path: bytes; by default supersense/words.txt), and its
    MANIFEST.tsv unless ``manifest`` is False."""
    mirror = tmp_path / "mirror"
    for path, data in (files or {"supersense/words.txt": b"dog\ncat\n"}).items():
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_bytes(data)
    if manifest:
        write_mirror_manifest(mirror)
    return mirror


def served_params(config: dict, name: str, url: str) -> dict:
    """Source ``name`` of ``config`` fetched from ``url`` (served here) instead of its own."""
    source = {**copy.deepcopy(config["sources"][name]), "url": url}
    return sources.source_params({"sources": {name: source}, "mirror": None}, name)


POLARITY = ("rt-polarity.pos", "rt-polarity.neg")


def cornell_members(mirror_root: Path) -> dict[str, bytes]:
    """The tarball's members as the public record holds them: the mirror's UTF-8 files back in
    cp1252 (the layout decodes the tarball's bytes as cp1252)."""
    return {
        f"rt-polaritydata/{name}": (mirror_root / "polarity" / name)
        .read_text("utf-8")
        .encode("cp1252")
        for name in POLARITY
    }


def test_mrpc_rebuilt_like_glue_equals_mirror_train(http, tmp_path, mirror_root):
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
    http.routes["/msr_paraphrase_train.txt"] = msr
    http.routes["/mrpc_dev_ids.tsv"] = dev_ids
    urls = [http.url("/msr_paraphrase_train.txt"), http.url("/mrpc_dev_ids.tsv")]
    sources.fetch_source("glue_mrpc", params("glue_mrpc", urls), tmp_path / "raw")
    rebuilt = (tmp_path / "raw/train.tsv").read_text("utf-8").splitlines()
    assert rebuilt == train_lines


def test_nlpl_zip_gives_model_bin_not_macos_debris_and_a_text_gz_is_read_as_text(http, tmp_path):
    from gensim.models import KeyedVectors

    vectors = KeyedVectors(vector_size=4)
    words = ["the", "dog", "run", "quickly"]
    vectors.add_vectors(words, np.arange(16, dtype=np.float32).reshape(4, 4) / 7)
    vectors.save_word2vec_format(str(tmp_path / "model.bin"), binary=True)
    binary = (tmp_path / "model.bin").read_bytes()  # and a macOS copy its pattern would match
    archive = zip_bytes({"meta.json": b"{}", "model.bin": binary, "__MACOSX/._model.bin": b"x"})
    http.routes["/222.zip"] = archive
    word2vec = params("word2vec", [http.url("/222.zip")], kind="word_vectors")
    sources.fetch_source("word2vec", word2vec, tmp_path / "raw")
    path = word_vectors_file(tmp_path / "raw")
    assert path.name == "model.bin"
    assert is_word2vec_binary(path)
    loaded = load_word_vectors(path)
    assert loaded.index_to_key == words
    np.testing.assert_allclose(loaded["dog"], vectors["dog"])
    vectors.save_word2vec_format(str(tmp_path / "v.txt"), binary=False)
    with gzip.open(tmp_path / "v.txt.gz", "wb") as handle:
        handle.write((tmp_path / "v.txt").read_bytes())
    assert not is_word2vec_binary(tmp_path / "v.txt.gz")
    assert load_word_vectors(tmp_path / "v.txt.gz").index_to_key == words
    (tmp_path / "bad.txt").write_text("not a header\n")
    with pytest.raises(ValueError, match="line 1: expected a word2vec header"):
        is_word2vec_binary(tmp_path / "bad.txt")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("3 4\nthe 0.1 0.2 0.3 0.4\nof 0.1 0.2 x 0.4\nand 0.1 0.2 0.3 0.4\n", "'x'"),
        ("3 4\nthe 0.1 0.2 0.3 0.4\nof 0.1 0.2 0.3\nand 0.1 0.2 0.3 0.4\n", "shape"),
        ("4 4\nthe 0.1 0.2 0.3 0.4\nof 0.1 0.2 0.3 0.4\n", "end of input"),
    ],
)
def test_malformed_word2vec_text_names_the_file_and_gensims_reason(tmp_path, text, reason):
    path = tmp_path / "v.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"v.txt: not a valid word2vec text file .*{reason}"):
        load_word_vectors(path)
    assert len(load_word_vectors(path, limit=1)) == 1  # the rest is never read


# ---------------------------------------------------------------------------------------------
# Mirror resolution and availability


def test_resolve_mirror_env_overrides_config(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert sources.resolve_mirror(None) is None
    assert sources.resolve_mirror(str(tmp_path / "a")) == tmp_path / "a"
    monkeypatch.setenv(sources.MIRROR_ENV, str(tmp_path / "b"))
    assert sources.resolve_mirror(str(tmp_path / "a")) == tmp_path / "b"
    assert sources.resolve_mirror(None) == tmp_path / "b"
    monkeypatch.setenv(sources.MIRROR_ENV, str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match=f"{sources.MIRROR_ENV}"):
        sources.resolve_mirror(None)


def test_source_params_follow_config_however_snakemake_read_it(config):
    """Snakemake reads the audit's JSON configuration as OrderedDicts: a source's params must
    have the same repr (what Snakemake compares), or every such download looks re-configured."""
    p = sources.source_params(config, "glue_mrpc")
    assert p["kind"] == "glue" and len(p["urls"]) == 2 and p["mirror"] is None
    assert p["sha256"] == config["sources"]["glue_mrpc"]["sha256"]
    assert p["bytes"] == [1047044, 6222]
    assert "git_blob" not in p  # a key only where given: the others' params stay as they were
    with pytest.raises(ValueError, match="not in config"):
        sources.source_params(config, "nope")
    members = OrderedDict(bytes=3, sha256="0" * 64)
    as_json = {"url": "https://example.org/a.tar.gz", "sha256": None, "members": {"a": members}}
    as_yaml = {**as_json, "members": {"a": dict(members)}}
    read = [{"sources": {"polarity": entry}} for entry in (as_json, as_yaml)]
    params = [sources.source_params(settings, "polarity") for settings in read]
    assert repr(params[0]) == repr(params[1]) and "OrderedDict" not in repr(params[0])


def test_a_plain_source_replaces_the_old_files_and_a_missing_mirror_file_is_named(tmp_path):
    """kind files: a source's files are kept as they are, under their own names, in place of what
    was there; a mirror file missing (or none configured) is named before any copy."""
    mirror = small_mirror(tmp_path, files={"toy/a.tsv": b"x\ty\n", "toy/b.txt": b"words\n"})
    toy = {
        "kind": "files",
        "url": ["https://example.org/a.tsv", "https://example.org/b.txt"],
        "mirror": ["toy/a.tsv", "toy/b.txt"],
    }
    hub = {
        "kind": "hub",
        "url": "https://huggingface.co/datasets/SetFit/sst5",
        "hub": {"path": "SetFit/sst5", "split": "train", "revision": "e51bdcd8"},
    }
    config = {"mirror": str(mirror), "sources": {"toy": toy, "hub": hub}}
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "stale.json").write_text("[]")
    manifest = sources.fetch_source("toy", sources.source_params(config, "toy"), raw)
    assert [f["path"] for f in manifest["files"]] == ["a.tsv", "b.txt"]
    assert sorted(p.name for p in raw.iterdir()) == ["a.tsv", "b.txt", "manifest.json"]
    assert (raw / "a.tsv").read_text() == "x\ty\n"
    (mirror / "toy/b.txt").unlink()
    for name, lacks in [("toy", "toy/b.txt"), ("hub", "(no mirror files configured for source")]:
        with pytest.raises(FileNotFoundError) as run_time:
            sources.fetch_source(name, sources.source_params(config, name), tmp_path / name)
        assert f"source {name!r} is unavailable: the mirror {mirror} lacks {lacks}" in str(
            run_time.value
        )
        assert list((tmp_path / name).iterdir()) == []


def test_mirror_polarity_wrong_encoding_names_file_and_line(tmp_path, config):
    latin = "fine\nalso fine\nna\u00efve\n".encode("latin-1")
    files = {"polarity/rt-polarity.pos": latin, "polarity/rt-polarity.neg": b"bad\n"}
    mirror = small_mirror(tmp_path, files=files)
    with pytest.raises(ValueError, match=r"polarity/rt-polarity.pos, line 3: .* not valid utf-8"):
        p = mirror_params("polarity", config, mirror)
        sources.fetch_source("polarity", p, tmp_path / "raw")


# ---------------------------------------------------------------------------------------------
# Bad input never gets through: pins, unverified mirrors, confinement, archive bombs


def test_config_pin_is_enforced_on_mirror_reads(tmp_path, config):
    mirror = small_mirror(tmp_path)
    p = mirror_params("supersense_words", config, mirror)
    p["sha256"] = [sha(b"something else")]
    with pytest.raises(ChecksumError) as info:
        sources.fetch_source("supersense_words", p, tmp_path / "raw")
    message = str(info.value)
    assert "(sources.supersense_words.sha256)" in message and sha(b"dog\ncat\n") in message
    assert "set sources.supersense_words.sha256 to " + sha(b"dog\ncat\n") in message
    assert list((tmp_path / "raw").iterdir()) == []
    p["sha256"] = [sha(b"dog\ncat\n")]
    manifest = sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert manifest["inputs"][0]["checked_against"] == ["MANIFEST.tsv", "config"]
    # A URL's file the mirror lacks (an archive, say): its pin cannot check the mirror's copies.
    p["urls"] = ["https://example.org/words.tar.gz"]
    p["sha256"] = [sha(b"the tarball")]
    manifest = sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert manifest["inputs"][0]["checked_against"] == ["MANIFEST.tsv"]


UNVOUCHED = r"no row in .*MANIFEST.tsv\) and nothing was kept; add its path, bytes and sha256"
ROW = r"MANIFEST.tsv line 3: row 'supersense/words.txt'.*64-hex-digit sha256"
RESTORE = ".*restore it from the original source"


@pytest.mark.parametrize(
    "row, error, message",
    [
        (None, pins.UnverifiedFileError, "cannot be checked \\(" + UNVOUCHED),  # no MANIFEST.tsv
        ("", pins.UnverifiedFileError, UNVOUCHED),  # a MANIFEST.tsv that does not list it
        ("\t8", pins.UnverifiedFileError, ROW),  # cut short before its sha256
        ("\t\t" + "0" * 64, pins.UnverifiedFileError, ROW),  # no byte count
        ("\t8\tnot-a-digest", pins.UnverifiedFileError, ROW),
        ("\teight\t" + "0" * 64, pins.UnverifiedFileError, ROW),
        (f"\t8\t{sha(b'other')}", ChecksumError, "sha256 mismatch .*MANIFEST.tsv entry" + RESTORE),
        ("\t9\t" + sha(b"dog\ncat\n"), ChecksumError, r"pinned 9 bytes, got 8" + RESTORE),
    ],
    ids=["no-manifest", "not-listed", "cut", "no-bytes", "bad-digest", "bad-bytes", "sha", "size"],
)
def test_a_mirror_file_its_manifest_does_not_vouch_for_is_refused_not_blaming_the_config(
    tmp_path, config, row, error, message
):
    mirror = small_mirror(tmp_path, manifest=False)
    if row is not None:
        listed = f"supersense/words.txt{row}\n" if row else ""
        (mirror / "MANIFEST.tsv").write_text(f"path\tbytes\tsha256\n\n{listed}")
    p = mirror_params("supersense_words", config, mirror)
    p["sha256"] = [None]  # unpinned: a mirror file only MANIFEST.tsv could check
    with pytest.raises(error, match=message) as info:
        sources.fetch_source("supersense_words", p, tmp_path / "raw")
    assert "config" not in str(info.value)
    assert list((tmp_path / "raw").iterdir()) == []


TRAIN = {"SST-2/train.tsv": b"sentence\tlabel\nok\t1\n"}
JUNK = {f"SST-2/junk{i}.txt": b"" for i in range(50)}
TOO_MANY = r"holds more than 20 members, which looks like an archive bomb; .*max_archive_members"


@pytest.mark.parametrize(
    "suffix, members, links, limits, error, message",
    [
        (
            "zip",  # 8 MiB that compress to a few kB
            {"SST-2/train.tsv": b"sentence\tlabel\n" + b"0" * (8 << 20)},
            None,
            {"max_extracted_bytes": 1 << 20},
            ArchiveError,
            r"archive SST-2.zip unpacks to more than 1048576 bytes \(at member 'SST-2/train.tsv'\),"
            r" which looks like a decompression bomb; .*raise downloads.max_extracted_bytes",
        ),
        ("zip", TRAIN | JUNK, None, {"max_archive_members": 20}, ArchiveError, TOO_MANY),
        ("tar.gz", TRAIN | JUNK, None, {"max_archive_members": 20}, ArchiveError, TOO_MANY),
        (
            "zip",
            TRAIN | {"../../escaped.txt": b"escaped\n"},
            None,
            {},
            ArchiveError,
            r"member '../../escaped.txt' would unpack outside its folder",
        ),
        (
            "tar.gz",
            TRAIN | {"/tmp/escaped-absolute.txt": b"escaped\n"},
            None,
            {},
            ArchiveError,
            r"member '/tmp/escaped-absolute.txt' would unpack outside its folder",
        ),
        (  # a link: tarfile's data filter refuses it
            "tar.gz",
            TRAIN,
            {"SST-2/link": "/etc/passwd"},
            {},
            ArchiveError,
            r"member 'SST-2/link' is unsafe to unpack",
        ),
        (
            "zip",
            TRAIN | {"x/train.tsv": b"evil\n"},
            None,
            {},
            ArchiveError,
            r"two members named train.tsv \('SST-2/train.tsv' and 'x/train.tsv'\)",
        ),
        ("zip", {"SST-2/dev.tsv": b"x"}, None, {}, ValueError, "none of the expected files"),
    ],
    ids=["bomb", "zip-members", "tar-members", "dotdot", "absolute", "symlink", "twice", "none"],
)
def test_a_hostile_or_wrong_archive_is_refused_and_writes_nothing(
    http, tmp_path, suffix, members, links, limits, error, message
):
    if suffix == "zip":
        archive = zip_bytes(members, zipfile.ZIP_DEFLATED)
    else:
        archive = tar_gz(members, symlinks=links)
    before = sorted(tmp_path.rglob("*"))
    http.routes[f"/SST-2.{suffix}"] = archive
    p = {**params("glue_sst2", [http.url(f"/SST-2.{suffix}")]), **limits}
    with pytest.raises(error, match=message):
        sources.fetch_source("glue_sst2", p, tmp_path / "raw")
    assert sorted(tmp_path.rglob("*")) == before + [tmp_path / "raw"]
    assert not Path("/tmp/escaped-absolute.txt").exists()


@pytest.mark.parametrize(
    "module, route, written",
    [(download, "/train.tsv", "fetched/train.tsv"), (layouts, "/SST-2.zip", "staging/train.tsv")],
    ids=["download", "archive-member"],
)
def test_a_full_disk_names_the_file_and_is_not_retried(
    http, tmp_path, clock, monkeypatch, module, route, written
):
    real_open = open

    def full_disk(path, mode="r", *args, **kwargs):  # the module's writes land on /dev/full
        return real_open("/dev/full" if "w" in mode else path, mode, *args, **kwargs)

    monkeypatch.setattr(module, "open", full_disk, raising=False)
    http.routes["/SST-2.zip"] = zip_bytes(TRAIN)
    http.routes["/train.tsv"] = TRAIN["SST-2/train.tsv"]
    raw = tmp_path / "raw"
    with pytest.raises(DiskFullError) as info:
        sources.fetch_source("glue_sst2", params("glue_sst2", [http.url(route)]), raw, clock=clock)
    assert "no space left on the device of" in str(info.value)
    assert f"{written} while writing it" in str(info.value) and "network" not in str(info.value)
    assert len(http.seen[route]) == 1 and clock.slept == []  # no retry, no wait
    assert list(raw.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# SICK-R online: SemEval-2014's 4,927 test pairs


def test_sickr_online_gives_the_4927_semeval_test_pairs(http, tmp_path, config):
    data = gzip.decompress((REPO_ROOT / "tests/data/sick/SICK_test_annotated.txt.gz").read_bytes())
    path = "/" + config["sources"]["hf_sickr_test"]["url"].split("/", 3)[3]  # served here
    http.routes[path] = data
    params = served_params(config, "hf_sickr_test", http.url(path))
    manifest = sources.fetch_source("hf_sickr_test", params, tmp_path / "raw")
    assert manifest["inputs"][0]["checked_against"] == ["sha256", "git_blob", "bytes"]
    assert manifest["inputs"][0]["trust"] == sources.TRUST_PUBLISHED
    table = read_sts("sickr", "test", tmp_path / "raw")
    assert len(table) == 4927
    assert table["score"].between(1, 5).all()
