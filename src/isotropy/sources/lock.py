"""The sources lock: a downloaded file that no public record pins is trusted on first use, its
sha256 and size recorded (under a :mod:`filelock` lock, one writer at a time) and checked on
every later download and by the audit."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from filelock import FileLock

from isotropy.configuration.data import Downloads
from isotropy.io import atomic_path
from isotropy.sources.layouts import ChecksumError

log = logging.getLogger(__name__)
LOCK_ENV = "ISOTROPY_SOURCES_LOCK"
RELOCK_ENV = "ISOTROPY_RELOCK"
LOCK_HEADER = """\
# The sources lock: the sha256 and size of every downloaded file that no public record pins,
# written by the workflow on its first download (trusted on first use) and checked on every
# later download and by the audit (isotropy.sources). Commit it with the project, like a
# package lock. Never edit it by hand: a changed upstream file is accepted on purpose with
# `make relock SOURCE=<name>`, which keeps the record it replaces under `replaced`.
"""


class LockMismatchError(ChecksumError):
    """A download differs from what the sources lock recorded on first use."""


def lock_path(config: Mapping[str, Any] | None = None) -> Path:
    """The lock file: ``$ISOTROPY_SOURCES_LOCK``, else config ``downloads.lock_file``, else the
    default."""
    env_value = os.environ.get(LOCK_ENV, "").strip()
    if env_value:
        return Path(env_value)
    configured = ((config or {}).get("downloads") or {}).get("lock_file")
    return Path(configured or Downloads().lock_file)


def read_lock(path: str | os.PathLike) -> dict[str, dict[str, dict[str, Any]]]:
    """source → URL → its record (``sha256``, ``bytes``, ``locked``, ``replaced``); {} if no lock.

    A lock that is not this shape is an error naming the file: a damaged lock must never turn
    the check off.
    """
    path = Path(path)
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if (problem := _shape_problem(data)) is not None:
        raise ChecksumError(
            f"sources lock {path} is damaged ({problem}); restore it from version control (it is "
            "committed with the project) or delete the damaged source's entry and fetch again"
        )
    return data


def _shape_problem(data: Any) -> str | None:
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

    Checked while holding ``<path>.flock`` (one writer of the lock at a time), so a record
    another job wrote since is compared like any other: a mismatch raises
    :class:`LockMismatchError` before the fetch keeps anything. Returns the records now in the
    lock, in order; a relocked one carries what it replaced.
    """
    path, now = Path(path), datetime.now(UTC).isoformat()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path.with_name(path.name + ".flock")):
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
                    "%s: sha256 %s, %d bytes: no published pin; trusted on first use and recorded "
                    "in the sources lock %s (commit it with the project)",
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
