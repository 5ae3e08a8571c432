"""Audit every result against its provenance: is it intact, current, and made by today's code?

Reads the intake's copy (:mod:`isotropy.intake`) and walks each record back to the raw downloads:
checksums, inputs, staleness, code, and raw files against today's pins (never the record's).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import functools
import hashlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import isotropy.intake as door
from isotropy import sources
from isotropy.intake import RECORD_SUFFIX, RESULTS, escaped, intake, is_manifest, name_problem
from isotropy.intake import listing as listing_of
from isotropy.io import atomic_path, sha256_file
from isotropy.provenance import module_source, record_path
from isotropy.sources.pins import lock_path, read_lock
from isotropy.trust import read_record, validator
from isotropy.workflow.config import SOURCES_CONFIG, ConfigError, load_config_files

OK, WARN, FAIL = "ok", "warn", "FAIL"
REMAKE = "re-make it (snakemake --forcerun <its rule>) or delete the record and the file"
REFETCH = "re-fetch the source (snakemake --forcerun download_source)"
NOT_COPIED = ": not copied, not audited"
PROVENANCE, MANIFEST = validator("provenance"), validator("manifest")
TRUST = {**sources.MIRROR_TRUST, "lock": sources.TRUST_LOCK}
MTIME_TOLERANCE_S = 1e-3
WORKFLOW_ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = "isotropy-audit-"  # then the pid of the audit that made it


@dataclasses.dataclass(frozen=True)
class Finding:
    """One line of the audit: a file, its status (ok / warn / FAIL), which check, and why."""

    file: str
    status: str
    check: str
    reason: str


def short_digest(digest: str | None) -> str:
    return (digest or "none")[:12]


def digests(recorded: str, actual: str) -> str:
    return f"sha256 recorded {short_digest(recorded)}…, now {short_digest(actual)}…"


def resolve_path(root: Path, path: str) -> Path:
    """``path`` inside ``root``; a name outside it (absolute, '..', too long) where nothing is."""
    if name_problem(path) is not None:
        return root / ".outside" / hashlib.sha256(os.fsencode(path)).hexdigest()
    return root / path


def listing(names: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(escaped(name, 200) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _digest_findings(path: str, check: str, what: str, recorded: str, actual: str) -> list[Finding]:
    """A failure of ``check`` saying ``what`` when ``actual`` is not the ``recorded`` sha256."""
    if actual == recorded:
        return []
    return [Finding(path, FAIL, check, f"{what}: {digests(recorded, actual)}")]


def check_record(
    root: Path, path: str, record: Mapping[str, Any], *, workflow_root: Path
) -> list[Finding]:
    """The checks that need only the provenance record: checksums (the job's other outputs' too:
    a result replaced with its own record is still named by its twins'), inputs, staleness, code."""
    findings, listed = [], False
    for name, entry in sorted((record.get("outputs") or {}).items()):
        output = resolve_path(root, name)
        rel, recorded = str(output.relative_to(root)), entry["sha256"]
        if rel == path:
            listed = True
            made = "modified after it was made"
            findings += _digest_findings(path, "checksum", made, recorded, _sha256(output))
        elif output.is_file() and (actual := _sha256(output)) != recorded:  # missing: the walk's
            reason = (
                f"differs from the sha256 that the record of {path}, made by the same job, gives "
                f"it ({digests(recorded, actual)}): replaced after it was made, its own record "
                "rewritten or not"
            )
            findings.append(Finding(rel, FAIL, "checksum", reason))
    if not listed:
        reason = "its provenance record does not list this file as an output"
        findings.append(Finding(path, FAIL, "record", reason))
    findings += _input_findings(root, path, record.get("inputs", {}))
    findings += _check_code(path, record.get("code") or {}, workflow_root)
    return findings


# sha256 of each file of the copy, hashed once per walk.
_sha256 = functools.cache(sha256_file)


MISSING = (FAIL, "input", "{names} {are} missing")
CHANGED = (FAIL, "input", "{names} changed since this file was made")
NEWER = (FAIL, "stale", "{names} {are} newer than this file")
# Re-made with identical content: this file is still what that content gives.
REMADE = (
    WARN,
    "stale",
    "{names} {are} newer than this file but identical to what it was made from",
)


def _input_findings(
    root: Path, path: str, inputs: Mapping[str, Mapping[str, Any]]
) -> list[Finding]:
    """The recorded inputs of ``path`` against today's files: missing, changed, newer."""
    made = resolve_path(root, path).stat().st_mtime + MTIME_TOLERANCE_S
    kinds = {k: list[str]() for k in (MISSING, CHANGED, NEWER, REMADE)}
    for name, entry in sorted(inputs.items()):
        source = resolve_path(root, name)
        if not source.is_file():
            kinds[MISSING].append(name)
            continue
        actual = _sha256(source)
        if actual != entry["sha256"]:
            kinds[CHANGED].append(f"{name} ({digests(entry['sha256'], actual)})")
        if source.stat().st_mtime > made:
            kinds[NEWER if actual != entry["sha256"] else REMADE].append(name)
    findings = []
    for (status, check, text), names in kinds.items():
        if names:
            are = "is" if len(names) == 1 else "are"
            reason = "input " + text.format(names=listing(names), are=are)
            findings.append(Finding(path, status, check, reason))
    return findings


def _check_code(path: str, code: Mapping[str, Any], workflow_root: Path) -> list[Finding]:
    """The step's script (relative to ``workflow_root``) and project modules, by sha256."""
    problems = []
    script, recorded = code.get("script"), code.get("script_sha256")
    if script and recorded:
        current = workflow_root / script  # an absolute name (older records) stays as it is
        try:
            if Path("/proc") in Path(os.path.realpath(current)).parents:
                named = f"its record names a script under /proc, {escaped(script)}"
                problems.append(f"{named}: never read")
            elif not current.is_file():
                problems.append(f"the script that made it, {script}, no longer exists")
            elif _sha256(current) != recorded:
                problems.append(f"its script {current.name} changed since it was made")
        except OSError as error:  # a name no file system takes (5,000 characters, say)
            problems.append(f"its record names a script that is no file ({error.strerror})")
    for module, digest in sorted((code.get("modules") or {}).items()):
        source = module_source(module)
        if source is None:
            problems.append(f"module {module}, which made it, no longer exists")
        elif _sha256(source) != digest:
            problems.append(f"module {module} changed since it was made")
    return [Finding(path, FAIL, "code", problem) for problem in problems]


def walk(
    root: str | os.PathLike,
    starts: Iterable[str] | None = None,
    mirror: Path | None = None,
    *,
    workflow_root: str | os.PathLike | None = None,
    remade: Iterable[str] = (),
) -> list[Finding]:
    """Audit ``starts`` (default: every result file) and all they were made from; inputs that
    are ``remade`` are not required."""
    code_root = Path(workflow_root).resolve() if workflow_root else WORKFLOW_ROOT
    _sha256.cache_clear()  # files may have changed since the last walk of this process
    root = Path(root).resolve()
    queue = deque(starts if starts is not None else listing_of(root, RESULTS))
    seen: set[str] = set()
    findings: list[Finding] = []
    while queue:
        name = queue.popleft()
        if name_problem(name) is not None:  # the intake's finding: never read
            continue
        path = str(resolve_path(root, name).relative_to(root))
        if path in seen:
            continue
        seen.add(path)
        found, inputs = audit_file(root, path, mirror, workflow_root=code_root, remade=remade)
        findings += found
        queue.extend(inputs)
    return _one_per_cause(findings)


def _one_per_cause(findings: Sequence[Finding]) -> list[Finding]:
    """One checksum mismatch per file (its own record's, else a twin's), and no "ok" line for
    a file that a twin's record calls replaced."""
    failed = {f.file for f in findings if f.status == FAIL}
    first: dict[str, Finding] = {}
    for f in sorted(findings, key=lambda f: not f.reason.startswith("modified after")):
        if f.status == FAIL and f.check == "checksum":
            first.setdefault(f.file, f)
    return [
        f
        for f in findings
        if not (f.status == OK and f.check == "all" and f.file in failed)
        and (f.status != FAIL or f.check != "checksum" or first[f.file] is f)
    ]


def audit_file(
    root: Path, path: str, mirror: Path | None, *, workflow_root: Path, remade: Iterable[str] = ()
) -> tuple[list[Finding], list[str]]:
    """The findings of one file, and the inputs its record names, to walk on to."""
    target = resolve_path(root, path)
    if not target.is_file():
        return [Finding(path, FAIL, "missing", "file does not exist")], []
    sidecar = record_path(target)
    found: list[Finding] = []
    kept = name_problem(path + RECORD_SUFFIX) is None and sidecar.is_file()  # a name too long: none
    record, problem = read_record(sidecar, PROVENANCE) if kept else (None, None)
    if problem is not None:  # a damaged record: nothing it says is used, not even its inputs
        reason = f"its provenance record {sidecar.name}: {problem}; {REMAKE}"
        record, found = None, [Finding(path, FAIL, "record", reason)]
    if is_manifest(path):
        found = check_manifest(root, path, mirror) + found
        if record is not None:  # a manifest with a record of its own is checked against it too
            found += check_record(root, path, record, workflow_root=workflow_root)
        return found, []
    if found:  # the damaged record's mismatch alone
        return found, []
    if record is None and Path(path).parts[:1] == (RESULTS,):
        return [Finding(path, FAIL, "record", "no provenance record: its origin is unknown")], []
    if record is None:
        reason = "not made by the workflow (no record); checked by its consumers' sha256 only"
        return [Finding(path, WARN, "record", reason)], []
    inputs = record.get("inputs") or {}
    record = {**record, "inputs": {k: v for k, v in inputs.items() if k not in remade}}
    found = check_record(root, path, record, workflow_root=workflow_root)
    if not any(f.file == path and f.status != OK for f in found):
        found.append(Finding(path, OK, "all", "checksum, inputs, code and record"))
    return found, list(record.get("inputs", {}))


def check_manifest(root: Path, path: str, mirror: Path | None = None) -> list[Finding]:
    """Every raw file of a source against its download manifest; its inputs against today's pins."""
    manifest_path = resolve_path(root, path)
    manifest, problem = read_record(manifest_path, MANIFEST)
    if problem is not None:
        return [Finding(path, FAIL, "raw", f"download manifest: {problem}; {REFETCH}")]
    entries = manifest["files"]
    findings = []
    for entry in entries:
        raw = manifest_path.parent / entry["path"]
        rel = str(raw.relative_to(root))
        if not raw.is_file():
            findings.append(Finding(rel, FAIL, "raw", f"raw file missing (listed in {path})"))
            continue
        differs = f"raw file differs from its download manifest {path}"
        findings += _digest_findings(rel, "raw", differs, entry["sha256"], _sha256(raw))
    pins, trust = check_pins(path, manifest, mirror)
    findings += pins
    if not any(f.status == FAIL for f in findings):
        origin = manifest.get("origin", "?")
        matched = f"{len(entries)} raw file(s) match the manifest (from {origin}; "
        findings.append(Finding(path, OK, "raw", f"{matched}{trust})"))
    return findings


@functools.cache
def project_sources() -> dict[str, Any]:
    """config/sources.yaml's sources: the project's pins, whatever configuration is audited."""
    return load_config_files([SOURCES_CONFIG]).get("sources") or {}


def check_pins(
    path: str, manifest: Mapping[str, Any], mirror: Path | None = None
) -> tuple[list[Finding], str]:
    """Each fetched input's sha256 against its pins re-read now (the user's mirror's, the
    config's, else the sources lock's; never the folder's), and what the inputs rest on by kind."""
    inputs, source = manifest.get("inputs") or [], str(manifest.get("source"))
    if not inputs:
        return [], "no inputs"
    settings = project_sources().get(source) or {}
    url_pins = sources.url_pins(settings) if settings.get("url") else {}
    blobs = sources.url_pins(settings, "git_blob") if settings.get("url") else {}
    rels = [entry["mirror_path"] for entry in inputs if "mirror_path" in entry]
    if rels and mirror is None:
        reason = (
            "fetched from a mirror, but no mirror is configured here "
            f"({sources.MIRROR_ENV} or config 'mirror'): its pins cannot be re-checked; set it "
            "to your copy of the mirror"
        )
        return [Finding(path, FAIL, "raw", reason)], ""
    try:  # the user's mirror (never the one the folder's manifest names) and the project's lock
        mirrored = sources.mirror_pins({"mirror_files": rels}, mirror) if rels and mirror else {}
        locked = read_lock(WORKFLOW_ROOT / lock_path()).get(source, {})
    except (OSError, ValueError) as error:  # a damaged MANIFEST.tsv or lock, named in error
        return [Finding(path, FAIL, "raw", f"its pins cannot be read: {error}")], ""
    findings: list[Finding] = []
    kinds: dict[str, list[str]] = {}
    for entry in inputs:
        url, hub = entry.get("url"), settings.get("hub") or {}
        label = str(url or f"hub data set {entry.get('hub', '?')}")
        pins = [("config", "git_blob", blob)] if (blob := blobs.get(url)) else []
        if "mirror_path" in entry:
            label = f"mirror file {entry['mirror_path']}"
            by_kind = mirrored[entry["mirror_path"]].items()
            pins += [(by, "sha256", pin["sha256"]) for by, pin in by_kind]
        elif url_pins.get(url):
            pins.append(("config", "sha256", str(url_pins[url])))
        elif url in locked:
            pins.append(("lock", "sha256", locked[url]["sha256"]))
        elif "hub" in entry and hub.get("revision"):
            pins.append(("config", "revision", hub["revision"]))
        findings += _pin_findings(path, entry, label, pins)
        trust = " and ".join(dict.fromkeys(TRUST[by] for by, _, _ in pins)) or "unverified"
        name = Path(str(url or entry.get("mirror_path") or entry.get("hub"))).name
        kinds.setdefault(trust, []).append(name)
    return findings, "; ".join(f"{trust}: {listing(names)}" for trust, names in kinds.items())


def _pin_findings(
    path: str, entry: Mapping[str, Any], label: str, pins: Sequence[tuple[str, str, str]]
) -> list[Finding]:
    """A mismatch for each (by, field, value) pin that differs from what was fetched, a warning
    if nothing pins it."""
    if not pins:
        reason = (
            f"{label} is pinned by nothing (no MANIFEST.tsv row, no config sha256, no lock "
            "record): the raw files made from it are unverified"
        )
        return [Finding(path, WARN, "raw", reason)]
    findings = []
    for by, field, pin in pins:
        recorded = str(entry.get(field) or "")
        if recorded.lower() != pin.lower():
            remedy = (
                "the sources lock was relocked since (make relock): re-fetch it and re-make what "
                "was made from it"
                if by == "lock"
                else f"{REFETCH} from a file that matches its pin"
            )
            fetched = f"{label} was fetched with {field} {short_digest(recorded)}…"
            reason = f"{fetched}, but {by} pins {short_digest(pin.lower())}…; {remedy}"
            findings.append(Finding(path, FAIL, "raw", reason))
    return findings


def audit(
    root: str | os.PathLike = ".", *, mirror: str | None = None, remade: Iterable[str] = ()
) -> list[Finding]:
    """Every finding for the results under ``root``, read from its intake's copy; files that are
    ``remade`` are neither judged nor required."""
    root = Path(root).resolve()
    with quarantine() as workspace:  # all below reads this copy, never the folder
        try:
            refused = [
                Finding(name, FAIL, "intake", cause + NOT_COPIED)  # escaped where printed
                for name, cause in intake(root, workspace).items()
            ]
        except OSError as error:
            refused = [Finding(escaped(str(root)), FAIL, "intake", f"cannot be read: {error}")]
        folder = sources.resolve_mirror(mirror)  # once: nothing below reads $ISOTROPY_MIRROR again
        if folder is not None and folder.is_relative_to(root):
            reason = (
                "the configured mirror lies inside the audited folder: its pins are not believed"
            )
            refused.append(Finding("(workflow)", FAIL, "raw", reason))
            folder = None
        remade = set(remade)
        starts = [name for name in listing_of(workspace, RESULTS) if name not in remade]
        found = walk(workspace, starts, mirror=folder, remade=remade)
        return [f for f in refused if f.file not in remade] + found


@contextlib.contextmanager
def quarantine() -> Iterator[Path]:
    """A fresh workspace in the temporary folder, removed on return, an error, SIGTERM or SIGHUP;
    one of this user's that a killed audit left (its pid gone: SIGKILL) is removed first."""
    for old in Path(tempfile.gettempdir()).glob(f"{WORKSPACE}*-*"):
        pid, info = old.name.removeprefix(WORKSPACE).partition("-")[0], old.lstat()
        mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
        if mine and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(old, ignore_errors=True)
    main = threading.current_thread() is threading.main_thread()
    signals = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) == signal.SIG_DFL]
    handlers = {s: signal.signal(s, lambda n, _: sys.exit(128 + n)) for s in signals if main}
    try:
        with tempfile.TemporaryDirectory(prefix=f"{WORKSPACE}{os.getpid()}-") as tmp:
            (Path(tmp) / "folder").mkdir()
            yield Path(tmp) / "folder"
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def failures(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.status == FAIL]


