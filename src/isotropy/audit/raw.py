"""The end of every walk: a raw source's (or an assembled model's) download manifest.

Its raw files are checked against the sha256 the manifest recorded, and what they were fetched
from against today's pins (the mirror's MANIFEST.tsv and the config's sha256), re-read now.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from isotropy import sources
from isotropy.audit.cross_checks import manifest_problem
from isotropy.audit.findings import (
    FAIL,
    OK,
    WARN,
    Finding,
    relative_path,
    resolve_path,
    short_digest,
)
from isotropy.io import sha256_file
from isotropy.paths import MANIFEST_NAME, RAW_ROOT

REFETCH = "re-fetch the source (snakemake --forcerun download_source)"
MODELS_ROOT = Path("resources") / "models"  # models assembled from PyPI volumes end their chain too


def is_manifest(path: str) -> bool:
    """Whether ``path`` is a raw source's (or an assembled model's) manifest: the end of every walk."""
    parts = Path(path).parts
    return (
        len(parts) == 4
        and Path(*parts[:2]) in (Path(RAW_ROOT), MODELS_ROOT)
        and parts[3] == MANIFEST_NAME
    )


def check_manifest(root: Path, path: str, config: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every raw file of a source against the sha256 its download manifest recorded, and what
    it was fetched from against today's pins (:func:`check_pins`)."""
    manifest_path = resolve_path(root, path)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        problem = f"is not readable JSON ({type(error).__name__}: {str(error)[:80]})"
    else:
        problem = manifest_problem(manifest)
    if problem is not None:
        return [Finding(path, FAIL, "raw", f"download manifest {problem}; {REFETCH}")]
    entries = manifest["files"]
    findings = []
    for entry in entries:
        raw = manifest_path.parent / entry["path"]
        rel = relative_path(root, raw)
        if not raw.is_file():
            findings.append(Finding(rel, FAIL, "raw", f"raw file missing (listed in {path})"))
            continue
        actual = sha256_file(raw)
        if actual != entry["sha256"]:
            findings.append(
                Finding(
                    rel,
                    FAIL,
                    "raw",
                    f"raw file differs from its download manifest {path}: sha256 recorded {short_digest(entry['sha256'])}…, now {short_digest(actual)}…",
                )
            )
    findings += check_pins(path, manifest, config)
    if not any(f.status == FAIL for f in findings):
        origin = manifest.get("origin", "?")
        findings.append(
            Finding(
                path, OK, "raw", f"{len(entries)} raw file(s) match the manifest (from {origin})"
            )
        )
    return findings


def check_pins(
    path: str, manifest: Mapping[str, Any], config: Mapping[str, Any] | None = None
) -> list[Finding]:
    """Each fetched input's recorded sha256 against its pins, re-read now (never the record's word).

    A mirror file is compared with the mirror's MANIFEST.tsv (and the config pin of its URL), a
    downloaded file with its config pin (when ``config`` is given). An input that nothing pins
    is a warning; one whose pin differs, or that the record calls pinned while nothing pins it
    now, is a mismatch.
    """
    inputs = manifest.get("inputs") or []
    if not inputs:
        return []
    source_cfg = ((config or {}).get("sources") or {}).get(manifest.get("source")) or {}
    url_pins = sources.url_pins(source_cfg) if source_cfg.get("url") else {}
    mirror_pins, unreadable = _mirror_pins(path, manifest)
    if unreadable is not None:
        return [unreadable]
    findings = []
    for entry in inputs:
        expected = _expected_pins(entry, url_pins, mirror_pins, config)
        if expected is not None:
            findings += _pin_findings(path, entry, *expected, config)
    return findings


def _mirror_pins(
    path: str, manifest: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, Finding | None]:
    """The pins of the mirror a source was fetched from, or why they cannot be re-checked."""
    mirror = manifest.get("mirror")
    if not mirror or not any("mirror_path" in entry for entry in manifest["inputs"]):
        return None, None
    if not Path(mirror).is_dir():
        return None, Finding(
            path,
            WARN,
            "raw",
            f"the mirror {mirror} it was fetched from is not here: its pins were not re-checked",
        )
    try:
        return sources.read_mirror_manifest(Path(mirror)) or {}, None
    except (OSError, UnicodeDecodeError, sources.UnverifiedFileError) as error:
        return None, Finding(path, FAIL, "raw", f"the mirror's pins cannot be read: {error}")


def _expected_pins(
    entry: Mapping[str, Any],
    url_pins: Mapping[str, str | None],
    mirror_pins: Mapping[str, Any] | None,
    config: Mapping[str, Any] | None,
) -> tuple[str, dict[str, str]] | None:
    """(label, pinned by → sha256) of one fetched input; None when nothing can be re-derived."""
    expected: dict[str, str] = {}
    if "mirror_path" in entry:
        rel = entry["mirror_path"]
        if mirror_pins and rel in mirror_pins:
            expected["MANIFEST.tsv"] = mirror_pins[rel].sha256
        for url, pin in url_pins.items():
            if pin and sources.url_file_name(url) == Path(rel).name:
                expected["config"] = pin
        return f"mirror file {rel}", expected
    if "url" in entry:
        if url_pins.get(entry["url"]):
            expected["config"] = url_pins[entry["url"]]
        elif config is None:
            return None  # the config's pins are not known: nothing to re-derive
        return entry["url"], expected
    return f"hub data set {entry.get('hub', '?')}", expected


def _pin_findings(
    path: str,
    entry: Mapping[str, Any],
    label: str,
    expected: Mapping[str, str],
    config: Mapping[str, Any] | None,
) -> list[Finding]:
    """A mismatch if a pin differs or a recorded pin is gone, a warning if nothing pins it."""
    recorded = str(entry.get("sha256") or "")
    differing = [
        f"{by} pins {short_digest(pin.lower())}…"
        for by, pin in expected.items()
        if pin.lower() != recorded
    ]
    claimed = [
        by
        for by in entry.get("pinned_by") or []
        if by not in expected and (by != "config" or config is not None)
    ]
    if differing:
        reason = (
            f"{label} was fetched with sha256 {short_digest(recorded)}…, but {', '.join(differing)}; "
            f"re-fetch it (snakemake --forcerun download_source) from a file that matches its pin"
        )
        return [Finding(path, FAIL, "raw", reason)]
    if claimed:
        reason = (
            f"{label} is recorded as pinned by {', '.join(claimed)}, but no such pin exists now"
        )
        return [Finding(path, FAIL, "raw", reason)]
    if not expected:
        reason = (
            f"{label} is pinned by nothing (no MANIFEST.tsv row, no config sha256): "
            "the raw files made from it are unverified"
        )
        return [Finding(path, WARN, "raw", reason)]
    return []
