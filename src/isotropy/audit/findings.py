"""What every audit check returns: a :class:`Finding`, its statuses, and the helpers they share."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
