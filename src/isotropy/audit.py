"""Audit every result against its provenance: is it intact, current, and made by today's code?

The audit starts at every file under ``results/`` and walks each provenance record
(:mod:`isotropy.provenance`) back through its inputs to the raw downloads
(``resources/raw/<source>/manifest.json``). For every file on the way it checks:

* **checksum** – the file still has the sha256 its record gives (a result edited by hand);
* **input** – every input still exists with the sha256 it had when the file was made;
* **stale** – no input is newer than the file (Snakemake would re-make it); an input re-made
  with the very content the file was made from is only a warning;
* **code** – the step's script and every project module it ran are unchanged;
* **params** – what Snakemake itself keeps (``.snakemake/metadata``, ``snakemake --summary``):
  parameters, rule code and the set of inputs are the ones the current workflow and
  configuration would use; a result whose upstream changed is "update pending";
* **raw** – every raw file still matches the sha256 in its source's download manifest (every
  data file a step reads is a download or made from one, I-STAR and geometry included).

Files without a provenance record fall back on Snakemake's metadata (its input list and input
checksums) so that the walk still reaches the raw data; under ``results/`` a missing record is a
mismatch. Package versions that differ from today's are reported as warnings.

:func:`audit` returns :class:`Finding` rows; :func:`main` (console ``isotropy-audit``, rule
``audit``) prints them as a table and exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isotropy.io import sha256_file
from isotropy.paths import MANIFEST_NAME, RAW_ROOT
from isotropy.provenance import (
    is_record,
    module_source,
    package_versions,
    read_record,
    snakemake_metadata,
)

log = logging.getLogger(__name__)

OK, WARN, FAIL = "ok", "warn", "FAIL"
RESULTS = "results"
MODELS_ROOT = Path("resources") / "models"  # models assembled from PyPI volumes end their chain too
# The audit's own outputs, and files that are never results.
AUDIT_OUTPUTS = ("results/audit.tsv",)
IGNORED_NAMES = (".snakemake_timestamp",)
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
MTIME_TOLERANCE_S = 1e-3


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


# ---------------------------------------------------------------------------------------------
# Walking the records


def _short(digest: str | None) -> str:
    return (digest or "none")[:12]


def _resolve(root: Path, path: str) -> Path:
    return Path(path) if os.path.isabs(path) else root / path


def _rel(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def result_files(root: Path) -> list[str]:
    """Every file under ``root/results`` (records, hidden files and the audit's outputs aside)."""
    base = root / RESULTS
    if not base.is_dir():
        return []
    files = []
    for path in sorted(base.rglob("*")):
        rel = _rel(root, path)
        if not path.is_file() or is_record(path) or rel in AUDIT_OUTPUTS:
            continue
        if path.name in IGNORED_NAMES or any(
            part.startswith(".") for part in path.relative_to(base).parts
        ):
            continue
        files.append(rel)
    return files


def is_manifest(path: str) -> bool:
    """Whether ``path`` is a raw source's (or an assembled model's) manifest: the end of every walk."""
    parts = Path(path).parts
    return (
        len(parts) == 4
        and Path(*parts[:2]) in (Path(RAW_ROOT), MODELS_ROOT)
        and parts[3] == MANIFEST_NAME
    )


def check_manifest(root: Path, path: str, config: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every raw file of a source against the sha256 its download manifest recorded, and what
    it was fetched from against today's pins (:func:`check_pins`)."""
    manifest_path = _resolve(root, path)
    try:
        manifest = json.loads(manifest_path.read_text())
        entries = manifest["files"]
    except (OSError, json.JSONDecodeError, KeyError) as error:
        return [Finding(path, FAIL, "raw", f"download manifest unreadable: {error}")]
    findings = []
    for entry in entries:
        raw = manifest_path.parent / entry["path"]
        rel = _rel(root, raw)
        if not raw.is_file():
            findings.append(Finding(rel, FAIL, "raw", f"raw file missing (listed in {path})"))
            continue
        actual = sha256_file(raw)
        if actual != entry["sha256"]:
            findings.append(
                Finding(
                    rel,
                    FAIL,
                    "raw",
                    f"raw file differs from its download manifest {path}: sha256 recorded {_short(entry['sha256'])}…, now {_short(actual)}…",
                )
            )
    findings += check_pins(path, manifest, config)
    if not any(f.status == FAIL for f in findings):
        origin = manifest.get("origin", "?")
        findings.append(
            Finding(
                path, OK, "raw", f"{len(entries)} raw file(s) match the manifest (from {origin})"
            )
        )
    return findings


def check_pins(
    path: str, manifest: Mapping[str, Any], config: Mapping[str, Any] | None = None
) -> list[Finding]:
    """Each fetched input's recorded sha256 against its pins, re-read now (never the record's word).

    A mirror file is compared with the mirror's MANIFEST.tsv (and the config pin of its URL), a
    downloaded file with its config pin (when ``config`` is given). An input that nothing pins
    is a warning; one whose pin differs, or that the record calls pinned while nothing pins it
    now, is a mismatch.
    """
    from isotropy import download

    inputs = manifest.get("inputs") or []
    if not inputs:
        return []
    name = manifest.get("source")
    source_cfg = ((config or {}).get("sources") or {}).get(name) or {}
    url_pins = (
        dict(zip(download._as_list(source_cfg.get("url")), download._aligned_pins(source_cfg)))
        if source_cfg.get("url")
        else {}
    )
    findings: list[Finding] = []
    mirror = manifest.get("mirror")
    mirror_pins: Mapping[str, Any] | None = None
    if mirror and any("mirror_path" in entry for entry in inputs):
        if not Path(mirror).is_dir():
            return [
                Finding(
                    path,
                    WARN,
                    "raw",
                    f"the mirror {mirror} it was fetched from is not here: its pins were not re-checked",
                )
            ]
        try:
            mirror_pins = download.read_mirror_manifest(Path(mirror)) or {}
        except (OSError, UnicodeDecodeError, download.UnverifiedFileError) as error:
            return [Finding(path, FAIL, "raw", f"the mirror's pins cannot be read: {error}")]
    for entry in inputs:
        recorded = str(entry.get("sha256") or "")
        expected: dict[str, str] = {}
        if "mirror_path" in entry:
            rel = entry["mirror_path"]
            label = f"mirror file {rel}"
            if mirror_pins and rel in mirror_pins:
                expected["MANIFEST.tsv"] = mirror_pins[rel].sha256
            for url, pin in url_pins.items():
                if pin and download.url_file_name(url) == Path(rel).name:
                    expected["config"] = pin
        elif "url" in entry:
            label = entry["url"]
            if url_pins.get(entry["url"]):
                expected["config"] = url_pins[entry["url"]]
            elif config is None:
                continue  # the config's pins are not known: nothing to re-derive
        else:
            label = f"hub data set {entry.get('hub', '?')}"
        differing = [
            f"{by} pins {_short(pin.lower())}…"
            for by, pin in expected.items()
            if pin.lower() != recorded
        ]
        claimed = [
            by
            for by in entry.get("pinned_by") or []
            if by not in expected and (by != "config" or config is not None)
        ]
        if differing:
            findings.append(
                Finding(
                    path,
                    FAIL,
                    "raw",
                    f"{label} was fetched with sha256 {_short(recorded)}…, but {', '.join(differing)}; "
                    f"re-fetch it (snakemake --forcerun download_source) from a file that matches its pin",
                )
            )
        elif claimed:
            findings.append(
                Finding(
                    path,
                    FAIL,
                    "raw",
                    f"{label} is recorded as pinned by {', '.join(claimed)}, but no such pin exists now",
                )
            )
        elif not expected:
            findings.append(
                Finding(
                    path,
                    WARN,
                    "raw",
                    f"{label} is pinned by nothing (no MANIFEST.tsv row, no config sha256): "
                    "the raw files made from it are unverified",
                )
            )
    return findings


def _newer(root: Path, input_path: Path, output_path: Path) -> bool:
    return input_path.stat().st_mtime > output_path.stat().st_mtime + MTIME_TOLERANCE_S


def check_record(
    root: Path, path: str, record: Mapping[str, Any], current_packages: Mapping[str, str | None]
) -> list[Finding]:
    """The checks that need only the provenance record: checksum, inputs, staleness, code, packages."""
    target = _resolve(root, path)
    findings = []
    recorded = record.get("outputs", {}).get(path) or record.get("outputs", {}).get(str(target))
    if recorded is None:
        findings.append(
            Finding(
                path, FAIL, "record", "its provenance record does not list this file as an output"
            )
        )
    else:
        actual = sha256_file(target)
        if actual != recorded["sha256"]:
            findings.append(
                Finding(
                    path,
                    FAIL,
                    "checksum",
                    f"modified after it was made: sha256 recorded {_short(recorded['sha256'])}…, now {_short(actual)}…",
                )
            )
    missing, changed, newer, remade = _compare_files(root, target, record.get("inputs", {}))
    findings += _input_findings(path, missing, changed, newer)
    if remade:
        findings.append(
            Finding(
                path,
                WARN,
                "stale",
                f"input {_listing(remade)} {'is' if len(remade) == 1 else 'are'} newer than this file but identical to what it was made from",
            )
        )
    findings += _check_code(path, record.get("code") or {})
    findings += _check_packages(path, record.get("packages") or {}, current_packages)
    return findings


def _compare_files(
    root: Path, target: Path, entries: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """Recorded files against today's: (missing, changed, newer and changed, newer but identical)."""
    missing, changed, newer, remade = [], [], [], []
    for name, entry in sorted(entries.items()):
        source = _resolve(root, name)
        if not source.is_file():
            missing.append(name)
            continue
        actual = sha256_file(source)
        if actual != entry["sha256"]:
            changed.append(
                f"{name} (sha256 recorded {_short(entry['sha256'])}…, now {_short(actual)}…)"
            )
        if _newer(root, source, target):
            # Re-made with identical content: this file is still what that content gives, and
            # Snakemake (which compares checksums of small inputs) agrees.
            (newer if actual != entry["sha256"] else remade).append(name)
    return missing, changed, newer, remade


def _listing(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _input_findings(
    path: str,
    missing: Sequence[str],
    changed: Sequence[str],
    newer: Sequence[str],
    noun: str = "input",
    check: str = "input",
) -> list[Finding]:
    """One finding per kind of input problem, naming the inputs (the first few of many)."""
    findings = []
    if missing:
        findings.append(
            Finding(
                path,
                FAIL,
                check,
                f"{noun} {_listing(missing)} {'is' if len(missing) == 1 else 'are'} missing",
            )
        )
    if changed:
        findings.append(
            Finding(
                path, FAIL, check, f"{noun} {_listing(changed)} changed since this file was made"
            )
        )
    if newer:
        findings.append(
            Finding(
                path,
                FAIL,
                "stale",
                f"{noun} {_listing(newer)} {'is' if len(newer) == 1 else 'are'} newer than this file",
            )
        )
    return findings


def _check_code(path: str, code: Mapping[str, Any]) -> list[Finding]:
    findings = []
    script, recorded = code.get("script"), code.get("script_sha256")
    if script and recorded:
        current = Path(script)
        if not current.is_file():
            findings.append(
                Finding(path, FAIL, "code", f"the script that made it, {script}, no longer exists")
            )
        elif sha256_file(current) != recorded:
            findings.append(
                Finding(path, FAIL, "code", f"its script {current.name} changed since it was made")
            )
    for module, digest in sorted((code.get("modules") or {}).items()):
        source = module_source(module)
        if source is None:
            findings.append(
                Finding(path, FAIL, "code", f"module {module}, which made it, no longer exists")
            )
        elif sha256_file(source) != digest:
            findings.append(
                Finding(path, FAIL, "code", f"module {module} changed since it was made")
            )
    return findings


def _check_packages(
    path: str, recorded: Mapping[str, str | None], current: Mapping[str, str | None]
) -> list[Finding]:
    changed = [
        f"{name} {old} → {current.get(name)}"
        for name, old in sorted(recorded.items())
        if name in current and current[name] != old
    ]
    if changed:
        return [
            Finding(
                path, WARN, "packages", "made with other package versions: " + ", ".join(changed)
            )
        ]
    return []


def check_metadata_only(root: Path, path: str, meta: Mapping[str, Any]) -> list[Finding]:
    """A file without a provenance record: Snakemake's input checksums and the input mtimes."""
    target = _resolve(root, path)
    missing, changed, newer = [], [], []
    for name in meta.get("input") or []:
        source = _resolve(root, name)
        if not source.is_file():
            missing.append(name)
            continue
        recorded = (meta.get("input_checksums") or {}).get(name)
        if recorded:
            algorithm, _, digest = recorded.partition(":")
            if algorithm == "sha256" and sha256_file(source) != digest:
                changed.append(f"{name} (Snakemake's input checksum)")
        if _newer(root, source, target):
            newer.append(name)
    return _input_findings(path, missing, changed, newer)


def walk(
    root: str | os.PathLike,
    starts: Iterable[str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[list[Finding], list[str]]:
    """Audit ``starts`` (default: every result file) and everything they were made from.

    Returns the findings and the audited files that have a provenance record or Snakemake
    metadata (the ones whose parameters :func:`snakemake_summary` can check).
    """
    root = Path(root).resolve()
    queue = deque(starts if starts is not None else result_files(root))
    asked = {_rel(root, _resolve(root, p)) for p in starts} if starts is not None else set()
    seen: set[str] = set()
    findings: list[Finding] = []
    tracked: list[str] = []
    packages = package_versions()
    while queue:
        path = queue.popleft()
        path = _rel(root, _resolve(root, path))
        if path in seen:
            continue
        seen.add(path)
        target = _resolve(root, path)
        if not target.is_file():
            findings.append(Finding(path, FAIL, "missing", "file does not exist"))
            continue
        record = read_record(target)
        if is_manifest(path):
            findings += check_manifest(root, path, config)
            if record is not None:  # a manifest with a record of its own is checked against it too
                findings += [
                    f for f in check_record(root, path, record, packages) if f.status != OK
                ]
            tracked.append(path)
            continue
        before = len(findings)
        if record is not None:
            findings += check_record(root, path, record, packages)
            queue.extend(record.get("inputs", {}))
            tracked.append(path)
        else:
            meta = snakemake_metadata(path, root)
            under_results = Path(path).parts[:1] == (RESULTS,)
            if meta is not None:
                status = FAIL if under_results else WARN
                findings.append(
                    Finding(
                        path,
                        status,
                        "record",
                        f"no provenance record (rule {meta.get('rule')}); traced through Snakemake's metadata",
                    )
                )
                findings += check_metadata_only(root, path, meta)
                queue.extend(meta.get("input") or [])
                tracked.append(path)
            elif under_results:
                findings.append(
                    Finding(
                        path,
                        FAIL,
                        "record",
                        "no provenance record and no Snakemake metadata: its origin is unknown",
                    )
                )
            elif path in asked:  # named on the command line: a file the audit cannot audit
                findings.append(
                    Finding(
                        path,
                        FAIL,
                        "record",
                        "given as a file to audit, but not made by the workflow (no record, no Snakemake "
                        "metadata); config files go after --configfile (isotropy-audit --configfile a.yaml b.yaml)",
                    )
                )
            else:
                findings.append(
                    Finding(
                        path,
                        WARN,
                        "record",
                        "not made by the workflow (no record, no Snakemake metadata); checked by its consumers' sha256 only",
                    )
                )
        if not any(f.file == path and f.status != OK for f in findings[before:]):
            findings.append(
                Finding(
                    path, OK, "all", "checksum, inputs, code" + (" and record" if record else "")
                )
            )
    return findings, tracked


# ---------------------------------------------------------------------------------------------
# What Snakemake keeps: parameters, rule code and input sets against the current workflow


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
    summary = {}
    header_seen = False
    for line in result.stdout.splitlines():
        fields = line.split("\t")
        if fields[:2] == ["output_file", "date"]:
            header_seen = True
            continue
        if header_seen and len(fields) >= 6:
            summary[fields[0]] = (fields[-2], fields[-1])
    if not header_seen:
        raise RuntimeError(
            f"snakemake --summary printed no table:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
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


# ---------------------------------------------------------------------------------------------
# The whole audit


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
) -> list[Finding]:
    """Every finding for the results under ``root`` (a Snakemake working directory).

    ``targets`` are the Snakemake targets whose results must all be there (default: the
    workflow's default target, rule ``all``).

    With ``snakefile`` the parameters, rule code and input sets are checked by Snakemake against
    the current workflow; ``configfiles`` are the config files of the run (or ``config``, the
    current configuration as a mapping, which is written to a temporary file). Without it those
    checks are skipped and one warning says so.
    """
    root = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="isotropy-audit-") as tmp:
        files = list(configfiles)
        if config is not None:
            dumped = Path(tmp) / "config.yaml"
            dumped.write_text(json.dumps(_plain(config)))  # JSON is YAML
            files.append(dumped)
        current = config if config is not None else _load_configs(files)
        findings, tracked = walk(root, starts, current)
        if snakefile is None:
            findings.append(
                Finding("(workflow)", WARN, "params", "parameters not checked: no Snakefile given")
            )
            return findings
        try:
            # The whole workflow of this configuration (its default target): what it declares,
            # and Snakemake's view of each of its files. Never the audited files as targets: a
            # result of another configuration has no rule here and would fail the whole call.
            summary = snakemake_summary(
                root,
                list(targets) if targets else None,
                snakefile=snakefile,
                configfiles=files,
                extra_args=snakemake_args,
                env=env,
                python=snakemake_python,
            )
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as error:
            findings.append(
                Finding(
                    "(workflow)",
                    FAIL,
                    "params",
                    f"cannot check parameters and code against the workflow: {error}",
                )
            )
            return findings
    records = {p: read_record(_resolve(root, p)) or {} for p in tracked}
    # Snakemake's view adds what the walk cannot see; a staleness the walk already named is not repeated.
    named = {(f.file, f.check) for f in findings if f.status == FAIL}
    extra = [
        f
        for f in summary_findings(summary, tracked, records, current)
        if (f.file, f.check) not in named
    ]
    extra += declared_findings(summary, findings, records, current, complete=starts is None)
    flagged = {f.file for f in extra if f.status == FAIL}
    # A file the walk called fine but Snakemake flags is not fine: drop its "ok" line.
    findings = [
        f for f in findings if not (f.status == OK and f.check == "all" and f.file in flagged)
    ] + extra
    return findings


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
    if complete:
        absent = sorted(declared - audited)
        if absent:
            out.append(
                Finding(
                    "(workflow)",
                    FAIL,
                    "declared",
                    f"{len(audited & declared)} of the {len(declared)} result files this configuration "
                    f"declares were audited; absent: {_listing(absent)} (make them, e.g. make run; give "
                    "the config files they were made with, --configfile a.yaml b.yaml; or name the "
                    "target that made them, --target main_study)",
                )
            )
    for path in sorted(audited - declared):
        record = records.get(path) or {}
        made_with = record.get("config") or {}
        hint = config_differences(made_with, config or {}, section=None, limit=3)
        studies = made_with.get("studies")
        out.append(
            Finding(
                path,
                WARN,
                "config",
                "a result of another configuration (not in this workflow's targets"
                + (f"; its record names studies {studies}" if studies else "")
                + (", and differs at " + ", ".join(hint) if hint else "")
                + "): checksums, inputs and code audited, parameters not; give its config files to audit it fully",
            )
        )
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _load_configs(files: Sequence[str | os.PathLike]) -> dict | None:
    if not files:
        return None
    from isotropy.studies import load_config_files

    return load_config_files(files)


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
    import csv

    from isotropy.io import atomic_path

    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["file", "status", "check", "reason"], delimiter="\t"
        )
        writer.writeheader()
        writer.writerows(f.as_row() for f in findings)


def default_snakefile() -> Path | None:
    """The repository's Snakefile beside the installed package (an editable install), if any."""
    candidate = Path(__file__).resolve().parents[2] / "Snakefile"
    return candidate if candidate.is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    """``isotropy-audit``: print the audit table; exit 1 on any mismatch, 0 otherwise."""
    parser = argparse.ArgumentParser(prog="isotropy-audit", description=__doc__.split("\n\n")[0])
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
    args = parser.parse_args(argv)
    root = Path(args.directory)
    snakefile = None
    if not args.no_snakemake:
        snakefile = args.snakefile or (
            root / "Snakefile" if (root / "Snakefile").is_file() else default_snakefile()
        )
    from isotropy.studies import ConfigError

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


if __name__ == "__main__":
    sys.exit(main())
