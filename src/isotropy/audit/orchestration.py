"""The whole audit: the record walk of the intake's copy, then the results the workflow
declares; and ``isotropy-audit`` (``python -m isotropy.audit``), the audit from the command line:
it prints the table and exits 1 on any mismatch.

Nothing of the folder's ``.snakemake/`` is believed or run: Snakemake is asked only which results
the workflow declares, in an empty folder (``snakemake --summary``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from isotropy.audit.findings import (
    AUDIT_OUTPUTS,
    FAIL,
    RESULTS,
    WARN,
    Finding,
    failures,
    format_table,
    grouped,
    listing,
    load_record,
    relative_path,
    write_tsv,
)
from isotropy.audit.records import WORKFLOW_ROOT, walk, with_project_pins
from isotropy.intake import FolderError, escaped, intake
from isotropy.io import plain_data
from isotropy.sources import MIRROR_ENV
from isotropy.trust import protect_imports, workflow_problems
from isotropy.workflow.config import ConfigError, load_config, load_config_files


def audit(
    root: str | os.PathLike = ".",
    *,
    starts: Sequence[str] | None = None,
    snakefile: str | os.PathLike | None = None,
    configfiles: Sequence[str | os.PathLike] = (),
    config: Mapping[str, Any] | None = None,
    snakemake_python: str | None = None,
    targets: Sequence[str] | None = None,
    workflow_root: str | os.PathLike | None = None,
) -> list[Finding]:
    """Every finding for the results under ``root`` (a Snakemake working directory), read from
    its intake's copy, its code against the checkout at ``workflow_root`` (default: the
    Snakefile's folder, else this package's). With ``snakefile``, every result that ``targets``
    (default: rule ``all``) declare under ``configfiles`` (or ``config``) must be there; without
    it one warning says that was not checked."""
    root = Path(root).resolve()
    if starts is not None:
        starts = [relative_path(root, resolve_abs(root, s)) for s in starts]
    with tempfile.TemporaryDirectory(prefix="isotropy-audit-") as tmp:
        files = list(configfiles)
        if config is not None:
            dumped = Path(tmp) / "config.yaml"
            dumped.write_text(json.dumps(plain_data(config)))  # JSON is YAML
            files.append(dumped)
        current = config if config is not None else _load_configs(files, snakefile)
        # Pins come from the project's files and the user's own, never the folder's alone.
        yours = [f for f in configfiles if not _inside(root, f)]
        current = with_project_pins(current, yours)
        workspace = Path(tmp) / "folder"  # all below reads this copy, never the folder
        refused, current = quarantine(root, workspace, starts, current)
        code_root = workflow_root or (Path(snakefile).resolve().parent if snakefile else None)
        findings = [*refused, *walk(workspace, starts, current, workflow_root=code_root)]
        if snakefile is None:
            skipped = "the results the workflow declares not checked: no Snakefile given"
            return [*findings, Finding("(workflow)", WARN, "declared", skipped)]
        if problems := workflow_problems(Path(snakefile).resolve().parent):
            return [*findings, *(Finding(escaped(f), FAIL, "code", r) for f, r in problems)]
        empty = Path(tmp) / "empty"  # Snakemake sees nothing of the folder
        empty.mkdir()
        try:
            declared = declared_results(empty, snakefile, targets, files, snakemake_python)
        except (RuntimeError, ValueError, subprocess.TimeoutExpired, OSError) as error:
            failed = f"cannot list the results the workflow declares: {error}"
            return [*findings, Finding("(workflow)", FAIL, "declared", failed)]
        extra = declared_findings(declared, findings, workspace, complete=starts is None)
    return findings + extra


NOT_COPIED = ": not copied, not audited"
ASKED = (
    "; given as a file to audit: config files go after --configfile (isotropy-audit "
    "--configfile a.yaml b.yaml)"
)


def quarantine(
    root: Path, workspace: Path, starts: Sequence[str] | None, config: Mapping | None
) -> tuple[list[Finding], Mapping | None]:
    """The intake of ``root`` into ``workspace`` (:mod:`isotropy.intake`): a finding per refused
    file, and ``config`` without a mirror that lies inside the folder (its pins are the folder's
    own, never believed)."""
    workspace.mkdir()
    asked = set(starts or ())
    try:
        refused = [
            Finding(escaped(name), FAIL, "intake", cause + (ASKED if name in asked else NOT_COPIED))
            for name, cause in intake(root, workspace, starts).items()
        ]
    except (FolderError, OSError) as error:
        refused = [Finding(escaped(str(root)), FAIL, "intake", f"cannot be read: {error}")]
    if _inside(root, os.environ.get(MIRROR_ENV) or (config or {}).get("mirror")):
        reason = "the configured mirror lies inside the audited folder: its pins are not believed"
        refused.append(Finding("(workflow)", FAIL, "raw", reason))
        config = {**(config or {}), "mirror": None}
    return refused, config


def resolve_abs(root: Path, name: str) -> Path:
    return Path(name) if os.path.isabs(name) else root / name


def _inside(root: Path, path: Any) -> bool:
    return bool(path) and Path(str(path)).resolve().is_relative_to(root)


def declared_findings(
    declared: Sequence[str], findings: Sequence[Finding], workspace: Path, *, complete: bool
) -> list[Finding]:
    """Results the workflow declares but the audit did not see (a mismatch when every result was
    to be audited), and audited results this configuration does not make (another one did)."""
    wanted = {p for p in declared if Path(p).parts[:1] == (RESULTS,) and p not in AUDIT_OUTPUTS}
    audited = {
        f.file for f in findings if Path(f.file).parts[:1] == (RESULTS,) and f.check != "missing"
    }
    out = []
    if complete and (absent := sorted(wanted - audited)):
        reason = (
            f"{len(audited & wanted)} of the {len(wanted)} result files this configuration "
            f"declares were audited; absent: {listing(absent)} (make them, e.g. make run; give the "
            "config files they were made with, --configfile a.yaml b.yaml; or name the target "
            "that made them, --target main_study)"
        )
        out.append(Finding("(workflow)", FAIL, "declared", reason))
    for path in sorted(audited - wanted):
        record = load_record(workspace, path)[0] or {}
        studies = (record.get("config") or {}).get("studies")
        reason = (
            "a result of another configuration (not in this workflow's targets"
            + (f"; its record names studies {studies}" if studies else "")
            + "): checksums, inputs and code audited; give its config files to audit it fully"
        )
        out.append(Finding(path, WARN, "config", reason))
    return out


def _load_configs(
    files: Sequence[str | os.PathLike], snakefile: str | os.PathLike | None = None
) -> dict | None:
    """The configuration the audited workflow runs. For this project's workflow (its schema beside
    the Snakefile, or no Snakefile given) that is load_config's: validated, defaults filled in and
    cross-checked, as the record was made under, so the two compare key by key. Another workflow
    (the tests' toy one) has no such schema: its files are only merged, as Snakemake merges them."""
    if not files:
        return None
    if snakefile is None:
        return load_config(files)
    schema = Path(snakefile).resolve().parent / "schemas" / "config.schema.yaml"
    return load_config(files, schema) if schema.is_file() else load_config_files(files)


def default_snakefile() -> Path | None:
    """The repository's Snakefile beside the installed package (an editable install), if any."""
    candidate = WORKFLOW_ROOT / "Snakefile"
    return candidate if candidate.is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    """``isotropy-audit``: print the audit table; exit 1 on any mismatch, 0 otherwise."""
    args = _parser().parse_args(argv)
    root = Path(args.directory)
    # The checkout's own Snakefile, never one in the audited folder (it would run as Python).
    snakefile = None if args.no_snakemake else args.snakefile or default_snakefile()
    try:
        findings = audit(
            root,
            starts=args.files or None,
            snakefile=snakefile,
            configfiles=[Path(c).resolve() for c in args.configfile],
            targets=args.target,
        )
        if not args.gate:
            print(format_table(findings, show_ok=not args.quiet))
        if args.output:
            write_tsv(findings, args.output)
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="isotropy-audit",
        description="Audit every result against its provenance: is it intact, current, and made "
        "by today's code?",
    )
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
        help="the workflow's Snakefile (default: the installed checkout's, never the folder's)",
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
        help="skip asking Snakemake which results the workflow declares",
    )
    parser.add_argument(
        "--target",
        nargs="+",
        action="extend",
        default=[],
        metavar="TARGET",
        help="Snakemake target(s) whose results must all be there, e.g. main_study (default: all)",
    )
    parser.add_argument(
        "--gate",
        default=None,
        metavar="NAME",
        help="print nothing but, on a mismatch, one line saying NAME stops (make report)",
    )
    parser.add_argument("--output", "-o", default=None, help="also write the table as TSV here")
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print only warnings and mismatches"
    )
    return parser


