"""Fetch raw sources into ``resources/raw/<source>/``: from the original URLs or from a mirror.

Every source ends in the same raw layout whichever way it came, so one parser serves both:

===================  ==============================================================
kind                 files in ``resources/raw/<source>/``
===================  ==============================================================
polarity             ``rt-polarity.pos``, ``rt-polarity.neg`` (UTF-8; the Cornell tarball is Latin-1/cp1252)
snli                 ``snli_1.0_dev.jsonl``
wordnet              ``corpora/wordnet.zip`` (``NLTK_DATA=resources/raw/<source>`` works)
supersense_words     ``words.txt``
supersense_features  ``words_features.zip`` (Tikhonov et al.'s word pairs with supersense flags)
codwoe               ``en.*.json`` / ``en.*.csv`` (the English files of the release)
word_vectors         one word2vec file (``model.bin`` from an NLPL zip, or the file as given)
glue                 ``train.tsv`` (MRPC: rebuilt from ``msr_paraphrase_train.txt`` minus the dev ids)
hub                  ``data.parquet``: one split of a Hugging Face hub data set (``datasets``),
                     or from a mirror its files as named there (GLUE: ``train.tsv``, ``dev.tsv``)
===================  ==============================================================

Beside them, ``manifest.json`` (the Snakemake output of the download rule) records where the
data came from and the sha256 of every downloaded and every stored file. It is written last, so
its presence means the folder is complete; a failure leaves neither the manifest nor half a file.

Downloads stream with ``requests``; transient failures (5xx, 408, 429, timeouts, connection
resets) are retried with exponential backoff, other 4xx fail at once. A configured sha256 pins a
download. From a mirror, every file is checked against the mirror's ``MANIFEST.tsv`` and against a
configured pin of the same file; like ``pip --require-hashes``, a mirror file nothing can check (no
MANIFEST.tsv, or not listed in it) is refused unless unverified mirrors are allowed
(``downloads.allow_unverified_mirror`` or ``$ISOTROPY_ALLOW_UNVERIFIED_MIRROR=1``).

Archives are never unpacked with ``extractall``: the wanted members are read and written under
their base name. Every member must still pass :func:`tarfile.data_filter` (zip members the same
name rules), and an archive with more members or more unpacked bytes than the
``downloads`` limits is refused (a zip or tar bomb would otherwise fill the disk).
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import hashlib
import logging
import os
import re
import shutil
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

import requests
import urllib3
from tqdm.auto import tqdm

from isotropy.io import atomic_path, sha256_file, write_json
from isotropy.workflow.paths import MANIFEST_NAME, RAW_ROOT

log = logging.getLogger(__name__)

MIRROR_ENV = "ISOTROPY_MIRROR"
ALLOW_UNVERIFIED_ENV = "ISOTROPY_ALLOW_UNVERIFIED_MIRROR"
# Defaults of config `downloads`: far above the largest real archive (NLPL 222.zip unpacks to a few GB).
DOWNLOAD_DEFAULTS = {
    "allow_unverified_mirror": False,
    "max_extracted_bytes": 32 * 1024**3,
    "max_archive_members": 100_000,
}


HUB_FILE = "data.parquet"  # a hub data set's split, as downloaded
# Status codes worth retrying although they are 4xx: request timeout and rate limiting.
RETRYABLE_4XX = {408, 429}
PROGRESS_MIN_BYTES = 1 << 20  # a progress bar only for files above 1 MiB


# GLUE task → its folder in the GLUE data layout (and in a mirror).
GLUE_FOLDERS = {
    "cola": "CoLA",
    "mnli": "MNLI",
    "mrpc": "MRPC",
    "qnli": "QNLI",
    "qqp": "QQP",
    "rte": "RTE",
    "sst2": "SST-2",
    "wnli": "WNLI",
}


class DownloadError(RuntimeError):
    """A download failed for good (client error, or retries exhausted)."""


class ChecksumError(ValueError):
    """A file's sha256 differs from the pinned value."""


class UnverifiedFileError(ChecksumError):
    """A mirror file that no sha256 (MANIFEST.tsv or config pin) can check."""


class ArchiveError(ValueError):
    """An archive that is unsafe to unpack: a member escaping its folder, a link, or a bomb."""


# ---------------------------------------------------------------------------------------------
# Configuration helpers used by the rules


def resolve_mirror(config_value: str | os.PathLike | None) -> Path | None:
    """The mirror folder to read from: ``$ISOTROPY_MIRROR`` if set (non-empty), else the config value.

    Returns None for "use the original sources". A mirror that is not an existing folder is an
    error, not a silent fallback to the network.
    """
    env_value = os.environ.get(MIRROR_ENV, "").strip()
    value = env_value or (str(config_value) if config_value not in (None, "") else "")
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    origin = f"environment variable {MIRROR_ENV}" if env_value else "config key 'mirror'"
    if not path.is_dir():
        raise FileNotFoundError(
            f"mirror folder {path} (from {origin}) does not exist; point it at a folder laid out "
            "like shared/mirror, or unset it to download from the original sources"
        )
    return path


