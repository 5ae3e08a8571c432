"""The downloader against hostile or failing servers (issues 34 and 35), on 127.0.0.1.

A cut download fetched again whole, close-delimited bodies, Content-Encoding bombs, a trickling
server, Retry-After, redirect loops, a full disk, duplicate archive members, and the config's pins.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml
from local_server import LocalServer
from test_download import zip_bytes

from isotropy import sources
from isotropy.io import DiskFullError
from isotropy.readers.sts import read_sts
from isotropy.sources import ArchiveError, ChecksumError, DownloadError
from isotropy.workflow.config import with_sources

ROOT = Path(__file__).resolve().parents[1]
FAST = {"backoff": 0.01, "timeout": 5}
DATA = bytes(range(256)) * 400  # 102,400 bytes


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Routes(LocalServer):
    """A local HTTP/1.1 server whose answers are functions ``(handler, request number) -> None``."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[BaseHTTPRequestHandler, int], None]] = {}
        self.seen: dict[str, list[dict[str, str]]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                calls = outer.seen.setdefault(self.path, [])
                calls.append(dict(self.headers))
                route = outer.routes.get(self.path)
                if route is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                route(self, len(calls))

            def log_message(self, *args) -> None:
                pass

        super().__init__(Handler)


@pytest.fixture(autouse=True)
def online(monkeypatch):
    """Every source here is fetched from its URL, never from a mirror."""
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)


@pytest.fixture
def http():
    with Routes() as server:
        yield server


def reply(handler, status: int, body: bytes, **headers: str) -> None:
    handler.send_response(status)
    for key, value in {"Content-Length": str(len(body)), **headers}.items():
        handler.send_header(key.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def cut_after(handler, data: bytes, sent: int, status: int = 200, **headers: str) -> None:
    """Announce ``data`` in full, send ``sent`` bytes, then reset the connection."""
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key.replace("_", "-"), value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data[:sent])
    handler.wfile.flush()
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True


def ranged(handler, data: bytes, etag: str = '"v1"') -> None:
    """Answer a Range request as a conforming server: 206 with the exact Content-Range."""
    wanted = handler.headers.get("Range")
    if wanted and handler.headers.get("If-Range", etag) == etag:
        start = int(wanted.removeprefix("bytes=").rstrip("-"))
        reply(
            handler,
            206,
            data[start:],
            Content_Range=f"bytes {start}-{len(data) - 1}/{len(data)}",
            ETag=etag,
        )
    else:
        reply(handler, 200, data, ETag=etag, Accept_Ranges="bytes")


# ---------------------------------------------------------------------------------------------
# A cut download is fetched again from its first byte (resuming was dropped: issue 70)


def test_a_cut_download_is_fetched_again_whole(http, tmp_path):
    def route(handler, n):
        if n == 1:
            cut_after(handler, DATA, 40_000, ETag='"v1"', Accept_Ranges="bytes")
        else:
            ranged(handler, DATA)

    http.routes["/big.bin"] = route
    digest = sources.download_file(http.url("/big.bin"), tmp_path / "big.bin", **FAST)
    assert digest == sha(DATA) and (tmp_path / "big.bin").read_bytes() == DATA
    assert "Range" not in http.seen["/big.bin"][1]


def test_a_200_to_a_resume_request_starts_again(http, tmp_path):
    def route(handler, n):
        if n == 1:
            cut_after(handler, DATA, 40_000, ETag='"v1"')
        else:
            reply(handler, 200, DATA, ETag='"v1"')  # ignores Range: the whole file again

    http.routes["/big.bin"] = route
    assert sources.download_file(http.url("/big.bin"), tmp_path / "f", **FAST) == sha(DATA)
    assert (tmp_path / "f").read_bytes() == DATA  # not 40,000 bytes + the whole file


def test_a_206_nobody_asked_for_is_not_kept(http, tmp_path):
    def route(handler, n):
        if n == 1:
            cut_after(handler, DATA, 40_000, ETag='"v1"')
        elif n == 2:  # a part nobody asked for: keeping or splicing it would corrupt the file
            reply(handler, 206, DATA[100:], Content_Range=f"bytes 100-{len(DATA) - 1}/{len(DATA)}")
        else:
            reply(handler, 200, DATA, ETag='"v1"')

    http.routes["/big.bin"] = route
    assert sources.download_file(http.url("/big.bin"), tmp_path / "f", **FAST) == sha(DATA)
    assert "Range" not in http.seen["/big.bin"][2]  # the third request asks for everything


# ---------------------------------------------------------------------------------------------
# Close-delimited bodies (issue 35.5)


