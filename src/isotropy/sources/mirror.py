"""A local mirror of the raw sources: where it is, what it holds, and what vouches for its files.

The mirror is a folder laid out like ``shared/mirror``; its ``MANIFEST.tsv`` lists the sha256 and
byte count of every file. Like ``pip --require-hashes``, a mirror file nothing can check (no
MANIFEST.tsv, or not listed in it, and no config pin) is refused unless unverified mirrors are
allowed (``downloads.allow_unverified_mirror`` or ``$ISOTROPY_ALLOW_UNVERIFIED_MIRROR=1``).

:func:`source_unavailable` is the one check that a source's files are in the mirror: the
workflow runs it at parse time for every needed source, and :func:`~isotropy.sources.fetch_source`
runs it again before copying.
"""

from __future__ import annotations

import csv
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from isotropy.sources.transfer import (
    ALLOW_UNVERIFIED_ENV,
    MIRROR_ENV,
    ChecksumError,
    UnverifiedFileError,
    check_digest,
    url_file_name,
)

log = logging.getLogger(__name__)


def resolve_mirror(config_value: str | os.PathLike | None) -> Path | None:
    """The mirror folder to read from: ``$ISOTROPY_MIRROR`` if set (non-empty), else the config
    value.

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


def mirror_path_problem(rel: str) -> str | None:
    """Why a configured mirror file would lie outside the mirror folder (None if it lies inside)."""
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts or "\0" in rel:
        return (
            f"{rel!r} is not a path inside the mirror folder; "
            "list files relative to the mirror, without '..' or a leading '/'"
        )
    return None


def files_missing_from(mirror: Path, name: str, rels: Sequence[str]) -> list[str]:
    """Which of source ``name``'s mirror files ``rels`` the mirror lacks (a note if none are
    listed)."""
    if not rels:
        return [f"(no mirror files configured for source {name!r})"]
    return [rel for rel in rels if not (mirror / rel).is_file()]


def glue_tasks_in_mirror(sources: Mapping[str, Mapping[str, Any]], mirror: Path) -> list[str]:
    """The GLUE tasks (sources ``glue_<task>`` of config ``sources``) whose files the mirror holds.

    Config ``sources`` is the one list of GLUE tasks and of the files each needs.
    """
    return sorted(
        name.removeprefix("glue_")
        for name, cfg in sources.items()
        if name.startswith("glue_")
        and not files_missing_from(mirror, name, (cfg or {}).get("mirror") or [])
    )


def source_unavailable(
    name: str,
    kind: str,
    source_cfg: Mapping[str, Any],
    mirror: Path,
    sources: Mapping[str, Mapping[str, Any]] | None = None,
) -> str | None:
    """Why source ``name`` (of ``kind``, config entry ``source_cfg``) cannot come from ``mirror``.

    None when every mirror file it lists is there. For a GLUE task the message names the tasks
    the mirror does hold, read from config ``sources`` when given.
    """
    rels = source_cfg.get("mirror") or []
    missing = files_missing_from(mirror, name, rels)
    if not missing:
        return None
    if kind == "hub" and not rels:
        return (
            f"source {name!r} is the Hugging Face hub data set {source_cfg['hub']['path']!r}, "
            f"which the mirror {mirror} does not hold; unset mirror/{MIRROR_ENV} to download it, "
            "or leave out what needs it"
        )
    message = f"source {name!r} is unavailable: the mirror {mirror} lacks {', '.join(missing)}"
    if name.startswith("glue_") and sources is not None:
        available = glue_tasks_in_mirror(sources, mirror)
        message += (
            f"; GLUE tasks available in this mirror: {', '.join(available) or 'none'} "
            "(list only those in config 'glue.tasks', or download from the original sources)"
        )
    return message


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
                    f"{manifest} line {line}: row {rel or '(no path)'!r} needs a path, a byte "
                    f"count and a 64-hex-digit sha256 (bytes {size or 'missing'!r}, sha256 "
                    f"{digest or 'missing'!r}); fix the row from the original file or remove it "
                    "(nothing was read from the mirror)"
                )
            pins[rel] = MirrorPin(digest, int(size))
    return pins


def unverified_message(label: str, mirror: Path, manifest: Mapping[str, Any] | None) -> str:
    where = (
        f"{mirror} has no MANIFEST.tsv"
        if manifest is None
        else f"{mirror / 'MANIFEST.tsv'} does not list it"
    )
    return (
        f"{label} cannot be checked ({where}) and nothing was kept; add its path and sha256 to the "
        f"mirror's MANIFEST.tsv, or set {ALLOW_UNVERIFIED_ENV}=1 (config "
        "downloads.allow_unverified_mirror) "
        "to read unchecked files"
    )


def config_pins_of_mirror_files(
    name: str, params: Mapping[str, Any], mirror: Path
) -> dict[str, str]:
    """mirror path → the config pin of the URL whose file it is (same file name).

    A pin of a published file the mirror does not hold (an archive whose members the mirror
    keeps, say) pins the download only: the mirror's files are then checked against its
    MANIFEST.tsv, which :func:`check_mirror_file` requires (a pin is never taken to check a
    file it does not describe).
    """
    rels = params.get("mirror_files") or []
    pins = {}
    for url, pin in zip(params.get("urls") or [], params.get("sha256") or []):
        if pin is None:
            continue
        filename = url_file_name(url)
        same = [rel for rel in rels if PurePosixPath(rel).name == filename]
        if not same:
            log.debug(
                "sources.%s.sha256 pins %s, which the mirror %s does not hold: it pins downloads "
                "only",
                name,
                filename,
                mirror,
            )
        pins.update({rel: pin for rel in same})
    return pins


def check_mirror_file(
    name: str,
    rel: str,
    digest: str,
    mirror: Path,
    manifest: Mapping[str, MirrorPin] | None,
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
        damaged = (
            "the mirror copy is damaged or was edited (nothing was kept); "
            "restore it from the original source"
        )
        if size is not None and size != pin.bytes:
            raise ChecksumError(
                f"size mismatch for {label} (its MANIFEST.tsv entry): expected {pin.bytes} bytes, "
                f"got {size}; {damaged}"
            )
        check_digest(digest, pin.sha256, f"{label} (its MANIFEST.tsv entry)", damaged)
        pinned_by.append("MANIFEST.tsv")
    if config_pin is not None:
        check_digest(
            digest,
            config_pin,
            f"{label} (config sources.{name}.sha256)",
            f"nothing was kept; fix sources.{name}.sha256 in the config only if this file is known "
            "to be right",
        )
        pinned_by.append("config")
    if pinned_by:
        return pinned_by
    if not params.get("allow_unverified_mirror"):
        raise UnverifiedFileError(unverified_message(label, mirror, manifest))
    log.warning(
        "UNVERIFIED: %s is read without any sha256 check (unverified mirrors are allowed)", label
    )
    return pinned_by
