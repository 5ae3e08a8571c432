"""What every audit check returns: a :class:`Finding`, its statuses and the helpers they share;
and the findings as a text table (the console, the rule's log) and as a TSV file.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from isotropy.io import atomic_path
from isotropy.paths import AUDIT_TABLE

OK, WARN, FAIL = "ok", "warn", "FAIL"
RESULTS = "results"
# The audit's own outputs, and files that are never results.
AUDIT_OUTPUTS = (AUDIT_TABLE,)
IGNORED_NAMES = (".snakemake_timestamp",)


@dataclass(frozen=True)
class Finding:
    """One line of the audit: a file, its status (ok / warn / FAIL), which check, and why."""

    file: str
    status: str
    check: str
    reason: str

    def as_row(self) -> dict[str, str]:
        return {
            "file": self.file,
            "status": self.status,
            "check": self.check,
            "reason": self.reason,
        }


def short_digest(digest: str | None) -> str:
    return (digest or "none")[:12]


def resolve_path(root: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else root / path


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


def format_table(findings: Sequence[Finding], *, show_ok: bool = True) -> str:
    """The findings as an aligned text table, mismatches first, then a one-line tally."""
    order = {FAIL: 0, WARN: 1, OK: 2}
    rows = sorted(
        (f for f in findings if show_ok or f.status != OK),
        key=lambda f: (order.get(f.status, 3), f.file, f.check),
    )
    header = ("FILE", "STATUS", "CHECK", "REASON")
    cells = [header] + [(f.file, f.status, f.check, f.reason) for f in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]
    files = {f.file for f in findings if not f.file.startswith("(")}
    bad = {f.file for f in findings if f.status == FAIL}
    warned = {f.file for f in findings if f.status == WARN} & files - bad
    lines.append(
        f"{len(files)} files audited: {len(files - bad - warned)} ok, {len(warned)} with warnings, {len(bad)} with mismatches"
    )
    return "\n".join(lines)


def write_tsv(findings: Sequence[Finding], path: str | os.PathLike) -> None:
    """The findings as a TSV table (file, status, check, reason), written atomically."""

    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["file", "status", "check", "reason"], delimiter="\t"
        )
        writer.writeheader()
        writer.writerows(f.as_row() for f in findings)
