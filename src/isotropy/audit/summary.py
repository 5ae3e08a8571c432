"""What Snakemake itself keeps: ``snakemake --summary`` run as a subprocess, and its statuses as
findings (parameters, rule code and input sets against the current workflow)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from isotropy.audit.findings import FAIL, RESULTS, Finding

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
    command += [*extra_args, "--summary"]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else None,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"snakemake --summary failed (exit {result.returncode}): {_snakemake_cause(result.stderr or result.stdout)}"
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
    """Findings from Snakemake's summary for the audited files (missing files are the walk's job)."""
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
            findings.append(
                Finding(
                    path, FAIL, "stale", "Snakemake would re-make it: something upstream changed"
                )
            )
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