def source_kind(name: str, source_cfg: Mapping[str, Any] | None = None) -> str:
    """How a source is laid out: its config ``kind`` if given, else inferred from its name."""
    if source_cfg and source_cfg.get("kind"):
        return str(source_cfg["kind"])
    if name.startswith("glue_"):
        return "glue"
    if name in {"word2vec", "word_vectors", "glove", "fasttext"}:
        return "word_vectors"
    if name in LAYOUTS:
        return name
    raise ValueError(
        f"source {name!r} has no known layout; give it a 'kind' in config.yaml (one of {sorted(LAYOUTS)})"
    )


def source_dir(name: str, root: str | os.PathLike = RAW_ROOT) -> Path:
    """Folder of a source's raw files."""
    return Path(root) / name


def source_outputs(name: str, root: str | os.PathLike = RAW_ROOT) -> list[str]:
    """Snakemake outputs of the download of ``name``: its manifest (written last, when complete)."""
    return [str(source_dir(name, root) / MANIFEST_NAME)]


def source_params(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the download of ``name`` depends on (urls, sha256 pins, mirror files, kind, mirror).

    Used as the rule's params, so a change of any of them re-runs the download.
    """
    sources = config.get("sources", {})
    if name not in sources:
        raise ValueError(f"source {name!r} is not in config 'sources' (known: {sorted(sources)})")
    cfg = sources[name]
    mirror = resolve_mirror(config.get("mirror"))
    settings = {**DOWNLOAD_DEFAULTS, **(config.get("downloads") or {})}
    if os.environ.get(ALLOW_UNVERIFIED_ENV, "").strip() not in ("", "0"):
        settings["allow_unverified_mirror"] = True
    return {
        "name": name,
        "kind": source_kind(name, cfg),
        "urls": _as_list(cfg["url"]),
        "sha256": _aligned_pins(cfg),
        "mirror_files": list(cfg.get("mirror") or []),
        "mirror": str(mirror) if mirror else None,
        **settings,
        **({"hub": dict(cfg["hub"])} if cfg.get("hub") else {}),
        # Only where given, so that the params (and the re-runs they trigger) of the others stay.
        **({"git_blob": _aligned_pins(cfg, "git_blob")} if cfg.get("git_blob") else {}),
    }


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


def mirror_path_problem(rel: str) -> str | None:
    """Why a configured mirror file would lie outside the mirror folder (None if it lies inside)."""
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts or "\0" in rel:
        return (
            f"{rel!r} is not a path inside the mirror folder; "
            "list files relative to the mirror, without '..' or a leading '/'"
        )
    return None


def missing_mirror_files(
    name: str, config: Mapping[str, Any], mirror: Path | None = None
) -> list[str]:
    """Mirror files of source ``name`` that the mirror lacks (empty without a mirror)."""
    mirror = mirror if mirror is not None else resolve_mirror(config.get("mirror"))
    if mirror is None:
        return []
    files = config["sources"][name].get("mirror") or []
    if not files:
        return [f"(no mirror files configured for source {name!r})"]
    return [rel for rel in files if not (mirror / rel).is_file()]


def available_glue_tasks(config: Mapping[str, Any], mirror: Path | None = None) -> list[str]:
    """GLUE tasks whose source is fully present in the mirror (all of them without a mirror)."""
    mirror = mirror if mirror is not None else resolve_mirror(config.get("mirror"))
    tasks = [n.removeprefix("glue_") for n in config["sources"] if n.startswith("glue_")]
    return sorted(t for t in tasks if not missing_mirror_files(f"glue_{t}", config, mirror))


def check_sources_available(names: Sequence[str], config: Mapping[str, Any]) -> None:
    """Fail early (at DAG construction) when a needed source's files are absent from the mirror."""
    mirror = resolve_mirror(config.get("mirror"))
    if mirror is None:
        return
    problems = []
    for name in names:
        missing = missing_mirror_files(name, config, mirror)
        if missing:
            problems.append(_unavailable_message(name, missing, mirror, config))
    if problems:
        raise FileNotFoundError("\n".join(problems))
    unchecked = [
        message for name in names for message in _unverifiable_mirror_files(name, config, mirror)
    ]
    if unchecked:
        raise UnverifiedFileError("\n".join(unchecked))


def _unverifiable_mirror_files(name: str, config: Mapping[str, Any], mirror: Path) -> list[str]:
    """Why each mirror file of ``name`` that nothing could check would be refused (before any job runs)."""
    params = source_params(name, config)
    if params["allow_unverified_mirror"]:
        return []
    manifest = read_mirror_manifest(mirror)
    pinned = {
        rel
        for rel in params["mirror_files"]
        for url, pin in zip(params["urls"], params["sha256"])
        if pin is not None
        and url_problem(url) is None
        and PurePosixPath(rel).name == url_file_name(url)
    }
    return [
        _unverified_message(f"mirror file {mirror / rel}", mirror, manifest)
        for rel in params["mirror_files"]
        if rel not in (manifest or {}) and rel not in pinned
    ]


def _unverified_message(label: str, mirror: Path, manifest: Mapping[str, Any] | None) -> str:
    where = (
        f"{mirror} has no MANIFEST.tsv"
        if manifest is None
        else f"{mirror / 'MANIFEST.tsv'} does not list it"
    )
    return (
        f"{label} cannot be checked ({where}) and nothing was kept; add its path and sha256 to the "
        f"mirror's MANIFEST.tsv, or set {ALLOW_UNVERIFIED_ENV}=1 (config downloads.allow_unverified_mirror) "
        "to read unchecked files"
    )


def _unavailable_message(
    name: str, missing: Sequence[str], mirror: Path, config: Mapping[str, Any]
) -> str:
    cfg = config["sources"][name]
    if source_kind(name, cfg) == "hub" and not cfg.get("mirror"):
        return (
            f"source {name!r} is the Hugging Face hub data set {cfg['hub']['path']!r}, which the mirror {mirror} "
            f"does not hold; unset mirror/{MIRROR_ENV} to download it, or leave out what needs it"
        )
    message = f"source {name!r} is unavailable: the mirror {mirror} lacks {', '.join(missing)}"
    if name.startswith("glue_"):
        available = available_glue_tasks(config, mirror)
        message += (
            f"; GLUE tasks available in this mirror: {', '.join(available) or 'none'} "
            "(list only those in config 'glue.tasks', or download from the original sources)"
        )
    return message


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _aligned_pins(cfg: Mapping[str, Any], key: str = "sha256") -> list[str | None]:
    urls = _as_list(cfg["url"])
    pins = _as_list(cfg.get(key))
    if len(pins) > len(urls):
        raise ValueError(f"{len(pins)} {key} values given for {len(urls)} urls")
    return pins + [None] * (len(urls) - len(pins))


# ---------------------------------------------------------------------------------------------
# Downloading one file


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
        return _copy_local(Path(unquote(parsed.path)), dest, sha256, url)
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
    try:
        # identity: the server is asked for the published file's own bytes, so that its
        # Content-Length and a sha256 pin are that file's (requests would ask for gzip, and
        # GitHub's raw server then sends text gzipped, with the compressed size as length).
        response = session.get(
            url, stream=True, timeout=timeout, headers={"Accept-Encoding": "identity"}
        )
    except (requests.Timeout, requests.ConnectionError) as exc:
        raise _Transient(f"{type(exc).__name__}: {exc}") from exc
    with response:
        status = response.status_code
        if status >= 500 or status in RETRYABLE_4XX:
            raise _Transient(f"HTTP {status} {response.reason}")
        if status >= 400:
            raise DownloadError(
                f"download of {url} failed with HTTP {status} {response.reason}; "
                "the URL is wrong or the file was moved: fix 'sources' in config.yaml or use a mirror"
            )
        total = int(response.headers.get("Content-Length") or 0) or None
        encoding = response.headers.get("Content-Encoding", "").strip().lower()
        encoding = "" if encoding == "identity" else encoding
        digest = hashlib.sha256()
        received = 0
        with (
            atomic_path(dest) as tmp,
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=dest.name,
                disable=total is not None and total < PROGRESS_MIN_BYTES,
                leave=False,
            ) as bar,
        ):
            # The body exactly as sent (a Content-Encoding is undone afterwards, by us): its
            # length is what Content-Length counts.
            wire = tmp.with_name(tmp.name + ".wire") if encoding else tmp
            try:
                with open(wire, "wb") as handle:
                    try:
                        for chunk in response.raw.stream(chunk_size, decode_content=False):
                            handle.write(chunk)
                            digest.update(chunk)
                            received += len(chunk)
                            bar.update(len(chunk))
                    except (
                        requests.RequestException,
                        urllib3.exceptions.HTTPError,
                        OSError,
                    ) as exc:
                        raise _Transient(
                            f"stream interrupted after {received} bytes: {exc}"
                        ) from exc
                if total is not None and received != total:
                    raise _Transient(f"received {received} bytes, expected {total}")
                if encoding:
                    _undo_content_encoding(wire, tmp, encoding, url)
                    return _finish(tmp, sha256_file(tmp), sha256, url)
            finally:
                if wire != tmp:
                    wire.unlink(missing_ok=True)
            return _finish(tmp, digest.hexdigest(), sha256, url)


