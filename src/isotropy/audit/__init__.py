"""Audit every result against its provenance: is it intact, current, and made by today's code?

The audit reads the intake's copy (:mod:`isotropy.intake`) and walks each provenance record back
through its inputs to the raw downloads (:mod:`~isotropy.audit.records`), checking checksums,
inputs, staleness, code, and raw files against today's pins. Here are :func:`audit`, the findings
as a table and TSV, and ``isotropy-audit`` (:func:`main`), which exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from isotropy.audit.records import FAIL, OK, WARN, Finding, listing, walk
from isotropy.intake import FolderError, escaped, intake
from isotropy.io import atomic_path
from isotropy.paths import REMADE_BY_REPORT
from isotropy.sources import resolve_mirror
from isotropy.workflow.config import ConfigError, load_config_files

NOT_COPIED = ": not copied, not audited"


def audit(
    root: str | os.PathLike = ".",
    *,
    mirror: str | None = None,
    remade: Iterable[str] = (),
) -> list[Finding]:
    """Every finding for the results under ``root``, read from its intake's copy (a finding per
    refused file); mirror files against the user's ``mirror`` unless it lies inside the folder;
    inputs that are ``remade`` are not required."""
    root = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="isotropy-audit-") as tmp:
        workspace = Path(tmp) / "folder"  # all below reads this copy, never the folder
        workspace.mkdir()
        try:
            refused = [
                Finding(name, FAIL, "intake", cause + NOT_COPIED)  # escaped where printed
                for name, cause in intake(root, workspace).items()
            ]
        except (FolderError, OSError) as error:
            refused = [Finding(escaped(str(root)), FAIL, "intake", f"cannot be read: {error}")]
        folder = resolve_mirror(mirror)  # once: nothing below reads $ISOTROPY_MIRROR again
        if folder is not None and folder.is_relative_to(root):
            reason = (
                "the configured mirror lies inside the audited folder: its pins are not believed"
            )
            refused.append(Finding("(workflow)", FAIL, "raw", reason))
            folder = None
        found = walk(workspace, mirror=folder, remade=remade)
        return [*refused, *found]


def failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.status == FAIL]


def grouped(findings: Iterable[Finding]) -> list[tuple[str, str, str, str]]:
    """(files, status, check, reason) per cause, escaped onto one line, naming the first files
    and how many there are."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in findings:
        groups.setdefault((f.status, f.check, f.reason), []).append(escaped(f.file, 200))
    return [
        (
            files[0] if len(files) == 1 else f"{listing(files)} ({len(files):,} files)",
            status,
            check,
            escaped(reason),
        )
        for (status, check, reason), files in groups.items()
    ]


def format_table(findings: Sequence[Finding]) -> str:
    """The findings as an aligned text table, mismatches first, one line per cause, then a tally."""
    order = {FAIL: 0, WARN: 1, OK: 2}
    rows = sorted(findings, key=lambda f: (order.get(f.status, 3), f.file, f.check))
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
    """The findings as a TSV table by the csv module (a tab or line break in a name quoted),
    written atomically."""
    with (
        atomic_path(path) as tmp,  # a name's bytes that are not UTF-8: escaped
        open(tmp, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle,
    ):
        writer = csv.DictWriter(
            handle, fieldnames=["file", "status", "check", "reason"], delimiter="\t"
        )
        writer.writeheader()
        writer.writerows(dataclasses.asdict(f) for f in findings)


def main(argv: Sequence[str] | None = None) -> int:
    """``isotropy-audit``: print the audit table; exit 1 on any mismatch, 0 otherwise."""
    parser = argparse.ArgumentParser(prog="isotropy-audit", description=__doc__.split("\n")[0])
    parser.add_argument("--directory", "-d", default=".", help="the Snakemake working directory")
    parser.add_argument(
        "--configfile",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="config file(s) the results were made with (as snakemake takes them): only their "
        "mirror is read",
    )
    parser.add_argument(
        "--gate",
        metavar="NAME",
        help="print nothing but, on a mismatch, one line saying NAME stops (make report)",
    )
    args = parser.parse_args(argv)
    root = Path(args.directory)
    try:
        mirror = load_config_files(args.configfile).get("mirror") if args.configfile else None
        findings = audit(root, mirror=mirror, remade=REMADE_BY_REPORT if args.gate else ())
        if not args.gate:
            print(format_table(findings))
    except (ConfigError, OSError) as error:  # a full disk as well: one line
        print(f"isotropy-audit: {escaped(str(error))}", file=sys.stderr)
        return 2
    bad = grouped(failures(findings))
    if args.gate and bad:
        files, _, check, reason = bad[0]
        print(
            f"{args.gate}: refused: the audit of {escaped(str(root.resolve()))} finds "
            f"mismatches of {len(bad)} cause(s) (first: {files}: {check}: {reason}); nothing is "
            "re-made from results this folder's records do not vouch for: run make audit to see "
            "them all",
            file=sys.stderr,
        )
    elif not args.gate:
        for files, _, _check, reason in bad:
            print(f"MISMATCH {files}: {reason}", file=sys.stderr)
    return 1 if bad else 0
