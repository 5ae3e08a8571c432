"""Moving one file's bytes: HTTP(S) streaming with retries and resume, local copies, and the pins;
and the names every part of the data path shares (environment switches, limits, errors).

Downloads stream with ``requests``; transient failures (5xx, 408, 429, timeouts, connection
resets, a stream cut short) are retried with exponential backoff, or after the server's
``Retry-After``; other 4xx fail at once. A retry resumes with ``Range`` where the server allows
it (a 206 for exactly the missing bytes; a 200 starts again). One deadline bounds the whole
download, so a server that trickles bytes is abandoned. A configured sha256 (or git object id,
or size) pins a download: a file that does not match is never kept. A full disk is reported as
such (:class:`isotropy.io.DiskFullError`), never as a network problem.

Undoing a response's ``Content-Encoding`` (gzip, deflate) as a stream, within a size limit.

A server may send a body gzip- or deflate-encoded although identity was asked. The body is
decoded chunk by chunk, never whole in memory, and decoding stops (nothing kept) once the output
passes the limit (config ``downloads.max_extracted_bytes``, or a ``bytes`` pin): a small body
that decodes to gigabytes is a decompression bomb.
"""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import logging
import os
import re
import shutil
import ssl
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

import requests
import urllib3
from tqdm.auto import tqdm

from isotropy.defaults import schema_default
from isotropy.io import atomic_path, sha256_file

MIRROR_ENV = "ISOTROPY_MIRROR"
ALLOW_UNVERIFIED_ENV = "ISOTROPY_ALLOW_UNVERIFIED_MIRROR"
# Defaults of config `downloads`, from the schema: far above the largest real archive (NLPL
# 222.zip unpacks to a few GB); a trickling server is abandoned after 6 hours for one file.
DOWNLOAD_DEFAULTS = {
    key: schema_default("downloads", key)
    for key in (
        "allow_unverified_mirror",
        "max_extracted_bytes",
        "max_archive_members",
        "max_download_seconds",
        "lock_file",
    )
}
HUB_FILE = "data.parquet"  # a hub data set's split, as downloaded


class DownloadError(RuntimeError):
    """A download failed for good (client error, or retries exhausted)."""


class ChecksumError(ValueError):
    """A file's sha256 differs from the pinned value."""


class UnverifiedFileError(ChecksumError):
    """A mirror file that no sha256 (MANIFEST.tsv or config pin) can check."""


class ArchiveError(ValueError):
    """An archive that is unsafe to unpack: a member escaping its folder, a link, or a bomb."""


log = logging.getLogger(__name__)

# Status codes worth retrying although they are 4xx: request timeout and rate limiting.
RETRYABLE_4XX = {408, 429}
PROGRESS_MIN_BYTES = 1 << 20  # a progress bar only for files above 1 MiB
CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")


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


class _StrictEOFContext(ssl.SSLContext):
    """TLS whose sockets report a stream cut without ``close_notify`` as an error.

    Python hides such a cut as the end of the stream (``suppress_ragged_eofs``). A body that
    carries its length or chunks never reads to that end; a body delimited by the connection's
    close does, and must then fail (and be retried) rather than be kept short.
    """

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        kwargs["suppress_ragged_eofs"] = False
        return super().wrap_socket(*args, **kwargs)