def _finish(tmp: Path, digest: str, sha256: str | None, url: str) -> str:
    _check_digest(digest, sha256, url)
    return digest


GZIP_MAGIC = b"\x1f\x8b"


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


def _copy_local(
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
        _check_digest(digest.hexdigest(), sha256, label, remedy)
    return digest.hexdigest()


def _check_digest(actual: str, expected: str | None, label: str, remedy: str | None = None) -> None:
    if expected is not None and actual != expected.lower():
        remedy = remedy or (
            "the file changed upstream or was corrupted in transit (nothing was kept); update the pin in "
            "config.yaml only if the new file is known to be right"
        )
        raise ChecksumError(
            f"sha256 mismatch for {label}: expected {expected}, got {actual}; {remedy}"
        )


# ---------------------------------------------------------------------------------------------
# Layouts: turning what was fetched into the raw files


@dataclass(frozen=True)
class ExtractionLimits:
    """What unpacking one archive may take (config ``downloads``): beyond it, a bomb is assumed."""

    max_bytes: int = DOWNLOAD_DEFAULTS["max_extracted_bytes"]
    max_members: int = DOWNLOAD_DEFAULTS["max_archive_members"]


@dataclass(frozen=True)
class Fetched:
    """One fetched input: ``name`` is the URL's file name or the mirror-relative path."""

    name: str
    path: Path
    limits: ExtractionLimits = ExtractionLimits()


Normaliser = Callable[[list[Fetched], str, Path], list[str]]
LAYOUTS: dict[str, Normaliser] = {}


def _layout(kind: str) -> Callable[[Normaliser], Normaliser]:
    def register(func: Normaliser) -> Normaliser:
        LAYOUTS[kind] = func
        return func

    return register


def _is_archive(path: Path) -> bool:
    return zipfile.is_zipfile(path) or tarfile.is_tarfile(path)


def _archive_members(item: Fetched) -> Iterator[tuple[str, Callable[[], Any]]]:
    """(member name, opener) for the regular files of a zip or tar archive, skipping macOS debris.

    Every member must pass tarfile's ``data`` filter (zip members: no absolute path, no '..'), and
    the archive must stay within ``item.limits``; the openers count what is read against them.
    """
    budget = _ByteBudget(item)
    if zipfile.is_zipfile(item.path):
        with zipfile.ZipFile(item.path) as archive:
            infos = archive.infolist()
            _check_member_count(item, len(infos))
            for info in infos:
                _check_member_name(item, info.filename)
                if not info.is_dir() and not _is_debris(info.filename):
                    yield (
                        info.filename,
                        (
                            lambda info=info: budget.open(
                                info.filename, info.file_size, archive.open(info)
                            )
                        ),
                    )
    elif tarfile.is_tarfile(item.path):
        with tarfile.open(item.path) as archive:
            for count, member in enumerate(
                archive, 1
            ):  # lazily: a bomb's headers are never all loaded
                _check_member_count(item, count)
                _check_member_name(item, member.name)
                try:
                    tarfile.data_filter(member, str(item.path.parent))
                except tarfile.FilterError as exc:
                    raise ArchiveError(
                        f"archive {item.name}: member {member.name!r} is unsafe to unpack ({exc}); "
                        "the archive is damaged or crafted, so fetch it again from a trusted source"
                    ) from exc
                if member.isfile() and not _is_debris(member.name):
                    yield (
                        member.name,
                        (
                            lambda member=member: budget.open(
                                member.name, member.size, archive.extractfile(member)
                            )
                        ),
                    )
    else:
        raise ValueError(f"{item.path} is neither a zip nor a tar archive")


def _check_member_count(item: Fetched, count: int) -> None:
    if count > item.limits.max_members:
        raise ArchiveError(
            f"archive {item.name} holds more than {item.limits.max_members} members, which looks like an archive "
            "bomb; check the source, or raise downloads.max_archive_members in the config if it is known to be right"
        )


def _check_member_name(item: Fetched, name: str) -> None:
    if mirror_path_problem(name.rstrip("/")) is not None:
        raise ArchiveError(
            f"archive {item.name}: member {name!r} would unpack outside its folder; "
            "the archive is damaged or crafted, so fetch it again from a trusted source"
        )


class _ByteBudget:
    """The bytes one archive may still unpack to; a member that would exceed it stops the fetch."""

    def __init__(self, item: Fetched) -> None:
        self.item, self.left = item, item.limits.max_bytes

    def open(self, member: str, declared: int, reader: Any) -> Any:
        self._spend(member, declared, commit=False)  # refuse a declared bomb before reading a byte
        return _CountingReader(reader, lambda n: self._spend(member, n))

    def _spend(self, member: str, size: int, commit: bool = True) -> None:
        if size > self.left:
            raise ArchiveError(
                f"archive {self.item.name} unpacks to more than {self.item.limits.max_bytes} bytes (at member "
                f"{member!r}), which looks like a decompression bomb; check the source, or raise "
                "downloads.max_extracted_bytes in the config if it is known to be right"
            )
        if commit:
            self.left -= size


class _CountingReader:
    """A member's reader that charges every byte read to a budget (declared sizes can lie)."""

    def __init__(self, reader: Any, charge: Callable[[int], None]) -> None:
        self.reader, self.charge = reader, charge

    def read(self, size: int = -1) -> bytes:
        data = self.reader.read(size)
        self.charge(len(data))
        return data

    def __enter__(self) -> _CountingReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.reader.close()


def _is_debris(name: str) -> bool:
    return "__MACOSX" in name or Path(name).name.startswith("._")


def _extract(item: Fetched, wanted: Callable[[str], bool], staging: Path) -> list[str]:
    """Copy the archive members for which ``wanted(member)`` into ``staging`` (by base name); error if none."""
    written = []
    for member, opener in _archive_members(item):
        if wanted(member):
            target = Path(member).name
            with opener() as reader, open(staging / target, "wb") as writer:
                shutil.copyfileobj(reader, writer, 1 << 20)
            written.append(target)
    if not written:
        raise ValueError(
            f"archive {item.name} holds none of the expected files; its layout changed or the URL is wrong"
        )
    return written


def _copy_into(item: Fetched, staging: Path, target: str) -> str:
    (staging / target).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(item.path, staging / target)
    return target


def decode_text(data: bytes, encoding: str, label: str) -> str:
    """Decode ``data`` strictly; a bad byte is reported with the file and line it sits on."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{label}, line {line}: byte {data[exc.start : exc.start + 1]!r} is not valid {encoding}; "
            f"the file must be {encoding}-encoded"
        ) from exc


POLARITY_FILES = ("rt-polarity.pos", "rt-polarity.neg")
# The Cornell tarball is documented as Latin-1 but its punctuation bytes (0x85 …, 0x91 ‘, 0x96 –,
# 0x97 —) are Windows-1252, a superset of Latin-1's printable range: decoding as ISO-8859-1 would
# turn them into C1 control characters. The mirror holds UTF-8 copies with exactly those
# characters. Normalised to UTF-8 here, once.
POLARITY_ENCODING = {"url": "cp1252", "mirror": "utf-8"}


@_layout("polarity")
def _polarity(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    encoding = POLARITY_ENCODING[origin]
    texts: dict[str, tuple[bytes, str]] = {}
    for item in items:
        if _is_archive(item.path):
            for member, opener in _archive_members(item):
                if Path(member).name in POLARITY_FILES:
                    with opener() as reader:
                        texts[Path(member).name] = (reader.read(), f"{item.name}:{member}")
        elif Path(item.name).name in POLARITY_FILES:
            texts[Path(item.name).name] = (item.path.read_bytes(), item.name)
    missing = [name for name in POLARITY_FILES if name not in texts]
    if missing:
        raise ValueError(
            f"polarity source lacks {', '.join(missing)} (got {[i.name for i in items]})"
        )
    for name, (data, label) in texts.items():
        (staging / name).write_text(decode_text(data, encoding, label), encoding="utf-8")
    return list(POLARITY_FILES)


def _single_file_layout(kind: str, filename: str) -> None:
    """A layout whose raw form is one named file, either plain or inside an archive."""

    def normalise(items: list[Fetched], origin: str, staging: Path) -> list[str]:
        for item in items:
            if Path(item.name).name == filename:
                return [_copy_into(item, staging, filename)]
        for item in items:
            if _is_archive(item.path):
                return _extract(item, lambda m: Path(m).name == filename, staging)[:1]
        raise ValueError(f"{kind} source: none of {[i.name for i in items]} is or holds {filename}")

    LAYOUTS[kind] = normalise


_single_file_layout("snli", "snli_1.0_dev.jsonl")
_single_file_layout("supersense_words", "words.txt")
_single_file_layout("supersense_features", "words_features.zip")


@_layout("wordnet")
def _wordnet(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    if len(items) != 1:
        raise ValueError(
            f"wordnet source expects one file (nltk's wordnet.zip), got {[i.name for i in items]}"
        )
    item = items[0]
    if not zipfile.is_zipfile(item.path):
        raise ValueError(f"{item.name} is not a zip archive; expected nltk's corpora/wordnet.zip")
    with zipfile.ZipFile(item.path) as archive:
        names = set(archive.namelist())
    needed = {"wordnet/index.noun", "wordnet/data.noun", "wordnet/lexnames"}
    if not needed <= names:
        raise ValueError(
            f"{item.name} lacks {sorted(needed - names)}; expected nltk's WordNet 3.0 layout"
        )
    (staging / "corpora").mkdir(exist_ok=True)
    return [_copy_into(item, staging, "corpora/wordnet.zip")]


CODWOE_MEMBER = re.compile(r"^en\.[^/]*\.(json|csv)$")


@_layout("codwoe")
def _codwoe(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    written: list[str] = []
    for item in items:
        if _is_archive(item.path):
            written += _extract(item, lambda m: bool(CODWOE_MEMBER.match(Path(m).name)), staging)
        else:
            written.append(_copy_into(item, staging, Path(item.name).name))
    return sorted(set(written))


WORD_VECTOR_SUFFIXES = (".bin", ".txt", ".vec", ".bin.gz", ".txt.gz", ".vec.gz")


@_layout("word_vectors")
def _word_vectors(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    if len(items) != 1:
        raise ValueError(f"word-vector source expects one file, got {[i.name for i in items]}")
    item = items[0]
    name = Path(item.name).name
    if name.endswith(WORD_VECTOR_SUFFIXES) or not zipfile.is_zipfile(item.path):
        return [_copy_into(item, staging, name)]
    # An NLPL repository zip: the word2vec binary is model.bin (meta.json etc. beside it).
    with zipfile.ZipFile(item.path) as archive:
        members = [m for m in archive.namelist() if not _is_debris(m)]
    chosen = [m for m in members if Path(m).name == "model.bin"] or [
        m for m in members if Path(m).name.endswith(WORD_VECTOR_SUFFIXES)
    ]
    if len(chosen) != 1:
        raise ValueError(
            f"{item.name}: expected one model.bin or word2vec file inside, found {chosen or members}"
        )
    return _extract(item, lambda m: m == chosen[0], staging)


@_layout("glue")
def _glue(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    names = {Path(item.name).name: item for item in items}
    if "msr_paraphrase_train.txt" in names:
        if "mrpc_dev_ids.tsv" not in names:
            raise ValueError("MRPC needs both msr_paraphrase_train.txt and mrpc_dev_ids.tsv")
        build_mrpc_train(
            names["msr_paraphrase_train.txt"].path,
            names["mrpc_dev_ids.tsv"].path,
            staging / "train.tsv",
        )
        return ["train.tsv"]
    if "train.tsv" in names:
        return [_copy_into(names["train.tsv"], staging, "train.tsv")]
    for item in items:
        if _is_archive(item.path):
            # GLUE task zips hold <Task>/{train,dev,test}.tsv.
            return _extract(item, lambda m: Path(m).name == "train.tsv", staging)[:1]
    raise ValueError(f"GLUE source: none of {[i.name for i in items]} is or holds train.tsv")


@_layout("hub")
def _hub(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    parquet = [item for item in items if item.name.endswith(".parquet")]
    if origin == "url" and len(parquet) == 1:
        return [_copy_into(parquet[0], staging, HUB_FILE)]
    # A mirror's copy of a hub data set keeps its own file names (e.g. SICK.txt).
    return [_copy_into(item, staging, Path(item.name).name) for item in items]


def build_mrpc_train(msr_train: Path, dev_ids: Path, dest: Path) -> int:
    """Rebuild GLUE's MRPC train.tsv: Microsoft's training pairs minus GLUE's dev ids.

    This is what GLUE's own download script does (MRPC's original is a Windows installer, so GLUE
    ships only the dev ids and takes the pairs from SentEval's copy of msr_paraphrase_train.txt).
    Returns the number of training rows written.
    """
    dev = set()
    for lineno, line in enumerate(
        decode_text(dev_ids.read_bytes(), "utf-8-sig", str(dev_ids)).splitlines(), 1
    ):
        if line.strip():
            fields = line.strip().split("\t")
            if len(fields) != 2:
                raise ValueError(
                    f"{dev_ids}, line {lineno}: expected 2 tab-separated ids, found {len(fields)} fields"
                )
            dev.add(tuple(fields))
    lines = decode_text(msr_train.read_bytes(), "utf-8-sig", str(msr_train)).splitlines()
    if not lines:
        raise ValueError(f"{msr_train} is empty")
    rows = [lines[0].strip()]
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) != 5:
            raise ValueError(
                f"{msr_train}, line {lineno}: expected 5 tab-separated fields, found {len(fields)}"
            )
        if (fields[1], fields[2]) not in dev:
            rows.append("\t".join(fields))
    dest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return len(rows) - 1


# ---------------------------------------------------------------------------------------------
# Fetching a whole source


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
        reader = csv.DictReader(handle, delimiter="\t")
        missing = {"path", "bytes", "sha256"} - set(reader.fieldnames or [])
        if missing:
            raise UnverifiedFileError(
                f"{manifest} has no {', '.join(sorted(missing))} column (header: "
                f"{reader.fieldnames}); its header must name path, bytes and sha256, tab-separated"
            )
        for row in reader:
            if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
                continue  # a blank line
            line = reader.line_num
            rel = (row.get("path") or "").strip()
            digest = (row.get("sha256") or "").strip().lower()
            size = (row.get("bytes") or "").strip()
            if not rel or not _SHA256_RE.fullmatch(digest) or not size.isdigit():
                raise UnverifiedFileError(
                    f"{manifest} line {line}: row {rel or '(no path)'!r} needs a path, a byte count and a "
                    f"64-hex-digit sha256 (bytes {size or 'missing'!r}, sha256 {digest or 'missing'!r}); "
                    "fix the row from the original file or remove it (nothing was read from the mirror)"
                )
            pins[rel] = MirrorPin(digest, int(size))
    return pins


def fetch_source(
    name: str,
    params: Mapping[str, Any],
    raw_dir: str | os.PathLike,
    *,
    retries: int = 5,
    backoff: float = 2.0,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Fetch source ``name`` (``params`` as made by :func:`source_params`) into ``raw_dir``.

    Returns the manifest, also written to ``raw_dir/manifest.json`` once every file is in place.
    On failure nothing new is left in ``raw_dir``.
    """
    raw_dir = Path(raw_dir)
    kind = params["kind"]
    if kind not in LAYOUTS:
        raise ValueError(
            f"source {name!r} has unknown kind {kind!r}; expected one of {sorted(LAYOUTS)}"
        )
    mirror = Path(params["mirror"]) if params.get("mirror") else None
    raw_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=raw_dir))
    try:
        fetched_dir, staging = work / "fetched", work / "staging"
        fetched_dir.mkdir()
        staging.mkdir()
        limits = ExtractionLimits(
            params.get("max_extracted_bytes", DOWNLOAD_DEFAULTS["max_extracted_bytes"]),
            params.get("max_archive_members", DOWNLOAD_DEFAULTS["max_archive_members"]),
        )
        if mirror is not None:
            origin = "mirror"
            items, inputs = _from_mirror(name, params, mirror, fetched_dir)
        elif kind == "hub":
            origin = "url"
            items, inputs = _from_hub(name, params, fetched_dir)
        else:
            origin = "url"
            items, inputs = _from_urls(
                params, fetched_dir, retries=retries, backoff=backoff, timeout=timeout
            )
        items = [dataclasses.replace(item, limits=limits) for item in items]
        files = LAYOUTS[kind](items, origin, staging)
        records = [
            {
                "path": rel,
                "bytes": (staging / rel).stat().st_size,
                "sha256": sha256_file(staging / rel),
            }
            for rel in files
        ]
        _replace_contents(raw_dir, staging, files, keep=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    manifest = {
        "source": name,
        "kind": kind,
        "origin": origin,
        "mirror": str(mirror) if mirror else None,
        "inputs": inputs,
        "files": records,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(raw_dir / MANIFEST_NAME, manifest)
    log.info("source %s: %d file(s) from %s in %s", name, len(records), origin, raw_dir)
    return manifest


def _from_mirror(
    name: str, params: Mapping[str, Any], mirror: Path, fetched_dir: Path
) -> tuple[list[Fetched], list[dict]]:
    rels = params.get("mirror_files") or []
    if not rels:
        raise FileNotFoundError(
            f"source {name!r} lists no mirror files in config 'sources.{name}.mirror'"
        )
    confined = [problem for rel in rels if (problem := mirror_path_problem(rel)) is not None]
    if confined:
        raise ValueError(f"sources.{name}.mirror: {confined[0]}")
    missing = [rel for rel in rels if not (mirror / rel).is_file()]
    if missing:
        message = f"source {name!r} is unavailable: the mirror {mirror} lacks {', '.join(missing)}"
        if name.startswith("glue_"):
            available = sorted(
                task
                for task, folder in GLUE_FOLDERS.items()
                if (mirror / "glue" / folder / "train.tsv").is_file()
            )
            message += (
                f"; GLUE tasks available in this mirror: {', '.join(available) or 'none'} "
                "(list only those in config 'glue.tasks', or download from the original sources)"
            )
        raise FileNotFoundError(message)
    manifest = read_mirror_manifest(mirror)
    config_pins = _config_pins_of_mirror_files(name, params, mirror)
    items, inputs = [], []
    for rel in rels:
        # Copy first, then hash the copy: what is checked is exactly what is parsed.
        local = fetched_dir / Path(rel).name
        digest = _copy_local(mirror / rel, local, None, f"mirror file {mirror / rel}")
        pinned_by = _check_mirror_file(
            name, rel, digest, mirror, manifest, config_pins.get(rel), params, local.stat().st_size
        )
        items.append(Fetched(rel, local))
        inputs.append(
            {
                "mirror_path": rel,
                "sha256": digest,
                "pinned": bool(pinned_by),
                "pinned_by": pinned_by,
            }
        )
    return items, inputs


def _config_pins_of_mirror_files(
    name: str, params: Mapping[str, Any], mirror: Path
) -> dict[str, str]:
    """mirror path → the config pin of the URL whose file it is (same file name).

    A pin whose file the mirror does not hold cannot be checked, so it is refused (as pip refuses
    a hash it cannot check), never silently dropped.
    """
    rels = params.get("mirror_files") or []
    pins = {}
    for url, pin in zip(params.get("urls") or [], params.get("sha256") or []):
        if pin is None:
            continue
        filename = url_file_name(url)
        same = [rel for rel in rels if PurePosixPath(rel).name == filename]
        if not same:
            raise UnverifiedFileError(
                f"sources.{name}.sha256 pins {filename}, which the mirror {mirror} does not hold (it holds "
                f"{', '.join(rels)}), so the pin cannot be checked; set the pin to null to rely on the "
                f"mirror's MANIFEST.tsv, or unset {MIRROR_ENV} to download the pinned file"
            )
        pins.update({rel: pin for rel in same})
    return pins


def _check_mirror_file(
    name: str,
    rel: str,
    digest: str,
    mirror: Path,
    manifest: dict[str, str] | None,
    config_pin: str | None,
    params: Mapping[str, Any],
    size: int | None = None,
) -> list[str]:
    """Check one copied mirror file (``size`` bytes) against its pins; return what pinned it and
    was compared (an error when nothing may)."""
    label = f"mirror file {mirror / rel}"
    pinned_by = []
    if manifest is not None and rel in manifest:
        pin = manifest[rel]
        damaged = "the mirror copy is damaged or was edited (nothing was kept); restore it from the original source"
        if size is not None and size != pin.bytes:
            raise ChecksumError(
                f"size mismatch for {label} (its MANIFEST.tsv entry): expected {pin.bytes} bytes, "
                f"got {size}; {damaged}"
            )
        _check_digest(digest, pin.sha256, f"{label} (its MANIFEST.tsv entry)", damaged)
        pinned_by.append("MANIFEST.tsv")
    if config_pin is not None:
        _check_digest(
            digest,
            config_pin,
            f"{label} (config sources.{name}.sha256)",
            f"nothing was kept; fix sources.{name}.sha256 in the config only if this file is known to be right",
        )
        pinned_by.append("config")
    if pinned_by:
        return pinned_by
    if not params.get("allow_unverified_mirror"):
        raise UnverifiedFileError(_unverified_message(label, mirror, manifest))
    log.warning(
        "UNVERIFIED: %s is read without any sha256 check (unverified mirrors are allowed)", label
    )
    return pinned_by


def _from_hub(
    name: str, params: Mapping[str, Any], fetched_dir: Path
) -> tuple[list[Fetched], list[dict]]:
    """One split of a Hugging Face hub data set (``datasets``; needs the hub or its cache)."""
    import datasets

    hub = params.get("hub") or {}
    if not hub.get("path") or not hub.get("split"):
        raise ValueError(
            f"source {name!r} of kind hub needs sources.{name}.hub.path and .split in config.yaml"
        )
    args = (hub["path"], hub["name"]) if hub.get("name") else (hub["path"],)
    log.info("loading %s (split %s) from the Hugging Face hub", "/".join(args), hub["split"])
    dataset = datasets.load_dataset(*args, split=hub["split"], revision=hub.get("revision"))
    local = fetched_dir / HUB_FILE
    dataset.to_parquet(str(local))
    entry = {
        "hub": hub["path"],
        "config": hub.get("name"),
        "split": hub["split"],
        "revision": hub.get("revision"),
        "fingerprint": getattr(dataset, "_fingerprint", None),
        "sha256": sha256_file(local),
        "pinned": False,
    }
    return [Fetched(HUB_FILE, local)], [entry]


def _from_urls(
    params: Mapping[str, Any], fetched_dir: Path, **kwargs: Any
) -> tuple[list[Fetched], list[dict]]:
    items, inputs = [], []
    blobs = params.get("git_blob") or [None] * len(params["urls"])
    with requests.Session() as session:
        for url, pin, blob in zip(params["urls"], params["sha256"], blobs):
            filename = url_file_name(url)
            local = fetched_dir / filename
            log.info("downloading %s", url)
            try:
                digest = download_file(url, local, pin, session=session, **kwargs)
            except DownloadError as error:
                raise DownloadError(f"source {params['name']!r}: {error}") from error
            if pin is None:
                log.info(
                    "%s: sha256 %s (not pinned; add it to config.yaml to pin)", filename, digest
                )
            entry = {"url": url, "sha256": digest, "pinned": pin is not None}
            if blob is not None:
                entry["git_blob"] = git_blob_id(local)
                _check_digest(
                    entry["git_blob"],
                    blob,
                    f"{url} (its git object id, config sources.{params['name']}.git_blob)",
                )
                entry["pinned"] = True
            items.append(Fetched(filename, local))
            inputs.append(entry)
    return items, inputs


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


def _replace_contents(raw_dir: Path, staging: Path, files: Sequence[str], keep: Path) -> None:
    """Swap the staged files into ``raw_dir``, removing what an earlier fetch left there."""
    for entry in raw_dir.iterdir():
        if entry == keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for rel in files:
        target = raw_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / rel, target)


def read_source_manifest(raw_dir: str | os.PathLike) -> dict[str, Any]:
    """The manifest of a fetched source; an error if the folder was never (fully) fetched."""
    import json

    path = Path(raw_dir) / MANIFEST_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: source folder {raw_dir} was not fetched (run its download rule)"
        )
    return json.loads(path.read_text())