def declared_results(
    folder: Path,
    snakefile: str | os.PathLike,
    targets: Sequence[str] | None,
    configfiles: Sequence[str | os.PathLike] = (),
    python: str | None = None,
    timeout: float = 900,
) -> list[str]:
    """Every file that ``targets`` (None: the workflow's default target) need, as ``snakemake
    --summary`` lists them in the empty ``folder``, given the checkout's config.yaml (the
    Snakefile's ``configfile:``). ``python`` is the interpreter that has Snakemake (default: this
    one)."""
    if bad := [t for t in targets or [] if not t or t.startswith("-")]:
        raise ValueError(f"audit target {bad[0]!r} is not a target: it would be an option")
    checkout_config = Path(snakefile).resolve().parent / "config.yaml"
    if checkout_config.is_file():
        shutil.copyfile(checkout_config, folder / "config.yaml")
    # Targets first: --configfile takes several values and would swallow them.
    command = [python or sys.executable, "-m", "snakemake", *(targets or [])]
    command += ["--snakefile", str(snakefile), "--directory", str(folder)]
    if configfiles:
        command += ["--configfile", *map(str, configfiles)]
    # `python -m` puts the working directory first on sys.path: never the audited folder's.
    environ = dict(os.environ)
    protect_imports(environ)
    result = subprocess.run(
        [*command, "--summary"], capture_output=True, text=True, env=environ, timeout=timeout
    )
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    header = next((i for i, row in enumerate(lines) if row[:2] == ["output_file", "date"]), None)
    if result.returncode != 0 or header is None:
        raise RuntimeError(
            f"snakemake --summary failed (exit {result.returncode}): "
            f"{_snakemake_cause(result.stderr or result.stdout)}"
        )
    return [fields[0] for fields in lines[header + 1 :] if len(fields) >= 6]


def _snakemake_cause(output: str) -> str:
    """The lines of Snakemake's output that say why it failed (its exception and message)."""
    lines = [line for line in output.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if "Exception" in line or "Error" in line:
            return " ".join(part.strip() for part in lines[index : index + 4])[:1500]
    return " ".join(lines[-6:])[-1500:]
