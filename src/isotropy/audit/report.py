"""The audit's findings as a text table (the console, the rule's log) and as a TSV file."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Sequence

from isotropy.audit.findings import FAIL, OK, WARN, Finding
from isotropy.io import atomic_path


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
