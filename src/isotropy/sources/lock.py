"""The sources lock: a downloaded file that no public record pins is trusted on first use.

Like a package lock (``poetry.lock``, ``Cargo.lock``), ``config/sources.lock`` (config
``downloads.lock_file``, or ``$ISOTROPY_SOURCES_LOCK``) is kept and committed with the project.
The first successful download of a URL that has no published sha256 or git object id records
its size and sha256 there; every later download of it, and the audit, compare against that
record, and a difference stops the run naming the lock, both hashes and the one way to accept
the new file on purpose: ``make relock SOURCE=<name>`` (``$ISOTROPY_RELOCK=<name>`` for one
run), which keeps the replaced record under ``replaced`` with the time of the relock.

Writing is safe with parallel jobs: an exclusive ``flock`` on ``<lock>.flock`` around
read-modify-write, and the new text renamed into place (a reader never sees half a file).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from isotropy.io import atomic_path
from isotropy.sources.transfer import DOWNLOAD_DEFAULTS, ChecksumError

LOCK_ENV = "ISOTROPY_SOURCES_LOCK"
RELOCK_ENV = "ISOTROPY_RELOCK"
TRUST_PUBLISHED = "published pin"
TRUST_LOCK = "lock (trusted on first use)"
HEADER = """\
# The sources lock: the sha256 and size of every downloaded file that no public record pins,
# written by the workflow on its first download (trusted on first use) and checked on every
# later download and by the audit (isotropy.sources.lock). Commit it with the project, like a
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
    return Path(configured or DOWNLOAD_DEFAULTS["lock_file"])


def relock_requested(name: str) -> bool:
    """Whether the user asked to accept a changed file of source ``name`` (``$ISOTROPY_RELOCK``)."""
    wanted = os.environ.get(RELOCK_ENV, "")
    return name in {part.strip() for part in wanted.replace(",", " ").split()}


def read_lock(path: str | os.PathLike) -> dict[str, dict[str, dict[str, Any]]]:
    """source → URL → its record (``sha256``, ``bytes``, ``locked``, ``replaced``); {} if no lock.

    A lock that is not this shape is an error naming the file: a damaged lock must never turn
    the check off.
    """
    path = Path(path)
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    problem = _shape_problem(data)
    if problem is not None:
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


def locked_entry(path: str | os.PathLike, source: str, url: str) -> dict[str, Any] | None:
    """The lock's record of ``url`` of ``source`` (None: never downloaded, so first use)."""
    return read_lock(path).get(source, {}).get(url)


def check_locked(
    path: str | os.PathLike, source: str, url: str, sha256: str, size: int
) -> dict[str, Any] | None:
    """Compare one download with its lock record; the record when it matches, None on first use.

    A difference raises :class:`LockMismatchError`, unless a relock of ``source`` was asked
    for (then the record that will be replaced is returned).
    """
    entry = locked_entry(path, source, url)
    if entry is None or (entry["sha256"] == sha256 and entry["bytes"] == size):
        return entry
    if relock_requested(source):
        return entry
    raise LockMismatchError(
        f"sha256 mismatch for {url} (source {source!r}): the sources lock {path} recorded "
        f"{entry['sha256']} ({entry['bytes']} bytes, trusted on first use "
        f"{entry.get('locked', '?')}), got {sha256} ({size} bytes); nothing was kept: the file "
        "changed upstream or was damaged in transit. If the new file is known to be right, accept "
        f"it deliberately: make relock SOURCE={source} (or run once with {RELOCK_ENV}={source})"
    )


@contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.flock`` (one writer of the lock at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".flock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def record_downloads(
    path: str | os.PathLike, source: str, downloads: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Write each download (``url``, ``sha256``, ``bytes``) of ``source`` into the lock.

    Re-checked under the file lock: a record another job wrote since is compared like any other.
    Returns the records now in the lock, in order; a relocked one carries what it replaced.
    """
    path = Path(path)
    now = datetime.now(UTC).isoformat()  # to the microsecond: compared with records' times
    with _exclusive(path):
        data = read_lock(path)
        urls = data.setdefault(source, {})
        for download in downloads:
            url, digest, size = download["url"], download["sha256"], download["bytes"]
            old = check_locked(path, source, url, digest, size)
            if old is not None and old["sha256"] == digest and old["bytes"] == size:
                continue
            entry: dict[str, Any] = {"sha256": digest, "bytes": size, "locked": now}
            if old is not None:
                replaced = [{k: old[k] for k in ("sha256", "bytes", "locked") if k in old}]
                entry["replaced"] = [{**replaced[0], "relocked": now}, *old.get("replaced", [])]
            urls[url] = entry
        _write(path, data)
        return [dict(urls[d["url"]]) for d in downloads]


def _write(path: Path, data: Mapping[str, Any]) -> None:
    text = HEADER + yaml.safe_dump(dict(data), sort_keys=True, default_flow_style=False, width=100)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def relocked_after(
    path: str | os.PathLike, source: str, when: str
) -> list[tuple[str, dict[str, Any]]]:
    """(url, replaced record with ``now``, the sha256 that replaced it) of each relock of
    ``source`` later than the ISO time ``when`` (a file made at ``when`` was made before it)."""
    made = _moment(when)
    if made is None:
        return []
    found = []
    for url, entry in read_lock(path).get(source, {}).items():
        for old in entry.get("replaced") or []:
            relocked = _moment(old.get("relocked"))
            if relocked is not None and relocked > made:
                found.append((url, {**old, "now": entry["sha256"]}))
    return found


def _moment(value: Any) -> datetime | None:
    """An ISO time as an aware datetime (UTC where it names no zone); None if it is not one."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
