"""``isotropy-audit``: the audit from the command line; prints the table, exits 1 on any mismatch."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from isotropy.audit.orchestration import audit
from isotropy.audit.report import failures, format_table, write_tsv
from isotropy.workflow.config import ConfigError

DESCRIPTION = (
    "Audit every result against its provenance: is it intact, current, and made by today's code?"
)


def default_snakefile() -> Path | None:
    """The repository's Snakefile beside the installed package (an editable install), if any."""
    candidate = Path(__file__).resolve().parents[3] / "Snakefile"
    return candidate if candidate.is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    """``isotropy-audit``: print the audit table; exit 1 on any mismatch, 0 otherwise."""
    args = _parser().parse_args(argv)
    root = Path(args.directory)
    snakefile = None
    if not args.no_snakemake:
        snakefile = args.snakefile or (
            root / "Snakefile" if (root / "Snakefile").is_file() else default_snakefile()
        )
    try:
        findings = audit(
            root,
            starts=args.files or None,
            snakefile=snakefile,
            configfiles=[Path(c).resolve() for c in args.configfile],
            targets=args.target,
        )
    except ConfigError as error:
        print(f"isotropy-audit: {error}", file=sys.stderr)
        return 2
    print(format_table(findings, show_ok=not args.quiet))
    if args.output:
        write_tsv(findings, args.output)
    bad = failures(findings)
    for finding in bad:
        print(f"MISMATCH {finding.file}: {finding.reason}", file=sys.stderr)
    return 1 if bad else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="isotropy-audit", description=DESCRIPTION)
    parser.add_argument(
        "files", nargs="*", help="files to audit (default: every file under results/)"
    )
    parser.add_argument(
        "--directory", "-d", default=".", help="the Snakemake working directory (default: .)"
    )
    parser.add_argument(
        "--snakefile",
        "-s",
        default=None,
        help="the workflow's Snakefile (default: ./Snakefile, else the repository's)",
    )
    parser.add_argument(
        "--configfile",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="config file(s) the results were made with, later ones laid over earlier ones, as "
        "given to snakemake (--configfile a.yaml b.yaml c.yaml)",
    )
    parser.add_argument(
        "--no-snakemake",
        action="store_true",
        help="skip the parameter check by Snakemake (checksums, inputs and code only)",
    )
    parser.add_argument(
        "--target",
        nargs="+",
        action="extend",
        default=[],
        metavar="TARGET",
        help="Snakemake target(s) whose results must all be there, e.g. main_study (default: all)",
    )
    parser.add_argument("--output", "-o", default=None, help="also write the table as TSV here")
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print only warnings and mismatches"
    )
    return parser


if __name__ == "__main__":
    sys.exit(main())