def bare_server(handle: Callable[[socket.socket], None]) -> socket.socket:
    """A listening socket on a free local port whose thread hands every connection it accepts
    to ``handle``, until the socket is closed."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            handle(conn)

    threading.Thread(target=serve, daemon=True).start()
    return listener


def raw_server(answer: bytes, reset: bool) -> tuple[socket.socket, str]:
    """A bare TCP server answering every request with ``answer`` (no length, no chunking) and
    then closing: with a reset (RST), or cleanly (FIN)."""

    def respond(conn: socket.socket) -> None:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + answer)
        if reset:
            time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()

    listener = bare_server(respond)
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/body.txt"


def test_a_close_delimited_body_is_kept_only_when_the_connection_closed_cleanly(tmp_path):
    listener, url = raw_server(DATA[:5000], reset=True)
    with pytest.raises(DownloadError, match="failed after 2 attempts: stream interrupted"):
        sources.download_file(url, tmp_path / "cut", retries=1, **FAST)
    assert not (tmp_path / "cut").exists()
    listener.close()
    listener, url = raw_server(DATA[:5000], reset=False)
    assert sources.download_file(url, tmp_path / "whole", **FAST) == sha(DATA[:5000])
    listener.close()


def test_a_close_delimited_body_shorter_than_its_pin_is_refused(tmp_path):
    # A clean close cannot tell a short body from a whole one: only a pin can.
    listener, url = raw_server(DATA[:5000], reset=False)
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        sources.download_file(url, tmp_path / "short", sha(DATA), retries=0, **FAST)
    assert not (tmp_path / "short").exists()
    listener.close()


# ---------------------------------------------------------------------------------------------
# Content-Encoding bombs (issue 34.9): a body is never inflated, and its bytes are bounded


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
def test_a_content_encoding_bomb_is_kept_as_sent_never_inflated(http, tmp_path, encoding):
    plain = b"\0" * (8 << 20)
    if encoding == "gzip":
        body = gzip.compress(plain)
    else:
        packer = zlib.compressobj(9, zlib.DEFLATED, -15 if encoding == "raw-deflate" else 15)
        body = packer.compress(plain) + packer.flush()
    header = "gzip" if encoding == "gzip" else "deflate"
    assert len(body) < 64 << 10
    http.routes["/words.txt"] = lambda h, n: reply(h, 200, body, Content_Encoding=header)
    digest = sources.download_file(
        http.url("/words.txt"), tmp_path / "w", max_bytes=1 << 20, **FAST
    )
    assert digest == sha(body) and (tmp_path / "w").read_bytes() == body
    # Its pin is the plain file's, so the body as sent is refused, and nothing is kept.
    with pytest.raises(ChecksumError, match="sha256 mismatch"):
        sources.download_file(http.url("/words.txt"), tmp_path / "p", sha(plain), **FAST)
    assert not (tmp_path / "p").exists()


def test_a_body_beyond_the_limit_is_stopped_as_it_arrives(http, tmp_path):
    http.routes["/big.bin"] = lambda h, n: reply(h, 200, DATA)
    with pytest.raises(ArchiveError) as info:
        sources.download_file(http.url("/big.bin"), tmp_path / "b", max_bytes=1000, **FAST)
    assert "sends more than 1000 bytes" in str(info.value)
    assert "downloads.max_extracted_bytes" in str(info.value)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# A trickling server and Retry-After (issue 34.14)


def test_a_trickling_server_is_abandoned_at_the_deadline(http, tmp_path):
    def trickle(handler, n):
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(1000):
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.1)

    http.routes["/slow.txt"] = trickle
    started = time.monotonic()
    with pytest.raises(DownloadError) as info:
        sources.download_file(http.url("/slow.txt"), tmp_path / "s", max_seconds=1.0, **FAST)
    assert time.monotonic() - started < 5
    assert "passed its deadline of 1 s (config downloads.max_download_seconds)" in str(info.value)
    assert not (tmp_path / "s").exists()


def test_retry_after_is_honoured(http, tmp_path):
    def route(handler, n):
        if n == 1:
            reply(handler, 503, b"", Retry_After="1")
        else:
            reply(handler, 200, b"ok")

    http.routes["/busy.txt"] = route
    started = time.monotonic()
    sources.download_file(http.url("/busy.txt"), tmp_path / "b", **FAST)
    assert time.monotonic() - started >= 1.0  # the backoff alone would wait 0.01 s


def test_a_retry_after_beyond_the_deadline_stops_at_once(http, tmp_path):
    http.routes["/busy.txt"] = lambda h, n: reply(h, 429, b"", Retry_After="3600")
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"passed its deadline of 60 s .*waiting 3600 s"):
        sources.download_file(http.url("/busy.txt"), tmp_path / "b", max_seconds=60, **FAST)
    assert time.monotonic() - started < 5


def test_retry_after_as_an_http_date():
    assert sources.retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert sources.retry_after("120") == 120.0
    assert sources.retry_after("soon") is None and sources.retry_after(None) is None


# ---------------------------------------------------------------------------------------------
# Redirects (issue 34.13)


def test_a_redirect_loop_names_the_url(http, tmp_path):
    http.routes["/a"] = lambda h, n: reply(h, 302, b"", Location="/b")
    http.routes["/b"] = lambda h, n: reply(h, 302, b"", Location="/a")
    with pytest.raises(DownloadError) as info:
        sources.download_file(http.url("/a"), tmp_path / "a", **FAST)
    assert http.url("/a") in str(info.value) and "redirect loop" in str(info.value)


def test_a_redirect_to_a_local_file_is_refused_naming_the_url(http, tmp_path):
    http.routes["/x"] = lambda h, n: reply(h, 302, b"", Location="file:///etc/passwd")
    with pytest.raises(DownloadError) as info:
        sources.download_file(http.url("/x"), tmp_path / "x", **FAST)
    assert http.url("/x") in str(info.value) and "not http(s)" in str(info.value)
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------------------------
# A full disk (issue 34.8 and 34.13)


@pytest.fixture
def full_disk(monkeypatch):
    """Writes to files in download or staging folders land on /dev/full (ENOSPC, as a full disk)."""
    real_open = open

    def full_open(path, mode="r", *args, **kwargs):
        writes = "b" in mode and ("w" in mode or "a" in mode)
        if writes and (".fetch-" in str(path) or ".part" in str(path)):
            return real_open("/dev/full", "wb", buffering=0)
        return real_open(path, mode, *args, **kwargs)

    return full_open


def test_a_full_disk_during_a_download_is_not_a_network_problem(
    http, tmp_path, monkeypatch, full_disk
):
    http.routes["/f.bin"] = lambda h, n: reply(h, 200, DATA)
    monkeypatch.setattr(sources, "open", full_disk, raising=False)
    started = time.monotonic()
    with pytest.raises(DiskFullError) as info:
        sources.download_file(http.url("/f.bin"), tmp_path / "f.bin", backoff=5, timeout=5)
    assert time.monotonic() - started < 4  # no retry, no backoff
    assert len(http.seen["/f.bin"]) == 1
    assert "no space left on the device of" in str(info.value) and "f.bin" in str(info.value)
    assert "network" not in str(info.value)


def test_an_archive_unpacked_onto_a_full_disk_names_member_and_archive(
    tmp_path, monkeypatch, full_disk
):
    from isotropy.sources import layouts

    archive = tmp_path / "SST-2.zip"
    archive.write_bytes(zip_bytes({"SST-2/train.tsv": b"sentence\tlabel\nok\t1\n"}))
    staging = tmp_path / ".fetch-1" / "staging"
    staging.mkdir(parents=True)
    monkeypatch.setattr(layouts, "open", full_disk, raising=False)
    with pytest.raises(DiskFullError) as info:
        layouts.extract_members(sources.Fetched("SST-2.zip", archive), lambda m: True, staging)
    message = str(info.value)
    assert "unpacking member 'SST-2/train.tsv' of archive SST-2.zip" in message
    assert "no space left on the device of" in message and "train.tsv" in message


def test_a_full_disk_while_laying_out_a_source_names_the_source(http, tmp_path, monkeypatch):
    import shutil

    http.routes["/words.txt"] = lambda h, n: reply(h, 200, b"dog\ncat\n")
    real_copyfile = shutil.copyfile
    monkeypatch.setattr(shutil, "copyfile", lambda src, dst: real_copyfile(src, "/dev/full"))
    params = plain_params("supersense_words", [http.url("/words.txt")])
    with pytest.raises(DiskFullError) as info:
        sources.fetch_source("supersense_words", params, tmp_path / "raw", **FAST)
    message = str(info.value)
    assert "laying out source 'supersense_words': no space left on the device of" in message
    assert str(tmp_path / "raw") in message
    assert list((tmp_path / "raw").iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Duplicate archive members (issue 34.6)


def tar_gz(members: list[tuple[str, bytes]]) -> bytes:
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_polarity_tarball_with_a_second_rt_polarity_pos_is_refused(http, tmp_path):
    tarball = tar_gz(
        [
            ("rt-polaritydata/rt-polarity.pos", b"a fine film\n"),
            ("rt-polaritydata/rt-polarity.neg", b"a dull film\n"),
            ("old/rt-polarity.pos", b"injected text\n"),
        ]
    )
    http.routes["/rt-polaritydata.tar.gz"] = lambda h, n: reply(h, 200, tarball)
    params = plain_params("polarity", [http.url("/rt-polaritydata.tar.gz")])
    with pytest.raises(ArchiveError) as info:
        sources.fetch_source("polarity", params, tmp_path / "raw", **FAST)
    assert "two members named rt-polarity.pos" in str(info.value)
    assert "'old/rt-polarity.pos'" in str(info.value)
    assert list((tmp_path / "raw").iterdir()) == []


def test_a_glue_zip_with_two_train_files_is_refused(http, tmp_path):
    archive = zip_bytes({"SST-2/train.tsv": b"sentence\tlabel\na\t1\n", "x/train.tsv": b"evil\n"})
    http.routes["/SST-2.zip"] = lambda h, n: reply(h, 200, archive)
    with pytest.raises(ArchiveError, match="two members named train.tsv"):
        sources.fetch_source(
            "glue_sst2", plain_params("glue_sst2", [http.url("/SST-2.zip")]), tmp_path / "r", **FAST
        )


def plain_params(name: str, urls: list[str], **extra) -> dict:
    return {
        "name": name,
        "kind": sources.source_kind(name),
        "urls": urls,
        "sha256": [None] * len(urls),
        "mirror_files": [],
        "mirror": None,
        **extra,
    }


# ---------------------------------------------------------------------------------------------
# Pins (issue 35)


@pytest.fixture(scope="module")
def config() -> dict:
    return with_sources(yaml.safe_load((ROOT / "config.yaml").read_text()))


def test_every_url_source_is_pinned_or_said_to_be_unpinned(config):
    text = (ROOT / "config" / "sources.yaml").read_text()
    unpinned = []
    for name, source in config["sources"].items():
        if source.get("kind") == "hub":
            assert len(source["hub"]["revision"]) == 40, name  # pinned by its hub commit
            continue
        urls = source["url"] if isinstance(source["url"], list) else [source["url"]]
        assert all(url.startswith("https://") for url in urls), name
        assert "/gh-pages/" not in source["url"] and "/master/" not in str(source["url"]), name
        if not (source.get("sha256") or source.get("git_blob") or source.get("members")):
            unpinned.append(name)
    # Unpinned sources rest on the sources lock (tests/test_source_lock.py checks that every
    # source is refused on a wrong body); the two the paper needs say so beside them.
    assert {"codwoe", "word2vec"} <= set(unpinned)
    for name in ("codwoe", "word2vec"):
        block = " ".join(text[text.index(f"\n  {name}:") :][:600].replace("#", " ").split())
        assert "UNPINNED: no public code found pins this file" in block, name
        assert "it rests on the sources lock" in block, name


def test_a_changed_upstream_file_is_refused_with_both_hashes_and_the_remedy(http, tmp_path, config):
    new = b"a changed file\n"
    http.routes["/SICK_test_annotated.txt"] = lambda h, n: reply(h, 200, new)
    source = copy.deepcopy(config["sources"]["hf_sickr_test"])
    source.update(url=http.url("/SICK_test_annotated.txt"), git_blob=None, bytes=None)
    params = sources.source_params({"sources": {"hf_sickr_test": source}}, "hf_sickr_test")
    with pytest.raises(ChecksumError) as info:
        sources.fetch_source("hf_sickr_test", params, tmp_path / "raw", **FAST)
    message = str(info.value)
    assert http.url("/SICK_test_annotated.txt") in message
    assert source["sha256"] in message and sha(new) in message
    assert f"accept it deliberately: set sources.hf_sickr_test.sha256 to {sha(new)}" in message
    assert list((tmp_path / "raw").iterdir()) == []


def test_a_size_pin_is_enforced(http, tmp_path):
    http.routes["/f.txt"] = lambda h, n: reply(h, 200, b"12345")
    with pytest.raises(
        ChecksumError, match=r"size mismatch .*pinned 4 bytes \(sources.x.bytes\), got 5"
    ):
        sources.download_file(http.url("/f.txt"), tmp_path / "f", size=4, source="x", **FAST)
    assert sources.download_file(http.url("/f.txt"), tmp_path / "f", size=5, **FAST) == sha(
        b"12345"
    )
    # A body larger than its pin is stopped while it arrives, not after.
    http.routes["/big.txt"] = lambda h, n: reply(h, 200, DATA)
    with pytest.raises(ChecksumError, match=r"more sent than pinned.*pinned 1000 bytes"):
        sources.download_file(http.url("/big.txt"), tmp_path / "b", size=1000, **FAST)
    assert not (tmp_path / "b").exists()


def test_an_ftp_url_is_refused_by_the_schema_naming_the_key(config):
    from isotropy.workflow.config import ConfigError, check_loaded_config

    broken = copy.deepcopy(config)
    broken["sources"]["polarity"]["url"] = "ftp://example.org/rt-polaritydata.tar.gz"
    with pytest.raises(ConfigError) as info:
        check_loaded_config(broken)
    message = str(info.value)
    assert "'sources.polarity.url'" in message and "match pattern '^(https?|file)://'" in message
    assert "valid list" not in message  # one sentence per key: the closest alternative


# ---------------------------------------------------------------------------------------------
# SICK-R online: SemEval-2014's 4,927 test pairs (issue 35.1)


def test_sickr_online_gives_the_4927_semeval_test_pairs(http, tmp_path, config):
    data = gzip.decompress((ROOT / "tests/data/sick/SICK_test_annotated.txt.gz").read_bytes())
    source = copy.deepcopy(config["sources"]["hf_sickr_test"])
    path = "/" + source["url"].split("/", 3)[3]  # the pinned address, served here
    http.routes[path] = lambda h, n: ranged(h, data)
    source["url"] = http.url(path)
    params = sources.source_params({"sources": {"hf_sickr_test": source}}, "hf_sickr_test")
    manifest = sources.fetch_source("hf_sickr_test", params, tmp_path / "raw", **FAST)
    assert manifest["inputs"][0]["checked_against"] == ["sha256", "git_blob", "bytes"]
    table = read_sts("sickr", "test", tmp_path / "raw")
    assert len(table) == 4927
    assert table["score"].between(1, 5).all()


# ---------------------------------------------------------------------------------------------
# Chunked bodies: whole, and cut before the last chunk


def chunked(handler, data: bytes, complete: bool) -> None:
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for start in range(0, len(data), 7000):
        piece = data[start : start + 7000]
        handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    if complete:
        handler.wfile.write(b"0\r\n\r\n")
    else:
        handler.wfile.flush()
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.close_connection = True


def test_a_chunked_body_is_kept_whole_and_a_cut_one_retried(http, tmp_path):
    http.routes["/whole.bin"] = lambda h, n: chunked(h, DATA, complete=True)
    assert sources.download_file(http.url("/whole.bin"), tmp_path / "w", **FAST) == sha(DATA)
    http.routes["/cut.bin"] = lambda h, n: chunked(h, DATA, complete=n > 1)
    assert sources.download_file(http.url("/cut.bin"), tmp_path / "c", **FAST) == sha(DATA)
    assert len(http.seen["/cut.bin"]) == 2 and (tmp_path / "c").read_bytes() == DATA


# ---------------------------------------------------------------------------------------------
# A close-delimited body over TLS: a cut without close_notify is not the end (issue 35.5)


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(folder / "key.pem"),
            "-out",
            str(folder / "cert.pem"),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return folder


def tls_server(folder: Path, answer: bytes, clean: bool) -> tuple[socket.socket, str]:
    """A bare TLS server answering with ``answer`` (no length, no chunking), then closing:
    with TLS close_notify (clean) or by dropping the TCP connection (a cut)."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")

    def respond(raw: socket.socket) -> None:
        try:
            conn = context.wrap_socket(raw, server_side=True)
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + answer)
            if clean:
                conn.unwrap().close()
            else:
                conn.shutdown(socket.SHUT_RDWR)  # TCP FIN, no close_notify
                conn.close()
        except (OSError, ssl.SSLError):
            raw.close()

    listener = bare_server(respond)
    return listener, f"https://127.0.0.1:{listener.getsockname()[1]}/body.txt"


def test_a_tls_body_cut_without_close_notify_is_not_kept(tls_files, tmp_path, monkeypatch):
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tls_files / "cert.pem"))  # trust the test's cert
    listener, url = tls_server(tls_files, DATA[:5000], clean=False)
    with pytest.raises(DownloadError, match="stream interrupted"):
        sources.download_file(url, tmp_path / "cut", retries=1, **FAST)
    assert not (tmp_path / "cut").exists()
    listener.close()
    listener, url = tls_server(tls_files, DATA[:5000], clean=True)
    digest = sources.download_file(url, tmp_path / "whole", **FAST)
    assert digest == sha(DATA[:5000])
    listener.close()
