"""Raw sources: each fetched into ``resources/raw/<source>/``, every file checked against its pins.

The walk of one source name, top to bottom:

- **parse time**: the download rule's outputs and params (:func:`source_params`);
- **fetch** (:func:`fetch_source`): each input got once (a mirror file copied, a hub split loaded,
  or a URL streamed by :func:`download_file`: retries, one deadline, clean TLS ends, the bytes as
  sent within a size limit, a full disk reported as such); checked against every pin that applies
  (a configured sha256, git object id or size; the mirror's ``MANIFEST.tsv``; else the sources
  lock, :data:`LOCK_HEADER`, recorded on first use); laid out (:mod:`isotropy.sources.layouts`)
  in a staging folder, swapped in, ``manifest.json`` written last (its presence means the folder
  is complete; a failure leaves neither it nor half a file). Like ``pip --require-hashes``, a file
  nothing can check is refused, and one that does not match is never kept;
- **reading** a fetched source: its manifest, what each input rests on, its files.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import ssl
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

import requests
import urllib3
import yaml
from tqdm.auto import tqdm
from urllib3.util import Retry

from isotropy.configuration.data import Downloads
from isotropy.io import DiskFullError, atomic_path, plain_data, sha256_file, write_json
from isotropy.paths import MANIFEST_NAME, RAW_ROOT
from isotropy.sources.layouts import (
    HUB_FILE,
    LAYOUTS,
    ArchiveError,
    ChecksumError,
    Fetched,
    MemberPins,
    source_kind,
)

log = logging.getLogger(__name__)
MIRROR_ENV = "ISOTROPY_MIRROR"
LOCK_ENV = "ISOTROPY_SOURCES_LOCK"
RELOCK_ENV = "ISOTROPY_RELOCK"
TRUST_PUBLISHED = "published pin"
TRUST_LOCK = "lock (trusted on first use)"
PIN_KEYS = ("sha256", "git_blob", "bytes")  # a value per URL; strongest first
MIRROR_TRUST = {"MANIFEST.tsv": "the mirror's MANIFEST.tsv", "config": TRUST_PUBLISHED}
# Defaults of config `downloads`, from its model: far above the largest real archive (NLPL
# 222.zip unpacks to a few GB); a trickling server is abandoned after 6 hours for one file.
DOWNLOAD_DEFAULTS = Downloads().model_dump()


class DownloadError(RuntimeError):
    """A download failed for good (client error, or retries exhausted)."""


class UnverifiedFileError(ChecksumError):
    """A mirror file that no sha256 (MANIFEST.tsv or config pin) can check."""


class LockMismatchError(ChecksumError):
    """A download differs from what the sources lock recorded on first use."""


# ---------------------------------------------------------------------------------------------
# Parse time: the download rule's outputs and params, and which files the mirror lacks


def source_outputs(name: str, root: str | os.PathLike = RAW_ROOT) -> list[str]:
    """Snakemake outputs of the download of ``name``: its manifest (written last, when complete)."""
    return [str(Path(root) / name / MANIFEST_NAME)]


def source_params(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Everything the download of ``name`` depends on (urls, sha256 pins, mirror files, kind,
    mirror).

    Used as the rule's params, so a change of any of them re-runs the download.
    """
    sources = config.get("sources", {})
    if name not in sources:
        raise ValueError(f"source {name!r} is not in config 'sources' (known: {sorted(sources)})")
    cfg = sources[name]
    mirror = resolve_mirror(config.get("mirror"))
    settings = {**DOWNLOAD_DEFAULTS, **(config.get("downloads") or {})}
    settings.pop("lock_file", None)  # where the lock lives changes no download's bytes
    params = {
        "name": name,
        "kind": source_kind(name, cfg),
        "urls": _as_list(cfg["url"]),
        "sha256": _aligned_pins(cfg),
        "mirror_files": list(cfg.get("mirror") or []),
        "mirror": str(mirror) if mirror else None,
        **settings,
    }
    # Only where given, so that the params (and the re-runs they trigger) of the others stay.
    for key in ("hub", "git_blob", "bytes", "members"):
        if cfg.get(key):
            params[key] = _aligned_pins(cfg, key) if key in PIN_KEYS else plain_data(cfg[key])
    return params


