"""What every audit check returns: a :class:`Finding`, its statuses and the helpers they share;
and the findings as a text table (the console, the rule's log) and as a TSV file.

A record is a file anyone can edit: before the audit uses it, its shape is checked (a damaged
record is one mismatch naming it, never a traceback).
"""

from __future__ import annotations

import csv
import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from isotropy.intake import escaped, name_problem, parse_json
from isotropy.io import atomic_path
from isotropy.provenance import record_path
from isotropy.trust import validator

OK, WARN, FAIL = "ok", "warn", "FAIL"


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


REMAKE = "re-make it (snakemake --forcerun <its rule>) or delete the record and the file"
PROVENANCE, MANIFEST = validator("provenance"), validator("manifest")


def read_checked_json(
    path: Path, validator: jsonschema.protocols.Validator
) -> tuple[Any, str | None]:
    """A JSON file and why it cannot be used (None: usable): unreadable, not JSON, or not the
    shape of ``validator``'s schema, naming where."""
    try:
        document = parse_json(path.read_bytes())  # nesting capped: no RecursionError
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return None, f"is not readable JSON ({type(error).__name__}: {str(error)[:80]})"
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return document, None
    where = "/".join(map(str, error.absolute_path))
    return (
        document,
        f"does not fit its schema{f' at {where}' if where else ''} ({error.message[:120]})",
    )


def load_record(root: Path, path: str) -> tuple[Mapping[str, Any] | None, Finding | None]:
    """The record beside ``path`` (None when there is none), or the one mismatch saying why it
    cannot be used: unreadable, not JSON, or not shaped like a provenance record."""
    sidecar = record_path(resolve_path(root, path))
    if not sidecar.is_file():
        return None, None
    record, problem = read_checked_json(sidecar, PROVENANCE)
    if problem is None:
        return record, None
    return None, Finding(
        path, FAIL, "record", f"its provenance record {sidecar.name} {problem}; {REMAKE}"
    )
