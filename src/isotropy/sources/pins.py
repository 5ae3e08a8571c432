"""Pins: what a file must be (a sha256, a git object id, a size, a mirror's MANIFEST.tsv row),
checked where its bytes are kept, with an error that names the key to change."""

from __future__ import annotations

import csv
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import NamedTuple

from isotropy.io import atomic_path, sha256_file
from isotropy.sources.layouts import ChecksumError

_SHA256_RE = re.compile(r"[0-9a-f]{64}")


class UnverifiedFileError(ChecksumError):
    """A mirror file that no sha256 (MANIFEST.tsv or config pin) can check."""


def pin_key(source: str | None, pin: str) -> str | None:
    """The config key of a source's pin (``sources.<source>.<pin>``), None without a source."""
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


def copy_local(
    src: Path, dest: Path, sha256: str | None, label: str, source: str | None = None
) -> str:
    """Copy a local file atomically, checked against its sha256 pin; return its sha256.

    Copy first, then hash the copy: what is checked is exactly what is kept.
    """
    with atomic_path(dest) as tmp:
        shutil.copyfile(src, tmp)
        digest = sha256_file(tmp)
        check_pin(digest, sha256, label, key=pin_key(source, "sha256"))
    return digest


def git_blob_id(path: str | os.PathLike) -> str:
    """The id git gives ``path``'s bytes as a blob: sha1 of ``blob <size>\\0`` + the bytes.

    It pins a file of a git repository whose sha256 is not known but whose tree is
    (``git ls-tree`` lists it).
    """
    seeded = hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode())
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: seeded).hexdigest()


class MirrorPin(NamedTuple):
    """One MANIFEST.tsv row: the sha256 and byte count a mirror file must have."""

    sha256: str
    bytes: int


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
