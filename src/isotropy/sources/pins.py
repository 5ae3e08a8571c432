"""Pins: what a file must be (a sha256, a git object id, a size, a MANIFEST.tsv row), and the
sources lock, the pins of downloads no public record pins, recorded on first use."""

from __future__ import annotations

import csv
import hashlib
import logging
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from filelock import FileLock

from isotropy.configuration.data import Downloads
from isotropy.io import atomic_path, sha256_file

log = logging.getLogger(__name__)
LOCK_ENV = "ISOTROPY_SOURCES_LOCK"
RELOCK_ENV = "ISOTROPY_RELOCK"
LOCK_HEADER = """\
# The sources lock: the sha256 and size of each download no public record pins, trusted on first
# use (docs/online-sources.md). Commit it; never edit it: `make relock SOURCE=<name>` accepts a
# changed file and keeps the record it replaces under `replaced`.
"""


class ChecksumError(ValueError):
    """A file differs from its pin."""


class UnverifiedFileError(ChecksumError):
    """A mirror file that no sha256 (MANIFEST.tsv or config pin) can check."""


class LockMismatchError(ChecksumError):
    """A download differs from what the sources lock recorded on first use."""


def check_pin(
    actual: str | int,
    expected: str | int | None,
    label: str,
    remedy: str | None = None,
    *,
    key: str | None = None,
    what: str = "sha256",
) -> None:
    """A pin that does not match raises :class:`ChecksumError` naming its ``key``."""
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


def copy_local(
    src: Path, dest: Path, sha256: str | None, label: str, source: str | None = None
) -> str:
    """Copy a local file atomically, checked against its sha256 pin; return its sha256."""
    with atomic_path(dest) as tmp:
        shutil.copyfile(src, tmp)
        digest = sha256_file(tmp)  # the copy's: what is checked is exactly what is kept
        check_pin(digest, sha256, label, key=source and f"sources.{source}.sha256")
    return digest


def git_blob_id(path: str | os.PathLike) -> str:
    """The id git gives ``path``'s bytes as a blob (``git ls-tree`` lists it where no sha256 is)."""
    seeded = hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode())
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: seeded).hexdigest()


def read_mirror_manifest(mirror: Path) -> dict[str, dict[str, Any]] | None:
    """path → its ``sha256`` and ``bytes`` in the mirror's MANIFEST.tsv (None if it has none)."""
    manifest = mirror / "MANIFEST.tsv"
    if not manifest.is_file():
        return None
    pins: dict[str, dict[str, Any]] = {}
    with open(manifest, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        for row in reader:
            rel = (row.get("path") or "").strip()
            digest = (row.get("sha256") or "").strip().lower()
            size = (row.get("bytes") or "").strip()
            if not rel or not re.fullmatch(r"[0-9a-f]{64}", digest) or not size.isdigit():
                raise UnverifiedFileError(
                    f"{manifest} line {reader.line_num}: row {rel or '(no path)'!r} needs a path, "
                    f"a byte count and a 64-hex-digit sha256 (got {size!r}, {digest!r}); fix the "
                    "row from the original file or remove it (nothing was read from the mirror)"
                )
            pins[rel] = {"sha256": digest, "bytes": int(size)}
    return pins


def lock_path(config: Mapping[str, Any] | None = None) -> Path:
    """The sources lock: ``$ISOTROPY_SOURCES_LOCK``, else ``downloads.lock_file``."""
    if env_value := os.environ.get(LOCK_ENV, "").strip():
        return Path(env_value)
    configured = ((config or {}).get("downloads") or {}).get("lock_file")
    return Path(configured or Downloads().lock_file)


def read_lock(path: str | os.PathLike) -> dict[str, dict[str, dict[str, Any]]]:
    """source → URL → its record (``sha256``, ``bytes``, ``locked``, ``replaced``); {} if none."""
    path = Path(path)
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    from isotropy import trust  # here: the device has no jsonschema

    if not trust.validator("sources_lock").is_valid(data):
        raise ChecksumError(
            f"sources lock {path} is damaged (it must map each source's URLs to a 64-hex-digit "
            "sha256 and a byte count); restore it from version control (it is committed with the "
            "project) or delete the damaged source's entry and fetch again"
        )
    return data


def check_locked(
    path: str | os.PathLike, data: Mapping[str, Any], source: str, url: str, sha256: str, size: int
) -> dict[str, Any] | None:
    """One download's record in ``data`` (None on first use); a mismatch raises, unless relocked."""
    old = data.get(source, {}).get(url)
    relock = source in os.environ.get(RELOCK_ENV, "").replace(",", " ").split()
    if old is None or (old["sha256"] == sha256 and old["bytes"] == size) or relock:
        return old
    raise LockMismatchError(
        f"sha256 mismatch for {url} (source {source!r}): the sources lock {path} recorded "
        f"{old['sha256']} ({old['bytes']} bytes, trusted on first use {old.get('locked', '?')}), "
        f"got {sha256} ({size} bytes); nothing was kept: the file changed upstream or was damaged "
        "in transit. If the new file is known to be right, accept it deliberately: make relock "
        f"SOURCE={source} (or run once with {RELOCK_ENV}={source})"
    )


def record_downloads(
    path: str | os.PathLike, source: str, downloads: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Check each download of ``source`` against the lock and record it on first use or relock,
    one writer at a time; return the records, in order."""
    path, now = Path(path), datetime.now(UTC).isoformat()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path.with_name(path.name + ".flock")):
        if not path.is_file():  # a misspelt path would otherwise pass for a first use
            log.warning(
                "no sources lock at %s: starting one (first use); if downloads.lock_file or $%s "
                "is misspelt, correct it: the committed lock's records are not checked",
                path,
                LOCK_ENV,
            )
        data = read_lock(path)
        urls = data.setdefault(source, {})
        for download in downloads:
            url, digest, size = download["url"], download["sha256"], download["bytes"]
            old = check_locked(path, data, source, url, digest, size)
            if old is not None and old["sha256"] == digest and old["bytes"] == size:
                continue
            entry: dict[str, Any] = {"sha256": digest, "bytes": size, "locked": now}
            if old is None:
                log.warning("%s: sha256 %s trusted on first use, in %s", url, digest, path)
            else:
                replaced = {k: old[k] for k in ("sha256", "bytes", "locked") if k in old}
                entry["replaced"] = [{**replaced, "relocked": now}, *old.get("replaced", [])]
                log.warning("source %s: RELOCKED %s: sha256 %s in %s", source, url, digest, path)
            urls[url] = entry
        text = yaml.safe_dump(dict(data), sort_keys=True, default_flow_style=False, width=100)
        with atomic_path(path) as tmp:
            tmp.write_text(LOCK_HEADER + text, encoding="utf-8")
        return [dict(urls[d["url"]]) for d in downloads]