def grouped(findings: Iterable[Finding]) -> list[tuple[str, str, str, str]]:
    """(files, status, check, reason) per cause, escaped onto one line, naming the first files
    and how many there are."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in findings:
        groups.setdefault((f.status, f.check, f.reason), []).append(escaped(f.file, 200))
    rows = []
    for (status, check, reason), files in groups.items():
        shown = files[0] if len(files) == 1 else f"{listing(files)} ({len(files):,} files)"
        rows.append((shown, status, check, escaped(reason)))
    return rows


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
    """The findings as a TSV table, atomically; the csv module quotes a tab or line break."""
    with (
        atomic_path(path) as tmp,  # a name's bytes that are not UTF-8: escaped
        open(tmp, "w", newline="", encoding="utf-8", errors="backslashreplace") as handle,
    ):
        writer = csv.DictWriter(
            handle, fieldnames=["file", "status", "check", "reason"], delimiter="\t"
        )
        writer.writeheader()
        writer.writerows(dataclasses.asdict(f) for f in findings)


def planned_outputs(plan: str, rules: Iterable[str]) -> set[str]:
    """The output files of the jobs of ``rules`` in a Snakemake dry run's text."""
    rules, rule, outputs = set(rules), None, set()
    for line in plan.splitlines():
        if line.startswith(("rule ", "localrule ")) and line.endswith(":"):
            rule = line.split()[1].removesuffix(":")
        elif rule in rules and line.startswith("    output: "):
            outputs.update(line.removeprefix("    output: ").split(", "))
    return outputs