def url_pins(source_cfg: Mapping[str, Any], key: str = "sha256") -> dict[str, str | None]:
    """URL → its configured ``key`` pin (sha256, git_blob …; None where unpinned), for one entry
    of config 'sources'."""
    return dict(zip(_as_list(source_cfg.get("url")), _aligned_pins(source_cfg, key)))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _aligned_pins(cfg: Mapping[str, Any], key: str = "sha256") -> list[str | None]:
    urls, pins = _as_list(cfg["url"]), _as_list(cfg.get(key))
    if len(pins) > len(urls):
        raise ValueError(f"{len(pins)} {key} values given for {len(urls)} urls")
    return pins + [None] * (len(urls) - len(pins))


def resolve_mirror(config_value: str | os.PathLike | None) -> Path | None:
    """The mirror folder to read from: ``$ISOTROPY_MIRROR`` if set (non-empty), else the config
    value; None for "use the original sources". A mirror that is not an existing folder is an
    error, not a silent fallback to the network.
    """
    env_value = os.environ.get(MIRROR_ENV, "").strip()
    value = env_value or (str(config_value) if config_value not in (None, "") else "")
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        origin = f"environment variable {MIRROR_ENV}" if env_value else "config key 'mirror'"
        raise FileNotFoundError(
            f"mirror folder {path} (from {origin}) does not exist; point it at a folder laid out "
            "like shared/mirror, or unset it to download from the original sources"
        )
    return path


def missing_mirror_files(name: str, config: Mapping[str, Any], mirror: Path) -> list[str]:
    """Mirror files of source ``name`` that ``mirror`` lacks (a note if the source lists none).

    Asked while the DAG is built only to plan optional data sets out; a needed file the mirror
    lacks fails its download job, naming the file (:func:`fetch_source`).
    """
    rels = config["sources"][name].get("mirror") or []
    if not rels:
        return [f"(no mirror files configured for source {name!r})"]
    return [rel for rel in rels if not (mirror / rel).is_file()]


# ---------------------------------------------------------------------------------------------
# Fetch: one source from a mirror, the hub or its URLs, checked, laid out, swapped in


