"""Moving one file's bytes: HTTP(S) streaming with retries, local copies, and the digests that pin them.

Downloads stream with ``requests``; transient failures (5xx, 408, 429, timeouts, connection
resets, a stream cut short) are retried with exponential backoff, other 4xx fail at once. A
configured sha256 pins a download: a file that does not match is never kept.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import time
import zlib
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

import requests
import urllib3
from tqdm.auto import tqdm

from isotropy.io import atomic_path, sha256_file
from isotropy.sources.settings import MIRROR_ENV, ChecksumError, DownloadError

log = logging.getLogger(__name__)

# Status codes worth retrying although they are 4xx: request timeout and rate limiting.
RETRYABLE_4XX = {408, 429}
PROGRESS_MIN_BYTES = 1 << 20  # a progress bar only for files above 1 MiB
GZIP_MAGIC = b"\x1f\x8b"


def url_problem(url: str) -> str | None:
    """Why a download URL cannot be saved under its own file name (None if it can)."""
    name = PurePosixPath(unquote(urlparse(url).path)).name
    if name in (".", "..") or "\0" in name:
        return (
            f"URL {url!r} ends in {name!r} once decoded, which is not a file name; "
            "give the address of the file itself"
        )
    return None


def url_file_name(url: str) -> str:
    """The file name a download is saved under: the last part of the URL's decoded path."""
    if (problem := url_problem(url)) is not None:
        raise ValueError(problem)
    return PurePosixPath(unquote(urlparse(url).path)).name or "download"


def download_file(
    url: str,
    dest: str | os.PathLike,
    sha256: str | None = None,
    *,
    retries: int = 5,
    backoff: float = 2.0,
    timeout: float = 60.0,
    session: requests.Session | None = None,
    chunk_size: int = 1 << 20,
) -> str:
    """Stream ``url`` to ``dest`` atomically and return the file's sha256.

    Transient failures (HTTP 5xx, 408, 429, timeouts, connection errors, a stream cut short) are
    retried ``retries`` times, waiting ``backoff * 2**attempt`` seconds; another 4xx fails at once.
    A ``sha256`` pin that does not match raises :class:`ChecksumError`; ``dest`` is then not
    created (the partial file is removed). ``file://`` URLs are copied with the same checks.
    """
    dest = Path(dest)
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return copy_local(Path(unquote(parsed.path)), dest, sha256, url)
    if parsed.scheme not in {"http", "https"}:
        raise ValueError(f"unsupported URL scheme in {url!r}; expected http(s):// or file://")

    own_session = session is None
    session = session or requests.Session()
    try:
        for attempt in range(retries + 1):
            try:
                return _stream_once(session, url, dest, sha256, timeout, chunk_size)
            except _Transient as exc:
                if attempt == retries:
                    raise DownloadError(
                        f"download of {url} failed after {retries + 1} attempts: {exc}; check the network, "
                        f"or read the data from a local copy: set {MIRROR_ENV} to a folder laid out like shared/mirror"
                    ) from exc
                wait = backoff * 2**attempt
                log.warning(
                    "transient failure for %s (%s); retry %d/%d in %.1fs",
                    url,
                    exc,
                    attempt + 1,
                    retries,
                    wait,
                )
                time.sleep(wait)
    finally:
        if own_session:
            session.close()
    raise AssertionError("unreachable")  # pragma: no cover


class _Transient(Exception):
    """Internal: a failure worth retrying."""


def _stream_once(
    session: requests.Session,
    url: str,
    dest: Path,
    sha256: str | None,
    timeout: float,
    chunk_size: int,
) -> str:
    """One attempt at ``url``: the file lands at ``dest`` only whole and matching its pin."""
    with _request(session, url, timeout) as response:
        total = int(response.headers.get("Content-Length") or 0) or None
        encoding = response.headers.get("Content-Encoding", "").strip().lower()
        encoding = "" if encoding == "identity" else encoding
        with atomic_path(dest) as tmp, _progress_bar(total, dest.name) as bar:
            if not encoding:
                digest = _receive(response, tmp, total, chunk_size, bar)
                return _finish(digest, sha256, url)
            # The body exactly as sent (its length is what Content-Length counts); the
            # Content-Encoding is undone afterwards, by us.
            wire = tmp.with_name(tmp.name + ".wire")
            try:
                _receive(response, wire, total, chunk_size, bar)
                _undo_content_encoding(wire, tmp, encoding, url)
            finally:
                wire.unlink(missing_ok=True)
            return _finish(sha256_file(tmp), sha256, url)


