"""What every audit check returns: a :class:`Finding`, its statuses and the helpers they share;
and the findings as a text table (the console, the rule's log) and as a TSV file.

A record is a file anyone can edit: before the audit uses it, its shape is checked (a damaged
record is one mismatch naming it, never a traceback).
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isotropy.intake import escaped, name_problem, parse_json
from isotropy.io import atomic_path
from isotropy.paths import AUDIT_TABLE
from isotropy.provenance import record_path

OK, WARN, FAIL = "ok", "warn", "FAIL"
RESULTS = "results"
AUDIT_OUTPUTS = (AUDIT_TABLE,)  # the audit's own outputs: never results


@dataclass(frozen=True)
class Finding:
    """One line of the audit: a file, its status (ok / warn / FAIL), which check, and why."""

    file: str
    status: str
    check: str
    reason: str


def short_digest(digest: str | None) -> str:
    return (digest or "none")[:12]


def resolve_path(root: Path, path: str) -> Path:
    """``path`` inside ``root``; a name outside it (absolute, '..') where nothing is."""
    if name_problem(path) is not None:
        return root / ".outside" / escaped(path).replace("/", "%")
    return root / path


def relative_path(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def listing(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.status == FAIL]


def grouped(findings: Iterable[Finding]) -> list[tuple[str, str, str, str]]:
    """(files, status, check, reason) per cause, every name escaped onto one line: findings of
    one status, check and reason are one row naming the first files and how many there are."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in findings:
        groups.setdefault((f.status, f.check, f.reason), []).append(escaped(f.file))
    return [
        (
            files[0] if len(files) == 1 else f"{listing(files)} ({len(files):,} files)",
            status,
            check,
            escaped(reason),
        )
        for (status, check, reason), files in groups.items()
    ]


def format_table(findings: Sequence[Finding], *, show_ok: bool = True) -> str:
    """The findings as an aligned text table, mismatches first, one line per cause, then a
    one-line tally."""
    order = {FAIL: 0, WARN: 1, OK: 2}
    rows = sorted(
        (f for f in findings if show_ok or f.status != OK),
        key=lambda f: (order.get(f.status, 3), f.file, f.check),
    )
    cells = [("FILE", "STATUS", "CHECK", "REASON"), *grouped(rows)]
    widths = [min(max(len(c[i]) for c in cells), 80) for i in range(3)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]
    files = {f.file for f in findings if not f.file.startswith("(")}
    bad = {f.file for f in findings if f.status == FAIL}
    warned = {f.file for f in findings if f.status == WARN} & files - bad
    lines.append(
        f"{len(files)} files audited: {len(files - bad - warned)} ok, {len(warned)} with warnings, "
        f"{len(bad)} with mismatches"
    )
    return "\n".join(lines)


def write_tsv(findings: Sequence[Finding], path: str | os.PathLike) -> None:
    """The findings as a TSV table (file, status, check, reason) by the csv module (a name with a
    tab or a line break is quoted, never a new row), written atomically."""

    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["file", "status", "check", "reason"], delimiter="\t"
        )
        writer.writeheader()
        writer.writerows(dataclasses.asdict(f) for f in findings)


SHA256 = re.compile(r"[0-9a-f]{64}")
REMAKE = "re-make it (snakemake --forcerun <its rule>) or delete the record and the file"


def _file_entries_problem(entries: Any, key: str) -> str | None:
    if not isinstance(entries, Mapping):
        return f"'{key}' is not a mapping of files"
    for name, entry in entries.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("sha256"), str):
            return f"{key} entry {name!r} has no sha256"
        if not SHA256.fullmatch(entry["sha256"]):
            return f"{key} entry {name!r} has a sha256 that is not 64 hex digits"
    return None


def provenance_problem(record: Any) -> str | None:
    """Why ``record`` is not a well-formed provenance record (None: it is)."""
    if not isinstance(record, Mapping):
        return f"it holds a JSON {type(record).__name__}, not an object"
    for key in ("outputs", "inputs"):
        if (problem := _file_entries_problem(record.get(key, {}), key)) is not None:
            return problem
    code = record.get("code") or {}
    if not isinstance(code, Mapping) or not isinstance(code.get("modules") or {}, Mapping):
        return "'code' is not a mapping with a mapping of modules"
    if not all(isinstance(v, (str, bool, type(None))) for k, v in code.items() if k != "modules"):
        return "'code' holds a value that is not text"
    if not all(isinstance(v, str) for v in (code.get("modules") or {}).values()):
        return "'code.modules' holds a sha256 that is not text"
    packages = record.get("packages") or {}
    if not isinstance(packages, Mapping):
        return "'packages' is not a mapping"
    for key in ("config", "params", "wildcards"):
        if not isinstance(record.get(key) or {}, Mapping):
            return f"'{key}' is not a mapping"
    return None


def read_checked_json(
    path: Path, problem_of: Callable[[Any], str | None]
) -> tuple[Any, str | None]:
    """A JSON file and why it cannot be used (``problem_of`` its shape; None: usable), or the
    reason it could not be read."""
    try:
        document = parse_json(path.read_bytes())  # nesting capped: no RecursionError
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return None, f"is not readable JSON ({type(error).__name__}: {str(error)[:80]})"
    return document, problem_of(document)


def load_record(root: Path, path: str) -> tuple[Mapping[str, Any] | None, Finding | None]:
    """The record beside ``path`` (None when there is none), or the one mismatch saying why it
    cannot be used: unreadable, not JSON, or not shaped like a provenance record."""
    sidecar = record_path(resolve_path(root, path))
    if not sidecar.is_file():
        return None, None
    record, problem = read_checked_json(sidecar, provenance_problem)
    if problem is None:
        return record, None
    return None, Finding(
        path, FAIL, "record", f"its provenance record {sidecar.name} {problem}; {REMAKE}"
    )


def manifest_problem(manifest: Any) -> str | None:
    """Why a download manifest cannot be used (None: every file entry has a path and a sha256)."""
    if not isinstance(manifest, Mapping) or not isinstance(manifest.get("files"), list):
        return "it is not a JSON object with a list of 'files'"
    for index, entry in enumerate(manifest["files"]):
        name = entry.get("path") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not isinstance(entry.get("sha256"), str):
            return f"files[{index}] has no path or no sha256"
        if Path(name).is_absolute() or ".." in Path(name).parts:
            return f"files[{index}] names {name!r}, outside the source's folder"
    inputs = manifest.get("inputs") or []
    if not isinstance(inputs, list) or not all(isinstance(e, Mapping) for e in inputs):
        return "'inputs' is not a list of objects"
    texts = [manifest.get("mirror"), manifest.get("source")]
    texts += [e.get(k) for e in inputs for k in ("mirror_path", "url", "sha256", "hub")]
    if not all(isinstance(t, (str, type(None))) for t in texts):
        return "'mirror', 'source' or an input's path, url or sha256 is not text"
    if not all(isinstance(e.get("pinned_by") or [], list) for e in inputs):
        return "an input's 'pinned_by' is not a list"
    return None