def fetch_source(
    name: str,
    params: Mapping[str, Any],
    raw_dir: str | os.PathLike,
    *,
    config: Mapping[str, Any] | None = None,
    retries: int = 5,
    backoff: float = 2.0,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Fetch source ``name`` (``params`` as made by :func:`source_params`) into ``raw_dir``.

    Returns the manifest, also written to ``raw_dir/manifest.json`` once every file is in place.
    On failure nothing new is left in ``raw_dir``. A downloaded file that no published pin checks
    is compared with the sources lock (:func:`lock_path` of ``config``), and recorded there on
    first use.
    """
    raw_dir, params = Path(raw_dir), {**DOWNLOAD_DEFAULTS, **params}
    lock = lock_path(config)
    origin = "mirror" if params.get("mirror") else "url"
    raw_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=raw_dir))
    fetched, staging = work / "fetched", work / "staging"
    try:
        fetched.mkdir()
        staging.mkdir()
        if origin == "mirror":
            items, inputs = _from_mirror(name, params, fetched)
        elif params["kind"] == "hub":
            items, inputs = _from_hub(name, params, fetched)
        else:
            transfer = {"retries": retries, "backoff": backoff, "timeout": timeout}
            items, inputs = _from_urls(params, fetched, lock, transfer)
        records = _lay_out(name, params, origin, items, inputs, staging)
        # What rests on the lock is compared with it (under its flock), recorded on first use.
        locked = [entry for entry in inputs if entry.get("trust") == TRUST_LOCK]
        for entry, record in zip(locked, record_downloads(lock, name, locked) if locked else []):
            entry["lock"] = {"file": str(lock), **record}
        _replace_contents(raw_dir, staging, keep=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    manifest = {
        "source": name,
        "kind": params["kind"],
        "origin": origin,
        "mirror": str(Path(params["mirror"])) if params.get("mirror") else None,
        "inputs": inputs,
        "files": records,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(raw_dir / MANIFEST_NAME, manifest)
    log.info("source %s: %d file(s) from %s in %s", name, len(records), origin, raw_dir)
    return manifest


def _from_mirror(
    name: str, params: Mapping[str, Any], fetched: Path
) -> tuple[list[Fetched], list[dict]]:
    """Copy the source's mirror files, each checked against MANIFEST.tsv and any config pin."""
    mirror, rels = Path(params["mirror"]), params.get("mirror_files") or []
    if missing := missing_mirror_files(name, {"sources": {name: {"mirror": rels}}}, mirror):
        raise FileNotFoundError(
            f"source {name!r} is unavailable: the mirror {mirror} lacks {', '.join(missing)}; "
            f"unset mirror/{MIRROR_ENV} to download it, or leave out what needs it"
        )
    manifest, pins = mirror_pins(params, mirror)
    damaged = (
        "the mirror copy is damaged or was edited (nothing was kept); restore it from the original "
        "source"
    )
    items, inputs = [], []
    for rel in rels:
        local, label, by = fetched / Path(rel).name, f"mirror file {mirror / rel}", pins[rel]
        digest = copy_local(mirror / rel, local, None, label)
        if (row := by.get("MANIFEST.tsv")) is not None:
            where = f"{label} (its MANIFEST.tsv entry)"
            check_pin(local.stat().st_size, row.bytes, where, damaged, what="size")
            check_pin(digest, row.sha256, where, damaged)
        if "config" in by:
            check_pin(
                digest,
                str(by["config"]),
                f"{label} (config sources.{name}.sha256)",
                f"nothing was kept; fix sources.{name}.sha256 in the config only if this file is "
                "known to be right",
            )
        if not by:
            where = (
                f"{mirror} has no MANIFEST.tsv"
                if manifest is None
                else f"{mirror / 'MANIFEST.tsv'} does not list it"
            )
            raise UnverifiedFileError(
                f"{label} cannot be checked ({where}) and nothing was kept; add its path and "
                "sha256 to the mirror's MANIFEST.tsv"
            )
        items.append(Fetched(rel, local))
        inputs.append(
            {
                "mirror_path": rel,
                "sha256": digest,
                "pinned": True,
                "pinned_by": list(by),
                "trust": " and ".join(MIRROR_TRUST[key] for key in by),
            }
        )
    return items, inputs


def _from_hub(
    name: str, params: Mapping[str, Any], fetched: Path
) -> tuple[list[Fetched], list[dict]]:
    """One split of a Hugging Face hub data set (``datasets``; needs the hub or its cache); the
    schema requires its path, split and revision."""
    import datasets  # Hugging Face's, heavy: loaded only when a hub split is fetched

    hub = params["hub"]
    args = (hub["path"], hub["name"]) if hub.get("name") else (hub["path"],)
    log.info("loading %s (split %s) from the Hugging Face hub", "/".join(args), hub["split"])
    dataset = datasets.load_dataset(*args, split=hub["split"], revision=hub.get("revision"))
    local = fetched / HUB_FILE
    dataset.to_parquet(str(local))
    entry = {
        "hub": hub["path"],
        "config": hub.get("name"),
        "split": hub["split"],
        "revision": hub.get("revision"),
        "fingerprint": getattr(dataset, "_fingerprint", None),
        "sha256": sha256_file(local),
        "pinned": True,  # by its hub commit, a published pin (not by the parquet's own bytes)
        "checked_against": ["revision"],
        "trust": TRUST_PUBLISHED,
    }
    return [Fetched(HUB_FILE, local)], [entry]


def _from_urls(
    params: Mapping[str, Any], fetched: Path, lock: Path, transfer: Mapping[str, Any]
) -> tuple[list[Fetched], list[dict]]:
    """Each URL downloaded (its sha256 and size checked as it arrives), then checked against its
    git object id, or against the lock where no published pin checks it: a wrong body is refused
    before it is laid out."""
    items, inputs, name = [], [], params["name"]
    pins = {key: params.get(key) or [None] * len(params["urls"]) for key in PIN_KEYS}
    for index, url in enumerate(params["urls"]):
        pin = {key: values[index] for key, values in pins.items()}
        local = fetched / url_file_name(url)
        log.info("downloading %s", url)
        try:
            digest = download_file(
                url,
                local,
                pin["sha256"],
                size=pin["bytes"],
                source=name,
                max_bytes=params["max_extracted_bytes"],
                max_seconds=params["max_download_seconds"],
                **transfer,
            )
        except DownloadError as error:
            raise DownloadError(f"source {name!r}: {error}") from error
        entry: dict[str, Any] = {"url": url, "sha256": digest, "bytes": local.stat().st_size}
        if pin["git_blob"] is not None:
            entry["git_blob"] = git_blob_id(local)
            key, what = f"sources.{name}.git_blob", "git object id"
            check_pin(entry["git_blob"], pin["git_blob"], url, key=key, what=what)
        published = pin["sha256"] is not None or pin["git_blob"] is not None
        entry["pinned"] = published
        entry["pinned_by"] = ["config"] if pin["sha256"] is not None else []
        # What it was checked against: its config pins, strongest first (then the lock).
        entry["checked_against"] = [k for k in PIN_KEYS if pin[k] is not None]
        entry["trust"] = TRUST_PUBLISHED if published else TRUST_LOCK
        if not published:
            entry["pinned_by"] = ["lock"]
            entry["checked_against"].append("lock")
            check_locked(lock, read_lock(lock), name, url, digest, entry["bytes"])
        items.append(Fetched(local.name, local))
        inputs.append(entry)
    return items, inputs


def _lay_out(
    name: str,
    params: Mapping[str, Any],
    origin: str,
    items: list[Fetched],
    inputs: list[dict],
    staging: Path,
) -> list[dict[str, Any]]:
    """The source's raw files written into ``staging`` by its layout, within the extraction limits,
    every pinned archive member read and matched (downloads only); their records (path, bytes,
    sha256). A full disk names the source's folder.
    """
    pins = params.get("members")
    items = [
        replace(
            item,
            max_bytes=params["max_extracted_bytes"],
            max_members=params["max_archive_members"],
            members=MemberPins(name, pins) if pins else None,
        )
        for item in items
    ]
    try:
        files = LAYOUTS[params["kind"]](items, origin, staging)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT) or isinstance(error, DiskFullError):
            raise
        written = sum(p.stat().st_size for p in staging.rglob("*") if p.is_file())
        full = DiskFullError(staging.parent.parent, written, error)
        full.strerror = f"laying out source {name!r}: {full.strerror}"
        raise full from error
    for item, entry in zip(items, inputs):
        if origin != "url" or item.members is None:
            continue
        if missing := sorted(set(item.members.pins) - set(item.members.checked)):
            raise ArchiveError(
                f"archive {item.name} of source {name!r} holds no member {', '.join(missing)}, "
                f"which sources.{name}.members pins; the archive is not the published one"
            )
        entry["members"] = dict(item.members.checked)
        entry["checked_against"] = [*entry.get("checked_against", []), "members"]
    return [
        {"path": rel, "bytes": (staging / rel).stat().st_size, "sha256": sha256_file(staging / rel)}
        for rel in files
    ]