def main(argv: Sequence[str] | None = None) -> int:
    """``isotropy-audit``: the audit table; exit 1 on a mismatch, 2 on a folder with no results."""
    parser = argparse.ArgumentParser(prog="isotropy-audit", description=__doc__.split("\n")[0])
    parser.add_argument("--directory", "-d", default=".", help="the Snakemake working directory")
    made = "config files the results were made with: only their mirror is read"
    parser.add_argument("--configfile", nargs="+", action="extend", default=[], help=made)
    parser.add_argument("--gate", metavar="NAME", help="on a mismatch, one line: NAME stops")
    by = "with a dry run on stdin: its RULE jobs' outputs are neither judged nor required"
    parser.add_argument("--remade-by", nargs="+", default=[], metavar="RULE", help=by)
    args = parser.parse_args(argv)
    root = Path(args.directory)
    try:
        # through the door: a pipe, a link (to /dev/zero), past 4 MiB: one line, never read
        configs = [door.read_yaml(Path(f).parent, Path(f).name) for f in args.configfile]
        mirror = next((c["mirror"] for c in reversed(configs) if "mirror" in c), None)
        remade = planned_outputs(sys.stdin.read(), args.remade_by) if args.remade_by else ()
        findings = audit(root, mirror=mirror, remade=remade)
        if not findings and not args.gate:  # another folder: "0 mismatches" would read as a pass
            raise ConfigError(f"no results in {root.resolve()}: give -d the folder of the run")
        if not args.gate:
            print(format_table(findings))
    except (ConfigError, door.FolderError, OSError) as error:  # a full disk as well: one line
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


if __name__ == "__main__":
    sys.exit(main())