def source_files(raw_dir: str | os.PathLike) -> list[Path]:
    """The raw files of a fetched source, as listed in its manifest."""
    raw_dir = Path(raw_dir)
    return [raw_dir / record["path"] for record in read_source_manifest(raw_dir)["files"]]


# ---------------------------------------------------------------------------------------------
# Word vectors


def word_vectors_file(raw_dir: str | os.PathLike) -> Path:
    """The one word2vec file of a fetched word-vector source."""
    files = source_files(raw_dir)
    if len(files) != 1:
        raise ValueError(
            f"word-vector source {raw_dir} should hold one file, its manifest lists {files}"
        )
    return files[0]


def is_word2vec_binary(path: str | os.PathLike) -> bool:
    """Whether a word2vec file is binary, judged from its first vector record.

    The header (``<count> <dim>``) is text in both formats. In the text format the next line is a
    word followed by ``dim`` decimal numbers; in the binary format it is a word followed by raw
    float32 bytes, which never parse as ``dim`` numbers.
    """
    import gzip

    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        header = handle.readline()
        first = handle.readline(1 << 20)
    fields = header.split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise ValueError(
            f"{path}, line 1: expected a word2vec header '<count> <dim>', found {header[:80]!r}"
        )
    dim = int(fields[1])
    parts = first.split()
    if len(parts) == dim + 1:
        try:
            [float(x) for x in parts[-dim:]]
            return False
        except ValueError:
            pass
    return True