def _replace_contents(raw_dir: Path, staging: Path, keep: Path) -> None:
    """Swap the staged files (what the layout wrote) into ``raw_dir``, removing what an earlier
    fetch left there."""
    for entry in raw_dir.iterdir():
        if entry == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for entry in staging.iterdir():
        os.replace(entry, raw_dir / entry.name)


# ---------------------------------------------------------------------------------------------
# One file over HTTP(S), or copied, with its pins: the one place a file's bytes are checked

FIX_URL = "fix 'sources' in config/sources.yaml or use a mirror"
RETRYABLE_4XX = {408, 429}  # request timeout and rate limiting: worth retrying although 4xx
PROGRESS_MIN_BYTES = 1 << 20  # a progress bar only for files above 1 MiB
CHUNK = 1 << 20


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
    max_bytes: int = DOWNLOAD_DEFAULTS["max_extracted_bytes"],
    max_seconds: float = DOWNLOAD_DEFAULTS["max_download_seconds"],
    size: int | None = None,
    source: str | None = None,
) -> str:
    """Stream ``url`` to ``dest`` atomically and return the file's sha256.

    Transient failures (HTTP 5xx, 408, 429, timeouts, connection errors, a stream cut short) are
    retried from the first byte ``retries`` times, waiting ``backoff * 2**attempt`` seconds or
    the server's ``Retry-After``; another 4xx fails at once, and so does passing ``max_seconds``
    in all. The server is asked for the file's own bytes (``Accept-Encoding: identity``), and
    what it sends is kept as sent, never inflated: a body it encoded anyway is other bytes, which
    a pin refuses. A body beyond ``size`` or ``max_bytes`` is stopped as it arrives. A ``sha256``
    (or ``size``) pin that does not match raises :class:`ChecksumError` naming its config key
    (``sources.<source>.sha256`` or ``.bytes``); ``dest`` is then not created. ``file://`` URLs
    are copied with the same checks (the config schema admits no other scheme).
    """
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return copy_local(Path(unquote(parsed.path)), Path(dest), sha256, url, source)
    job = _Download(url, size, source, timeout, max_bytes, max_seconds)
    with new_session() as session, atomic_path(dest) as tmp:
        digest = job.attempts(session, tmp, retries, backoff)
        check_pin(tmp.stat().st_size, size, url, key=_pin_key(source, "bytes"), what="size")
        check_pin(digest, sha256, url, key=_pin_key(source, "sha256"))
    return digest