def _request(session: requests.Session, url: str, timeout: float) -> requests.Response:
    """The streamed response to ``url``; a failure worth retrying raises :class:`_Transient`."""
    try:
        # identity: the server is asked for the published file's own bytes, so that its
        # Content-Length and a sha256 pin are that file's (requests would ask for gzip, and
        # GitHub's raw server then sends text gzipped, with the compressed size as length).
        response = session.get(
            url, stream=True, timeout=timeout, headers={"Accept-Encoding": "identity"}
        )
    except (requests.Timeout, requests.ConnectionError) as exc:
        raise _Transient(f"{type(exc).__name__}: {exc}") from exc
    status = response.status_code
    if status >= 500 or status in RETRYABLE_4XX:
        response.close()
        raise _Transient(f"HTTP {status} {response.reason}")
    if status >= 400:
        response.close()
        raise DownloadError(
            f"download of {url} failed with HTTP {status} {response.reason}; "
            "the URL is wrong or the file was moved: fix 'sources' in config.yaml or use a mirror"
        )
    return response


def _progress_bar(total: int | None, label: str) -> tqdm:
    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=label,
        disable=total is not None and total < PROGRESS_MIN_BYTES,
        leave=False,
    )


def _receive(
    response: requests.Response, path: Path, total: int | None, chunk_size: int, bar: tqdm
) -> str:
    """Write the body to ``path`` as sent (no decoding) and return its sha256; short is transient."""
    digest = hashlib.sha256()
    received = 0
    with open(path, "wb") as handle:
        try:
            for chunk in response.raw.stream(chunk_size, decode_content=False):
                handle.write(chunk)
                digest.update(chunk)
                received += len(chunk)
                bar.update(len(chunk))
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise _Transient(f"stream interrupted after {received} bytes: {exc}") from exc
    if total is not None and received != total:
        raise _Transient(f"received {received} bytes, expected {total}")
    return digest.hexdigest()


def _finish(digest: str, sha256: str | None, url: str) -> str:
    check_digest(digest, sha256, url)
    return digest


def _undo_content_encoding(wire: Path, out: Path, encoding: str, url: str) -> None:
    """Write to ``out`` the file a body sent with ``Content-Encoding: encoding`` stands for.

    Some servers send it although identity was asked. A gzip-encoded body is unzipped, except
    where the published file is itself gzip (``.gz``, ``.tgz``) and the unzipped body is not:
    then the server only labelled the file's own compression (Apache's ``AddEncoding x-gzip
    .gz``), and the body is the file.
    """
    name = url_file_name(url).lower()
    try:
        if encoding in ("gzip", "x-gzip"):
            if name.endswith((".gz", ".tgz")):
                with gzip.open(wire, "rb") as inner:
                    if inner.read(2) != GZIP_MAGIC:
                        shutil.copyfile(wire, out)
                        return
            with gzip.open(wire, "rb") as reader, open(out, "wb") as writer:
                shutil.copyfileobj(reader, writer, 1 << 20)
        elif encoding == "deflate":
            data = wire.read_bytes()
            try:
                plain = zlib.decompress(data)
            except zlib.error:  # deflate without the zlib wrapper, as some servers send it
                plain = zlib.decompress(data, -zlib.MAX_WBITS)
            out.write_bytes(plain)
        else:
            raise DownloadError(
                f"{url} came with Content-Encoding {encoding!r}, which this downloader cannot "
                "undo; download the file by hand and read it from a mirror folder"
            )
    except (OSError, EOFError, zlib.error) as exc:
        raise _Transient(f"the {encoding}-encoded body does not decode: {exc}") from exc


def copy_local(
    src: Path, dest: Path, sha256: str | None, label: str, remedy: str | None = None
) -> str:
    if not src.is_file():
        raise DownloadError(f"{label}: local file {src} does not exist")
    digest = hashlib.sha256()
    with atomic_path(dest) as tmp, open(src, "rb") as reader, open(tmp, "wb") as writer:
        for chunk in iter(lambda: reader.read(1 << 20), b""):
            writer.write(chunk)
            digest.update(chunk)
        writer.flush()
        check_digest(digest.hexdigest(), sha256, label, remedy)
    return digest.hexdigest()


def check_digest(actual: str, expected: str | None, label: str, remedy: str | None = None) -> None:
    if expected is not None and actual != expected.lower():
        remedy = remedy or (
            "the file changed upstream or was corrupted in transit (nothing was kept); update the pin in "
            "config.yaml only if the new file is known to be right"
        )
        raise ChecksumError(
            f"sha256 mismatch for {label}: expected {expected}, got {actual}; {remedy}"
        )


def git_blob_id(path: str | os.PathLike) -> str:
    """The id git gives ``path``'s bytes as a blob: sha1 of ``blob <size>\\0`` + the bytes.

    It pins a file of a git repository whose sha256 is not known but whose tree is
    (``git ls-tree`` lists it).
    """
    path = Path(path)
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
