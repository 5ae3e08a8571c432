"""The whole audit: the record walk, then Snakemake's view of the same files, merged; and
``isotropy-audit`` (``python -m isotropy.audit``), the audit from the command line: it prints the
table and exits 1 on any mismatch.

What Snakemake itself keeps: ``snakemake --summary`` run as a subprocess, and its statuses as
findings (parameters, rule code and input sets against the current workflow).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from isotropy.audit.findings import (
    AUDIT_OUTPUTS,
    FAIL,
    OK,
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
from isotropy.trust import protect_imports, record_problem, workflow_problems
from isotropy.workflow.config import ConfigError, load_config, load_config_files


def audit(
    root: str | os.PathLike = ".",
    *,
    starts: Iterable[str] | None = None,
    snakefile: str | os.PathLike | None = None,
    configfiles: Sequence[str | os.PathLike] = (),
    config: Mapping[str, Any] | None = None,
    snakemake_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    snakemake_python: str | None = None,
    targets: Sequence[str] | None = None,
    workflow_root: str | os.PathLike | None = None,
) -> list[Finding]:
    """Every finding for the results under ``root`` (a Snakemake working directory), read from
    its intake's copy, its code against the checkout at ``workflow_root`` (default: the
    Snakefile's folder, else this package's). ``targets``: whose results must all be there
    (default: rule ``all``). With ``snakefile``, Snakemake checks parameters, rule code and input
    sets against ``configfiles`` (or ``config``); without it one warning says they were not."""
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
        findings, tracked = walk(workspace, starts, current, workflow_root=code_root)
        findings = [*refused, *findings]
        if snakefile is None:
            skipped = "parameters not checked: no Snakefile given"
            return [*findings, Finding("(workflow)", WARN, "params", skipped)]
        problems = workflow_problems(Path(snakefile).resolve().parent)
        if refused or problems:
            skipped = "parameters not checked: Snakemake is not run on forged or refused files"
            code = [Finding(escaped(f), FAIL, "code", reason) for f, reason in problems]
            return [*findings, *code, Finding("(workflow)", FAIL, "params", skipped)]
        summary = _summary_in(
            workspace, snakefile, targets, files, snakemake_args, env, snakemake_python
        )
        if isinstance(summary, Finding):
            return [*findings, summary]
        records = {p: load_record(workspace, p)[0] or {} for p in tracked}
    return with_snakemake_view(
        findings, summary, tracked, records, current, complete=starts is None
    )


def _summary_in(
    workspace: Path,
    snakefile: str | os.PathLike,
    targets: Sequence[str] | None,
    files: Sequence[str | os.PathLike],
    extra_args: Sequence[str],
    env: Mapping[str, str] | None,
    python: str | None,
) -> dict[str, tuple[str, str]] | Finding:
    """``snakemake --summary`` in the intake's copy, with the checkout's config.yaml (the
    Snakefile's ``configfile:``, never the folder's), or the finding saying why not. The whole
    workflow of this configuration (its default target), never the audited files as targets: a
    result of another configuration has no rule here and would fail the whole call."""
    checkout_config = Path(snakefile).resolve().parent / "config.yaml"
    if checkout_config.is_file():
        shutil.copyfile(checkout_config, workspace / "config.yaml")
    try:
        return snakemake_summary(
            workspace,
            targets or None,
            snakefile=snakefile,
            configfiles=files,
            extra_args=extra_args,
            env=env,
            python=python,
        )
    except (RuntimeError, ValueError, subprocess.TimeoutExpired, OSError) as error:
        failed = f"cannot check parameters and code against the workflow: {error}"
        return Finding("(workflow)", FAIL, "params", failed)


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
            for name, cause in intake(root, workspace, starts, record_problem).items()
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


def with_snakemake_view(
    findings: Sequence[Finding],
    summary: Mapping[str, tuple[str, str]],
    tracked: Sequence[str],
    records: Mapping[str, Mapping],
    config: Mapping | None,
    *,
    complete: bool,
) -> list[Finding]:
    """The walk's findings with what Snakemake's view adds (a staleness the walk already named
    is not repeated; a file the walk called fine but Snakemake flags loses its "ok" line)."""
    named = {(f.file, f.check) for f in findings if f.status == FAIL}
    extra = [
        f
        for f in summary_findings(summary, tracked, records, config)
        if (f.file, f.check) not in named
    ]
    extra += declared_findings(summary, findings, records, config, complete=complete)
    flagged = {f.file for f in extra if f.status == FAIL}
    kept = [f for f in findings if not (f.status == OK and f.check == "all" and f.file in flagged)]
    return kept + extra


def declared_findings(
    summary: Mapping[str, tuple[str, str]],
    findings: Sequence[Finding],
    records: Mapping[str, Mapping],
    config: Mapping | None,
    *,
    complete: bool,
) -> list[Finding]:
    """Results the workflow declares but the audit did not see (a mismatch when every result was
    to be audited), and audited results this configuration does not make (another one did)."""
    declared = {p for p in summary if Path(p).parts[:1] == (RESULTS,) and p not in AUDIT_OUTPUTS}
    audited = {
        f.file for f in findings if Path(f.file).parts[:1] == (RESULTS,) and f.check != "missing"
    }
    out = []
    if complete and (absent := sorted(declared - audited)):
        reason = (
            f"{len(audited & declared)} of the {len(declared)} result files this configuration "
            f"declares were audited; absent: {listing(absent)} (make them, e.g. make run; give the "
            "config files they were made with, --configfile a.yaml b.yaml; or name the target "
            "that made them, --target main_study)"
        )
        out.append(Finding("(workflow)", FAIL, "declared", reason))
    for path in sorted(audited - declared):
        made_with = (records.get(path) or {}).get("config") or {}
        hint = config_differences(made_with, config or {}, section=None, limit=3)
        studies = made_with.get("studies")
        reason = (
            "a result of another configuration (not in this workflow's targets"
            + (f"; its record names studies {studies}" if studies else "")
            + (", and differs at " + ", ".join(hint) if hint else "")
            + "): checksums, inputs and code audited, parameters not; give its config files to "
            "audit it fully"
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


# What makes Snakemake plan a job again, for the audit: every trigger but "code", which for a
# `script:` rule compares the script's modification time with the output's, so that a folder
# copied into a fresh clone (every script newer than every result) would be all "update pending".
# The script's and modules' content is checked by sha256 against each record (the walk), and the
# code of `shell:` and `run:` rules by Snakemake as text ("rule implementation changed").
RERUN_TRIGGERS = ("mtime", "params", "input", "software-env")

# Snakemake --summary statuses that mean the result no longer matches the workflow.
SUMMARY_STATUS = {
    "updated input files": (
        "stale",
        "an input is newer than this file (Snakemake would re-make it)",
    ),
    "rule implementation changed": (
        "code",
        "the rule's code changed since this file was made (Snakemake metadata)",
    ),
    "set of input files changed": (
        "params",
        "the rule now takes a different set of inputs (Snakemake metadata)",
    ),
    "params changed": (
        "params",
        "parameters changed since this file was made (Snakemake metadata)",
    ),
}


def snakemake_summary(
    root: str | os.PathLike,
    targets: Sequence[str] | None,
    *,
    snakefile: str | os.PathLike,
    configfiles: Sequence[str | os.PathLike] = (),
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 900,
    python: str | None = None,
) -> dict[str, tuple[str, str]]:
    """``snakemake --summary`` for ``targets`` (None: the workflow's default target): output path
    → (status, plan).

    Snakemake compares its metadata of each output with what the current Snakefile and
    configuration give (params, rule code, input set) and says whether the file would be
    re-made. It only reads: the lock of a running workflow does not stop it. ``python`` is the
    interpreter that has Snakemake (default: this one).
    """
    if targets is not None and not targets:
        return {}
    if bad := [t for t in targets or [] if not t or t.startswith("-")]:
        raise ValueError(f"audit target {bad[0]!r} is not a target: it would be an option")
    # Targets first: --configfile and --quiet take several values and would swallow them.
    command = [
        python or sys.executable,
        "-m",
        "snakemake",
        *(targets or []),
        "--snakefile",
        str(snakefile),
        "--directory",
        str(root),
    ]
    if configfiles:
        command += ["--configfile", *map(str, configfiles)]
    command += ["--rerun-triggers", *RERUN_TRIGGERS, *extra_args, "--summary"]
    # `python -m` puts the working directory first on sys.path: never the audited folder's.
    environ = dict(env if env is not None else os.environ)
    protect_imports(environ)
    result = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(
            f"snakemake --summary failed (exit {result.returncode}): "
            f"{_snakemake_cause(result.stderr or result.stdout)}"
        )
    return _summary_table(result.stdout, result.stderr)


def _summary_table(stdout: str, stderr: str) -> dict[str, tuple[str, str]]:
    """Output path → (status, plan) from the table ``snakemake --summary`` prints."""
    summary = {}
    header_seen = False
    for line in stdout.splitlines():
        fields = line.split("\t")
        if fields[:2] == ["output_file", "date"]:
            header_seen = True
            continue
        if header_seen and len(fields) >= 6:
            summary[fields[0]] = (fields[-2], fields[-1])
    if not header_seen:
        raise RuntimeError(
            f"snakemake --summary printed no table:\n{stdout[-2000:]}\n{stderr[-2000:]}"
        )
    return summary


def _snakemake_cause(output: str) -> str:
    """The lines of Snakemake's output that say why it failed (its exception and message)."""
    lines = [line for line in output.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if "Exception" in line or "Error" in line:
            return " ".join(part.strip() for part in lines[index : index + 4])[:1500]
    return " ".join(lines[-6:])[-1500:]


def summary_findings(
    summary: Mapping[str, tuple[str, str]],
    audited: Iterable[str],
    records: Mapping[str, Mapping] | None = None,
    config: Mapping | None = None,
) -> list[Finding]:
    """Findings from Snakemake's summary for the audited files (missing files are the walk's
    job)."""
    findings = []
    for path in audited:
        if path not in summary:
            continue
        status, plan = summary[path]
        if status in SUMMARY_STATUS:
            check, reason = SUMMARY_STATUS[status]
            if check == "params" and records and config is not None and path in records:
                hint = config_differences(
                    records[path].get("config") or {}, config, section=_study_of(path)
                )
                if hint:
                    reason += "; config now differs at " + ", ".join(hint)
            findings.append(Finding(path, FAIL, check, reason))
        elif status == "ok" and plan == "update pending":
            reason = "Snakemake would re-make it: something upstream changed"
            findings.append(Finding(path, FAIL, "stale", reason))
    return findings


def _study_of(path: str) -> str | None:
    parts = Path(path).parts
    return parts[1] if len(parts) > 2 and parts[0] == RESULTS else None


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        flat = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


def config_differences(
    recorded: Mapping, current: Mapping, section: str | None = None, limit: int = 4
) -> list[str]:
    """Config keys whose value differs between a record's snapshot and the current config.

    Only keys present in both (a snapshot has defaults filled in, a config file may not), and,
    when ``section`` (the study) is given, top-level values and keys within that section. A hint
    for the reader; Snakemake decides what changed.
    """
    old, new = _flatten(recorded), _flatten(current)
    keys = [
        k
        for k in old
        if k in new
        and old[k] != new[k]
        and (section is None or "." not in k or k.split(".")[0] == section)
    ]
    return [f"{k} ({old[k]!r} → {new[k]!r})" for k in sorted(keys)[:limit]]


if __name__ == "__main__":
    sys.exit(main())