class _StrictEOFAdapter(requests.adapters.HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        context = _StrictEOFContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_default_certs()
        kwargs["ssl_context"] = context
        super().init_poolmanager(*args, **kwargs)


def new_session() -> requests.Session:
    """A ``requests`` session whose https connections end only where TLS says they end."""
    session = requests.Session()
    session.mount("https://", _StrictEOFAdapter())
    return session


@dataclass(frozen=True)
class _Job:
    """One download's settings; ``deadline`` (a ``time.monotonic`` value) bounds all its
    attempts."""

    url: str
    sha256: str | None
    size: int | None
    pin_key: str | None
    timeout: float
    chunk_size: int
    max_bytes: int
    max_seconds: float
    deadline: float

    def check_time(self, doing: str, received: int, wait: float = 0.0) -> None:
        if time.monotonic() + wait > self.deadline:
            raise DownloadError(
                f"download of {self.url} passed its deadline of {self.max_seconds:g} s (config "
                f"downloads.max_download_seconds) {doing}, {received} bytes received; the server "
                "is too slow or asks to wait too long: try later, raise the limit, or read the "
                f"data from a local copy ({MIRROR_ENV})"
            )


@dataclass
class _Body:
    """What a download has received so far, kept across attempts so that a retry can resume."""

    path: Path
    received: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    total: int | None = None  # the whole body's length, when the server said it
    validator: str | None = None  # strong ETag or Last-Modified of the response the bytes came from
    encoding: str = ""

    def restart(self) -> None:
        self.path.write_bytes(b"")
        self.received, self.digest, self.total, self.validator = 0, hashlib.sha256(), None, None

    def add(self, chunk: bytes) -> None:
        self.received += len(chunk)
        self.digest.update(chunk)

    def resume_headers(self, pinned: bool) -> dict[str, str]:
        """``Range`` for the missing bytes, where resuming cannot splice two versions unnoticed:
        the server named the version (``If-Range``), or a pin checks the whole file."""
        if not self.received or self.encoding or not (self.validator or pinned):
            return {}
        headers = {"Range": f"bytes={self.received}-"}
        if self.validator:
            headers["If-Range"] = self.validator
        return headers


class _Transient(Exception):
    """Internal: a failure worth retrying (after ``retry_after`` seconds, if the server said)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


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
    max_bytes: int = DOWNLOAD_DEFAULTS["max_extracted_bytes"],
    max_seconds: float = DOWNLOAD_DEFAULTS["max_download_seconds"],
    size: int | None = None,
    pin_key: str | None = None,
) -> str:
    """Stream ``url`` to ``dest`` atomically and return the file's sha256.

    Transient failures (HTTP 5xx, 408, 429, timeouts, connection errors, a stream cut short) are
    retried ``retries`` times, waiting ``backoff * 2**attempt`` seconds or the server's
    ``Retry-After``, resuming where the last attempt stopped when the server allows it; another
    4xx fails at once, and so does passing ``max_seconds`` in all. A ``sha256`` (or ``size``) pin
    that does not match raises :class:`ChecksumError` naming ``pin_key`` (the config key of the
    pin); ``dest`` is then not created. A body that a ``Content-Encoding`` inflates beyond
    ``max_bytes`` is refused. ``file://`` URLs are copied with the same checks.
    """
    dest = Path(dest)
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return copy_local(Path(unquote(parsed.path)), dest, sha256, url, pin_key=pin_key)
    if parsed.scheme not in {"http", "https"}:
        raise ValueError(f"unsupported URL scheme in {url!r}; expected http(s):// or file://")
    limit = min(max_bytes, size) if size is not None else max_bytes
    deadline = time.monotonic() + max_seconds
    job = _Job(url, sha256, size, pin_key, timeout, chunk_size, limit, max_seconds, deadline)
    own_session = session is None
    session = session or new_session()
    try:
        with atomic_path(dest) as tmp:
            digest = _attempts(session, job, _Body(tmp), retries, backoff)
            check_size(tmp.stat().st_size, size, url, pin_key)
            check_digest(digest, sha256, url, pin_key=pin_key)
        return digest
    finally:
        if own_session:
            session.close()


def _attempts(
    session: requests.Session, job: _Job, body: _Body, retries: int, backoff: float
) -> str:
    for attempt in range(retries + 1):
        try:
            return _stream_once(session, job, body)
        except _Transient as exc:
            if attempt == retries:
                raise DownloadError(
                    f"download of {job.url} failed after {retries + 1} attempts: {exc}; check the "
                    f"network, or read the data from a local copy: set {MIRROR_ENV} to a folder "
                    "laid out like shared/mirror"
                ) from exc
            wait = max(backoff * 2**attempt, exc.retry_after or 0.0)
            job.check_time(
                f"(waiting {wait:.0f} s before retry {attempt + 1})", body.received, wait
            )
            log.warning(
                "transient failure for %s (%s); retry %d/%d in %.1fs%s",
                job.url,
                exc,
                attempt + 1,
                retries,
                wait,
                f", resuming at byte {body.received}"
                if body.resume_headers(bool(job.sha256))
                else "",
            )
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _stream_once(session: requests.Session, job: _Job, body: _Body) -> str:
    """One attempt: the body's bytes appended to ``body`` (or it restarted); its sha256 when
    whole."""
    headers = {"Accept-Encoding": "identity", **body.resume_headers(bool(job.sha256))}
    with _request(session, job, headers, body) as response:
        _start(response, body, job.url)
        with _progress_bar(body.total, url_file_name(job.url)) as bar:
            bar.update(body.received)
            _receive(response, body, job, bar)
    if not body.encoding:
        return body.digest.hexdigest()
    # The body exactly as sent (its length is what Content-Length counts), decoded here by us.
    decoded = body.path.with_name(body.path.name + ".decoded")
    try:
        undo_content_encoding(
            body.path, decoded, body.encoding, job.url, url_file_name(job.url), job.max_bytes
        )
        os.replace(decoded, body.path)
    except BodyDecodeError as exc:
        body.restart()
        raise _Transient(str(exc)) from exc
    finally:
        decoded.unlink(missing_ok=True)
    return sha256_file(body.path)


def _request(
    session: requests.Session, job: _Job, headers: dict[str, str], body: _Body
) -> requests.Response:
    """The streamed response to ``job.url``; a failure worth retrying raises :class:`_Transient`."""
    try:
        # identity: the server is asked for the published file's own bytes, so that its
        # Content-Length and a sha256 pin are that file's (requests would ask for gzip, and
        # GitHub's raw server then sends text gzipped, with the compressed size as length).
        response = session.get(job.url, stream=True, timeout=job.timeout, headers=headers)
    except requests.TooManyRedirects:
        raise DownloadError(
            f"download of {job.url} was redirected more than {session.max_redirects} times (a "
            "redirect loop); the URL is wrong or the server is misconfigured: fix 'sources' in "
            "config.yaml or use a mirror"
        ) from None
    except (requests.exceptions.InvalidSchema, requests.exceptions.InvalidURL) as exc:
        raise DownloadError(
            f"download of {job.url} was redirected to an address that is not http(s) ({exc}); "
            "refused: fix 'sources' in config.yaml or use a mirror"
        ) from None
    except (requests.Timeout, requests.ConnectionError) as exc:
        raise _Transient(f"{type(exc).__name__}: {exc}") from exc
    status = response.status_code
    if status == 416 and "Range" in headers:  # the partial file is not a prefix of this version
        response.close()
        body.restart()
        raise _Transient("the server refused to resume (HTTP 416); starting again")
    if status >= 500 or status in RETRYABLE_4XX:
        wait = retry_after(response.headers.get("Retry-After"))
        response.close()
        said = f" (Retry-After: {wait:.0f} s)" if wait is not None else ""
        raise _Transient(f"HTTP {status} {response.reason}{said}", wait)
    if status >= 400:
        response.close()
        raise DownloadError(
            f"download of {job.url} failed with HTTP {status} {response.reason}; "
            "the URL is wrong or the file was moved: fix 'sources' in config.yaml or use a mirror"
        )
    return response


def retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delay-seconds or an HTTP date); None if
    absent."""
    if not value or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _start(response: requests.Response, body: _Body, url: str) -> None:
    """Where this response's bytes go: after those kept (a 206 for exactly them), or from byte 0."""
    encoding = response.headers.get("Content-Encoding", "").strip().lower()
    encoding = "" if encoding == "identity" else encoding
    length = response.headers.get("Content-Length")
    if response.status_code == 206:
        content_range = response.headers.get("Content-Range", "").strip()
        match = CONTENT_RANGE.match(content_range)
        whole = None if match is None or match[3] == "*" else int(match[3])
        if (
            match is None
            or encoding
            or int(match[1]) != body.received
            or (whole is not None and int(match[2]) != whole - 1)
            or (body.total is not None and whole not in (None, body.total))
        ):
            response.close()
            body.restart()
            raise _Transient(
                f"the server answered a request for bytes {body.received}- with Content-Range "
                f"{content_range!r}; starting again"
            )
        log.info("%s: resuming at byte %d of %s", url, body.received, whole or "?")
        body.total = whole
        return
    if body.received:
        log.info("%s: the server sent the whole file again (HTTP 200); starting again", url)
    body.restart()
    body.encoding = encoding
    body.total = int(length) if length and length.strip().isdigit() else None
    etag = response.headers.get("ETag", "")
    body.validator = (
        etag if etag and not etag.startswith("W/") else response.headers.get("Last-Modified")
    )


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


def _receive(response: requests.Response, body: _Body, job: _Job, bar: tqdm) -> None:
    """Append the body as sent (no decoding) to ``body``; short is transient, slow past the deadline
    fails.

    Only reading is the network's: a write that fails (a full disk) is an ``OSError`` of its own.
    A body without length or chunking ends where the server closes the connection: a reset or a
    broken TLS stream is a failure (retried), and a pin checks the rest.
    """
    with open(body.path, "ab") as handle:
        while True:
            try:
                chunk = response.raw.read1(job.chunk_size, decode_content=False)
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                raise _Transient(f"stream interrupted after {body.received} bytes: {exc}") from exc
            if not chunk:
                break
            handle.write(chunk)
            body.add(chunk)
            bar.update(len(chunk))
            job.check_time("while receiving", body.received)
            if job.size is not None and not body.encoding and body.received > job.size:
                check_size(
                    body.received, job.size, f"{job.url} (more sent than pinned)", job.pin_key
                )
    if body.total is not None and body.received != body.total:
        raise _Transient(f"received {body.received} bytes, expected {body.total}")


def copy_local(
    src: Path,
    dest: Path,
    sha256: str | None,
    label: str,
    remedy: str | None = None,
    *,
    pin_key: str | None = None,
) -> str:
    if not src.is_file():
        raise DownloadError(f"{label}: local file {src} does not exist")
    digest = hashlib.sha256()
    with atomic_path(dest) as tmp, open(src, "rb") as reader, open(tmp, "wb") as writer:
        for chunk in iter(lambda: reader.read(1 << 20), b""):
            writer.write(chunk)
            digest.update(chunk)
        writer.flush()
        check_digest(digest.hexdigest(), sha256, label, remedy, pin_key=pin_key)
    return digest.hexdigest()


def _accept_remedy(pin_key: str | None, actual: str | int) -> str:
    where = f"set {pin_key} to {actual}" if pin_key else f"change the pin to {actual}"
    return (
        "nothing was kept: the file changed upstream or was damaged in transit. If the new file "
        f"is known to be right, accept it deliberately: {where} in config.yaml (or in a file given "
        "with --configfile)"
    )


def check_digest(
    actual: str,
    expected: str | None,
    label: str,
    remedy: str | None = None,
    *,
    pin_key: str | None = None,
    what: str = "sha256",
) -> None:
    if expected is not None and actual != expected.lower():
        raise ChecksumError(
            f"{what} mismatch for {label}: pinned {expected}"
            f"{f' ({pin_key})' if pin_key else ''}, got {actual}; "
            f"{remedy or _accept_remedy(pin_key, actual)}"
        )


def check_size(actual: int, expected: int | None, label: str, pin_key: str | None) -> None:
    """A size pin (config ``bytes``: a file whose sha256 no public source gives)."""
    if expected is not None and actual != expected:
        key = pin_key.rsplit(".", 1)[0] + ".bytes" if pin_key else None
        raise ChecksumError(
            f"size mismatch for {label}: pinned {expected} bytes{f' ({key})' if key else ''}, "
            f"got {actual}; {_accept_remedy(key, actual)}"
        )


def md5_file(path: str | os.PathLike) -> str:
    """The md5 of ``path``: only to compare with a publisher's md5 (nltk_data's index.xml), beside
    a stronger pin, never as the only one."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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


GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20


class BodyDecodeError(ValueError):
    """The encoded body does not decode (damaged in transit: worth fetching again)."""


def undo_content_encoding(
    wire: Path, out: Path, encoding: str, url: str, file_name: str, max_bytes: int
) -> None:
    """Write to ``out`` the file a body sent with ``Content-Encoding: encoding`` stands for.

    A gzip-encoded body is unzipped, except where the published file is itself gzip (``.gz``,
    ``.tgz``) and the unzipped body is not: then the server only labelled the file's own
    compression (Apache's ``AddEncoding x-gzip .gz``), and the body is the file.
    """
    try:
        if encoding in ("gzip", "x-gzip"):
            if file_name.lower().endswith((".gz", ".tgz")):
                with gzip.open(wire, "rb") as inner:
                    if inner.read(2) != GZIP_MAGIC:
                        shutil.copyfile(wire, out)
                        return
            chunks = _gunzip(wire)
        elif encoding == "deflate":
            chunks = _inflate(wire)
        else:
            raise DownloadError(
                f"{url} came with Content-Encoding {encoding!r}, which this downloader cannot "
                "undo; download the file by hand and read it from a mirror folder"
            )
        written = 0
        with open(out, "wb") as writer:
            for chunk in chunks:
                written += len(chunk)
                if written > max_bytes:
                    raise ArchiveError(
                        f"{url}: its {encoding}-encoded body decodes to more than {max_bytes} "
                        "bytes, which looks like a decompression bomb; nothing was kept. Check "
                        "the source, or raise downloads.max_extracted_bytes in the config if the "
                        "file is known to be right"
                    )
                writer.write(chunk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise BodyDecodeError(f"the {encoding}-encoded body does not decode: {exc}") from exc


def _gunzip(path: Path) -> Iterator[bytes]:
    with gzip.open(path, "rb") as reader:  # every member of a multi-member body
        while chunk := reader.read(CHUNK):
            yield chunk


def _inflate(path: Path) -> Iterator[bytes]:
    """A deflate body: zlib-wrapped as the standard says, or raw as some servers send it."""
    with open(path, "rb") as reader:
        head = reader.read(2)
        reader.seek(0)
        wrapped = len(head) == 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0
        inflater = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        while data := reader.read(CHUNK):
            while data:
                yield inflater.decompress(data, CHUNK)
                data = inflater.unconsumed_tail
        yield inflater.flush()