@dataclass
class _Download:
    """One download's settings, and what its current attempt has received; ``deadline`` (a
    ``time.monotonic`` value) bounds all its attempts."""

    url: str
    size: int | None
    source: str | None
    timeout: float
    max_bytes: int
    max_seconds: float
    deadline: float = field(init=False)
    received: int = 0

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.max_seconds

    def check_time(self, doing: str, wait: float = 0.0) -> None:
        if time.monotonic() + wait > self.deadline:
            raise DownloadError(
                f"download of {self.url} passed its deadline of {self.max_seconds:g} s (config "
                f"downloads.max_download_seconds) {doing}, {self.received} bytes received; the "
                "server is too slow or asks to wait too long: try later, raise the limit, or read "
                f"the data from a local copy ({MIRROR_ENV})"
            )

    def attempts(self, session: requests.Session, path: Path, retries: int, backoff: float) -> str:
        for attempt in range(retries + 1):
            try:
                with self.request(session) as response:
                    return self.receive(response, path)
            except _Transient as exc:
                if attempt == retries:
                    raise DownloadError(
                        f"download of {self.url} failed after {retries + 1} attempts: {exc}; "
                        "check the network, or read the data from a local copy: set "
                        f"{MIRROR_ENV} to a folder laid out like shared/mirror"
                    ) from exc
                wait = max(backoff * 2**attempt, exc.retry_after or 0.0)
                self.check_time(f"(waiting {wait:.0f} s before retry {attempt + 1})", wait)
                log.warning(
                    "transient failure for %s (%s); retry %d/%d in %.1fs",
                    self.url,
                    exc,
                    attempt + 1,
                    retries,
                    wait,
                )
                time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def request(self, session: requests.Session) -> requests.Response:
        """The streamed response; a failure worth retrying raises :class:`_Transient`."""
        try:
            # identity: the server is asked for the published file's own bytes, so that its
            # Content-Length and a sha256 pin are that file's (requests would ask for gzip, and
            # GitHub's raw server then sends text gzipped, with the compressed size as length).
            response = session.get(
                self.url, stream=True, timeout=self.timeout, headers={"Accept-Encoding": "identity"}
            )
        except requests.TooManyRedirects:
            raise DownloadError(
                f"download of {self.url} was redirected more than {session.max_redirects} times "
                f"(a redirect loop); the URL is wrong or the server is misconfigured: {FIX_URL}"
            ) from None
        except (requests.exceptions.InvalidSchema, requests.exceptions.InvalidURL) as exc:
            raise DownloadError(
                f"download of {self.url} was redirected to an address that is not http(s) "
                f"({exc}); refused: {FIX_URL}"
            ) from None
        except (requests.Timeout, requests.ConnectionError) as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from exc
        status = response.status_code
        if status >= 500 or status in RETRYABLE_4XX:
            wait = retry_after(response.headers.get("Retry-After"))
            response.close()
            said = f" (Retry-After: {wait:.0f} s)" if wait is not None else ""
            raise _Transient(f"HTTP {status} {response.reason}{said}", wait)
        if status >= 400:
            response.close()
            raise DownloadError(
                f"download of {self.url} failed with HTTP {status} {response.reason}; the URL is "
                f"wrong or the file was moved: {FIX_URL}"
            )
        if status != 200:  # a part (206) nobody asked for, or no body: never kept
            response.close()
            raise _Transient(f"HTTP {status} {response.reason} where the whole file was asked for")
        return response

    def receive(self, response: requests.Response, path: Path) -> str:
        """Write the body as sent and return its sha256; short is transient, slow past the
        deadline fails, and past the size pin or ``max_bytes`` it is refused as it arrives.

        Only reading is the network's: a write that fails (a full disk) is an ``OSError`` of its
        own. A body without length or chunking ends where the server closes the connection: a
        reset or a broken TLS stream is a failure (retried), and a pin checks the rest.
        """
        length = response.headers.get("Content-Length", "").strip()
        total = int(length) if length.isdigit() else None
        self.received, digest = 0, hashlib.sha256()
        progress = tqdm(
            total=total,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=url_file_name(self.url),
            disable=total is not None and total < PROGRESS_MIN_BYTES,
            leave=False,
        )
        with progress, open(path, "wb") as handle:
            while True:
                try:
                    chunk = response.raw.read1(CHUNK, decode_content=False)
                except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                    raise _Transient(
                        f"stream interrupted after {self.received} bytes: {exc}"
                    ) from exc
                if not chunk:
                    break
                handle.write(chunk)
                self.received += len(chunk)
                digest.update(chunk)
                progress.update(len(chunk))
                self.check_time("while receiving")
                if self.size is not None and self.received > self.size:
                    label = f"{self.url} (more sent than pinned)"
                    key = _pin_key(self.source, "bytes")
                    check_pin(self.received, self.size, label, key=key, what="size")
                if self.received > self.max_bytes:
                    raise ArchiveError(
                        f"{self.url} sends more than {self.max_bytes} bytes; nothing was kept. "
                        "Check the source, or raise downloads.max_extracted_bytes in the config "
                        "if the file is known to be right"
                    )
        if total is not None and self.received != total:
            raise _Transient(f"received {self.received} bytes, expected {total}")
        return digest.hexdigest()


def retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delay-seconds or an HTTP date, as urllib3
    reads it); None if absent or unreadable."""
    try:
        return float(Retry().parse_retry_after(value)) if value and value.strip() else None
    except urllib3.exceptions.InvalidHeader:
        return None


def copy_local(
    src: Path, dest: Path, sha256: str | None, label: str, source: str | None = None
) -> str:
    """Copy a local file atomically, checked against its sha256 pin; return its sha256.

    The copy is hashed, not the original: what is checked is exactly what is kept.
    """
    with atomic_path(dest) as tmp:
        shutil.copyfile(src, tmp)
        digest = sha256_file(tmp)
        check_pin(digest, sha256, label, key=_pin_key(source, "sha256"))
    return digest


def _pin_key(source: str | None, pin: str) -> str | None:
    return f"sources.{source}.{pin}" if source else None


def check_pin(
    actual: str | int,
    expected: str | int | None,
    label: str,
    remedy: str | None = None,
    *,
    key: str | None = None,
    what: str = "sha256",
) -> None:
    """A pin that does not match raises :class:`ChecksumError` naming the config ``key`` and
    how to accept the new value: a sha256, a git object id or a size (``what="size"``: config
    ``bytes``, for a file whose sha256 no public source gives, or a MANIFEST.tsv row)."""
    if expected is None or actual == (expected.lower() if isinstance(expected, str) else expected):
        return
    unit = " bytes" if what == "size" else ""
    if remedy is None:
        where = f"set {key} to {actual}" if key else f"change the pin to {actual}"
        remedy = (
            "nothing was kept: the file changed upstream or was damaged in transit. If the new "
            f"file is known to be right, accept it deliberately: {where} in config/sources.yaml "
            "(or in a file given with --configfile)"
        )
    raise ChecksumError(
        f"{what} mismatch for {label}: pinned {expected}{unit}{f' ({key})' if key else ''}, "
        f"got {actual}{unit}; {remedy}"
    )


def git_blob_id(path: str | os.PathLike) -> str:
    """The id git gives ``path``'s bytes as a blob: sha1 of ``blob <size>\\0`` + the bytes.

    It pins a file of a git repository whose sha256 is not known but whose tree is
    (``git ls-tree`` lists it).
    """
    seeded = hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode())
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: seeded).hexdigest()


# ---------------------------------------------------------------------------------------------
# The mirror's MANIFEST.tsv, and what vouches for a mirror file


class MirrorPin(NamedTuple):
    """One MANIFEST.tsv row: the sha256 and byte count a mirror file must have."""

    sha256: str
    bytes: int


_SHA256_RE = re.compile(r"[0-9a-f]{64}")


def read_mirror_manifest(mirror: Path) -> dict[str, MirrorPin] | None:
    """path → (sha256, bytes) from the mirror's MANIFEST.tsv (None if it has none).

    A row without a well-formed sha256 (64 hex digits) and byte count is an error naming its line:
    a row cut short must never turn the check off for its file.
    """
    manifest = mirror / "MANIFEST.tsv"
    if not manifest.is_file():
        return None
    pins: dict[str, MirrorPin] = {}
    with open(manifest, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")  # a header without a column fails each row
        for row in reader:
            rel = (row.get("path") or "").strip()
            digest = (row.get("sha256") or "").strip().lower()
            size = (row.get("bytes") or "").strip()
            if not rel or not _SHA256_RE.fullmatch(digest) or not size.isdigit():
                raise UnverifiedFileError(
                    f"{manifest} line {reader.line_num}: row {rel or '(no path)'!r} needs a path, "
                    f"a byte count and a 64-hex-digit sha256 (bytes {size or 'missing'!r}, sha256 "
                    f"{digest or 'missing'!r}); fix the row from the original file or remove it "
                    "(nothing was read from the mirror)"
                )
            pins[rel] = MirrorPin(digest, int(size))
    return pins


def mirror_pins(
    params: Mapping[str, Any], mirror: Path
) -> tuple[dict[str, MirrorPin] | None, dict[str, dict[str, Any]]]:
    """The mirror's MANIFEST.tsv, and what vouches for each mirror file of a source: its
    ``MANIFEST.tsv`` row, and the config sha256 of the URL whose file it is (same file name).

    A pin of a published file the mirror does not hold (an archive whose members the mirror
    keeps, say) pins the download only: a pin never checks a file it does not describe.
    """
    manifest = read_mirror_manifest(mirror)
    config_pins = {
        url_file_name(url): pin
        for url, pin in zip(params.get("urls") or [], params.get("sha256") or [])
        if pin is not None and url_problem(url) is None
    }
    rows, pins = manifest or {}, {}
    for rel in params.get("mirror_files") or []:
        by: dict[str, Any] = {}
        if rel in rows:
            by["MANIFEST.tsv"] = rows[rel]
        if (pin := config_pins.get(PurePosixPath(rel).name)) is not None:
            by["config"] = pin
        pins[rel] = by
    return manifest, pins


# ---------------------------------------------------------------------------------------------
# The sources lock: a downloaded file that no public record pins is trusted on first use

LOCK_HEADER = """\
# The sources lock: the sha256 and size of every downloaded file that no public record pins,
# written by the workflow on its first download (trusted on first use) and checked on every
# later download and by the audit (isotropy.sources). Commit it with the project, like a
# package lock. Never edit it by hand: a changed upstream file is accepted on purpose with
# `make relock SOURCE=<name>`, which keeps the record it replaces under `replaced`.
"""


def lock_path(config: Mapping[str, Any] | None = None) -> Path:
    """The lock file: ``$ISOTROPY_SOURCES_LOCK``, else config ``downloads.lock_file``, else the
    default."""
    env_value = os.environ.get(LOCK_ENV, "").strip()
    if env_value:
        return Path(env_value)
    configured = ((config or {}).get("downloads") or {}).get("lock_file")
    return Path(configured or DOWNLOAD_DEFAULTS["lock_file"])


def read_lock(path: str | os.PathLike) -> dict[str, dict[str, dict[str, Any]]]:
    """source → URL → its record (``sha256``, ``bytes``, ``locked``, ``replaced``); {} if no lock.

    A lock that is not this shape is an error naming the file: a damaged lock must never turn
    the check off.
    """
    path = Path(path)
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if (problem := _lock_shape_problem(data)) is not None:
        raise ChecksumError(
            f"sources lock {path} is damaged ({problem}); restore it from version control (it is "
            "committed with the project) or delete the damaged source's entry and fetch again"
        )
    return data


def _lock_shape_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "not a mapping of sources"
    for source, urls in data.items():
        if not isinstance(urls, dict):
            return f"source {source!r} is not a mapping of URLs"
        for url, entry in urls.items():
            if not isinstance(entry, dict):
                return f"{source}: {url} has no record"
            digest, size = entry.get("sha256"), entry.get("bytes")
            if not isinstance(digest, str) or len(digest) != 64 or not isinstance(size, int):
                return f"{source}: {url} needs a 64-hex-digit sha256 and a byte count"
    return None


def check_locked(
    path: str | os.PathLike, data: Mapping[str, Any], source: str, url: str, sha256: str, size: int
) -> dict[str, Any] | None:
    """Compare one download with its record in ``data`` (the lock at ``path``, as read); the
    record when it matches, None on first use.

    A difference raises :class:`LockMismatchError`, unless a relock of ``source`` was asked
    for (``$ISOTROPY_RELOCK``: then the record that will be replaced is returned).
    """
    entry = data.get(source, {}).get(url)
    if entry is None or (entry["sha256"] == sha256 and entry["bytes"] == size):
        return entry
    if source in os.environ.get(RELOCK_ENV, "").replace(",", " ").split():
        return entry
    raise LockMismatchError(
        f"sha256 mismatch for {url} (source {source!r}): the sources lock {path} recorded "
        f"{entry['sha256']} ({entry['bytes']} bytes, trusted on first use "
        f"{entry.get('locked', '?')}), got {sha256} ({size} bytes); nothing was kept: the file "
        "changed upstream or was damaged in transit. If the new file is known to be right, accept "
        f"it deliberately: make relock SOURCE={source} (or run once with {RELOCK_ENV}={source})"
    )


def record_downloads(
    path: str | os.PathLike, source: str, downloads: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Write each download (``url``, ``sha256``, ``bytes``) of ``source`` into the lock.

    Checked under an exclusive ``flock`` of ``<path>.flock`` (one writer of the lock at a time;
    closing the file releases it), so a record another job wrote since is compared like any
    other: a mismatch raises :class:`LockMismatchError` before the fetch keeps anything. Returns
    the records now in the lock, in order; a relocked one carries what it replaced.
    """
    path = Path(path)
    now = datetime.now(UTC).isoformat()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".flock"), "a") as flock:
        fcntl.flock(flock, fcntl.LOCK_EX)
        data = read_lock(path)
        urls = data.setdefault(source, {})
        for download in downloads:
            url, digest, size = download["url"], download["sha256"], download["bytes"]
            old = check_locked(path, data, source, url, digest, size)
            if old is not None and old["sha256"] == digest and old["bytes"] == size:
                continue
            entry: dict[str, Any] = {"sha256": digest, "bytes": size, "locked": now}
            if old is None:
                log.warning(
                    "%s: sha256 %s, %d bytes: no published pin; trusted on first use and "
                    "recorded in the sources lock %s (commit it with the project)",
                    url,
                    digest,
                    size,
                    path,
                )
            else:
                replaced = {k: old[k] for k in ("sha256", "bytes", "locked") if k in old}
                entry["replaced"] = [{**replaced, "relocked": now}, *old.get("replaced", [])]
                log.warning(
                    "source %s: RELOCKED %s: sha256 %s accepted in %s (was %s)",
                    source,
                    url,
                    digest,
                    path,
                    old["sha256"],
                )
            urls[url] = entry
        text = yaml.safe_dump(dict(data), sort_keys=True, default_flow_style=False, width=100)
        with atomic_path(path) as tmp:
            tmp.write_text(LOCK_HEADER + text, encoding="utf-8")
        return [dict(urls[d["url"]]) for d in downloads]