def load_word_vectors(path: str | os.PathLike, limit: int | None = None):
    """Load a word2vec file (text or binary, optionally gzipped) as gensim ``KeyedVectors``.

    Binary or text is detected from the file itself; ``limit`` keeps the first (most frequent)
    ``limit`` words.
    """
    from gensim.models import KeyedVectors

    binary = is_word2vec_binary(path)
    log.info("loading word vectors from %s (%s)", path, "binary" if binary else "text")
    try:
        # "replace": a stray broken token in a large crawled vocabulary only fails its own lookup.
        return KeyedVectors.load_word2vec_format(
            str(path), binary=binary, limit=limit, unicode_errors="replace"
        )
    except (ValueError, EOFError) as error:
        where = "" if binary else _first_bad_word2vec_line(path, limit)
        raise ValueError(
            f"{path}{where}: not a valid word2vec {'binary' if binary else 'text'} file ({error}); re-download its source"
        ) from error


def _first_bad_word2vec_line(path: str | os.PathLike, limit: int | None) -> str:
    """', line N: what is wrong' for the first malformed line of a word2vec text file ('' if none)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        count, dim = (int(field) for field in handle.readline().split())
        expected = count if limit is None else min(count, limit)
        lineno = 1
        for lineno, line in enumerate(handle, 2):
            if lineno - 1 > expected:
                break
            parts = line.rstrip("\n").rstrip().split(" ")
            if len(parts) != dim + 1:
                return (
                    f", line {lineno}: expected a word and {dim} numbers, found {len(parts)} fields"
                )
            try:
                [float(x) for x in parts[1:]]
            except ValueError:
                return f", line {lineno}: a vector value is not a number"
        if lineno - 1 < expected:
            return f", line {lineno}: the file ends after {lineno - 1} vectors, but its header promises {count}"
    return ""
