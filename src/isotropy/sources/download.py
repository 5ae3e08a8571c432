"""One file over HTTP(S), retried by urllib3 as :data:`RETRY` says, plus what urllib3 does not do:
one deadline over all attempts, a cut body retried, a size cap, the pins checked."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, Self, cast
from urllib.parse import unquote, urlparse

import urllib3
from urllib3.exceptions import HTTPError, LocationValueError, MaxRetryError, ProtocolError
from urllib3.util import Retry, Timeout

from isotropy.configuration.data import Downloads
from isotropy.io import atomic_path
from isotropy.logs import ProgressLog
from isotropy.sources.layouts import ArchiveError
from isotropy.sources.pins import check_pin, copy_local

log = logging.getLogger(__name__)
MIRROR_ENV = "ISOTROPY_MIRROR"
USE_MIRROR = (
    f"or read the data from a local copy: set {MIRROR_ENV} to a folder laid out like shared/mirror"
)


class DownloadError(RuntimeError):
    """A download failed for good (client error, retries exhausted, or past its deadline)."""


class Clock(Protocol):
    """What a download reads the time from and waits on: :mod:`time`, or a test's stand-in."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float, /) -> None: ...


class Deadline:
    """One download's time limit, over all its attempts and waits, read on ``clock``."""

    def __init__(self, url: str, seconds: float, clock: Clock) -> None:
        self.url, self.seconds, self.clock = url, seconds, clock
        self.ends, self.received = clock.monotonic() + seconds, 0

    def check(self, doing: str, wait: float = 0.0) -> None:
        if self.clock.monotonic() + wait > self.ends:
            raise DownloadError(
                f"download of {self.url} passed its deadline of {self.seconds:g} s (config "
                f"downloads.max_download_seconds) {doing}, {self.received} bytes received; try "
                f"later, raise the limit, {USE_MIRROR}"
            )


class DeadlineRetry(Retry):
    """urllib3's ``Retry``, waiting on its download's :class:`Deadline`, never past it."""

    deadline: Deadline | None = None  # set by each download on its own copy

    def new(self, **kw: Any) -> Self:
        fresh = super().new(**kw)
        fresh.deadline = self.deadline
        return fresh

    def sleep(self, response: urllib3.BaseHTTPResponse | None = None) -> None:
        if self.deadline is None:  # RETRY itself, outside a download
            return super().sleep(response)
        asked = self.get_retry_after(response) if response is not None else None
        wait = asked or self.get_backoff_time()
        self.deadline.check(f"(waiting {wait:.0f} s before a retry)", wait)
        log.warning("retrying %s in %.0f s", self.deadline.url, wait)
        self.deadline.clock.sleep(wait)


# 5 retries after waits of 0, 4, 8, 16 and 32 s (or what Retry-After asks), for failures a second
# try can mend; one stalled connection or read fails its attempt.
RETRY = DeadlineRetry(total=5, backoff_factor=2, status_forcelist={206, 408, 429, *range(500, 600)})
TIMEOUT = Timeout(connect=60, read=60)


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
    size: int | None = None,
    source: str | None = None,
    max_bytes: int = Downloads().max_extracted_bytes,
    max_seconds: float = Downloads().max_download_seconds,
    clock: Clock = time,
) -> str:
    """Stream ``url`` (or copy a ``file://`` one) to ``dest`` atomically, retried as :data:`RETRY`
    says within ``max_seconds``, and return its sha256. The body is kept as sent, stopped once
    past ``size`` or ``max_bytes``; a pin that does not match leaves no ``dest``."""
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return copy_local(Path(unquote(parsed.path)), Path(dest), sha256, url, source)
    key = f"sources.{source}." if source else None
    with atomic_path(dest) as tmp:
        deadline = Deadline(url, max_seconds, clock)
        digest = _stream(url, tmp, deadline, min(max_bytes, size or max_bytes))
        received = tmp.stat().st_size
        if received > max_bytes:
            raise ArchiveError(
                f"{url} sends more than {max_bytes} bytes; nothing was kept. Check the source, "
                "or raise downloads.max_extracted_bytes in the config if the file is known to "
                "be right"
            )
        label = url if received <= (size or received) else f"{url} (more sent than pinned)"
        check_pin(received, size, label, key=key and f"{key}bytes", what="size")
        check_pin(digest, sha256, url, key=key and f"{key}sha256")
    return digest


def _stream(url: str, path: Path, deadline: Deadline, limit: int) -> str:
    """The body of ``url`` written to ``path``, its sha256 returned; a cut body is retried too."""
    retry = RETRY.new()
    retry.deadline = deadline
    with urllib3.PoolManager() as pool:
        while True:
            try:
                response = pool.request(
                    "GET",
                    url,
                    # the published bytes, which the pins pin (GitHub's raw server gzips text)
                    headers={"Accept-Encoding": "identity"},
                    preload_content=False,
                    retries=retry,
                    timeout=TIMEOUT,
                )
                try:
                    if response.status != 200:
                        raise DownloadError(
                            f"download of {url} failed with HTTP {response.status} "
                            f"{response.reason}; the URL is wrong or the file was moved: fix "
                            "'sources' in config/sources.yaml or use a mirror"
                        )
                    return _receive(response, path, deadline, limit)
                except ProtocolError as cut:  # the body cut short: within the same retries
                    retry = cast(DeadlineRetry, response.retries).increment("GET", url, error=cut)
                finally:
                    response.release_conn()
            except MaxRetryError as exc:
                raise DownloadError(
                    f"download of {url} failed after {RETRY.total} retries: {exc.reason}; "
                    f"check the URL and the network, {USE_MIRROR}"
                ) from exc
            except LocationValueError as exc:  # a redirect to file:// or another non-URL
                raise DownloadError(
                    f"download of {url} was redirected to an address that is not http(s) "
                    f"({exc}); refused"
                ) from None
            retry.sleep()


def _receive(response: Any, path: Path, deadline: Deadline, limit: int) -> str:
    """Write the body as sent and return its sha256; stop past ``limit`` bytes or the deadline."""
    deadline.received, digest = 0, hashlib.sha256()
    length = int(response.headers.get("Content-Length") or 0)
    name = url_file_name(deadline.url)
    progress = (
        ProgressLog(length, f"{name}: bytes", clock=deadline.clock.monotonic) if length else None
    )
    chunks = response.stream(1 << 20, decode_content=False)
    with open(path, "wb") as handle:  # a full disk here is no network error: not retried
        while deadline.received <= limit:
            try:  # urllib3 reports a cut (a short or broken body) as a ProtocolError
                chunk = next(chunks, b"")
            except HTTPError as exc:  # a read timeout too is retried
                cut = f"stream interrupted after {deadline.received} bytes: {exc}"
                raise ProtocolError(cut) from exc
            if not chunk:
                break
            handle.write(chunk)
            deadline.received += len(chunk)
            digest.update(chunk)
            if progress is not None:
                progress.update(len(chunk))
            deadline.check("while receiving")
    log.info("%s: %d bytes received", name, deadline.received)
    return digest.hexdigest()