# ---------------------------------------------------------------------------------------------
# Reading a fetched source: its manifest, what its inputs rest on, its files, a word2vec file


def read_source_manifest(raw_dir: str | os.PathLike) -> dict[str, Any]:
    """The manifest of a fetched source (its download rule's output: Snakemake makes it first)."""
    return json.loads((Path(raw_dir) / MANIFEST_NAME).read_text())


def input_trust(manifest: Mapping[str, Any]) -> dict[str, str]:
    """What each input of a fetched source rests on (its URL, mirror path or hub data set →
    ``published pin``, ``lock (trusted on first use)``, the mirror's MANIFEST.tsv …), for the
    provenance records of what is made from it and the audit."""
    trust = {}
    for entry in manifest.get("inputs") or []:
        label = entry.get("url") or entry.get("mirror_path") or entry.get("hub") or "?"
        trust[str(label)] = str(
            entry.get("trust") or ("pinned" if entry.get("pinned") else "unverified")
        )
    return trust


def source_files(raw_dir: str | os.PathLike) -> list[Path]:
    """The raw files of a fetched source, as listed in its manifest."""
    raw_dir = Path(raw_dir)
    return [raw_dir / record["path"] for record in read_source_manifest(raw_dir)["files"]]


def word_vectors_file(raw_dir: str | os.PathLike) -> Path:
    """The one word2vec file of a fetched word-vector source."""
    files = source_files(raw_dir)
    if len(files) != 1:
        raise ValueError(
            f"word-vector source {raw_dir} should hold one file, its manifest lists {files}"
        )
    return files[0]
