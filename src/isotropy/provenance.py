"""Provenance records: where every result file came from.

Each step's :func:`record_step` leaves beside every output ``X`` an ``X.provenance.json``, which
:mod:`isotropy.audit` walks back to the raw downloads.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from isotropy.compute import describe_device
from isotropy.intake import RECORD_SUFFIX, read_json
from isotropy.io import npy_problem, plain_data, sha256_file, write_json

RECORD_VERSION = 4
STARTED = _dt.datetime.now(_dt.UTC)  # import time ≈ the step's start

PROJECT = "isotropy-clusters-classifiers"
# Project modules that never change a result: not tracked as code.
UNTRACKED_MODULES = ("isotropy.provenance", "isotropy.logs", "isotropy.intake", "isotropy.trust")


def record_path(path: str | os.PathLike) -> Path:
    """The provenance record beside ``path``."""
    return Path(f"{path}{RECORD_SUFFIX}")


def package_versions() -> dict[str, str | None]:
    """The installed version of this project and of each package it pins (None: not installed)."""
    pins: list[str] = []
    with contextlib.suppress(metadata.PackageNotFoundError):  # not installed: its version is None
        pins = metadata.requires(PROJECT) or []
    names = [PROJECT] + [pin.split("==")[0] for pin in pins if 'extra == "test"' not in pin]
    versions: dict[str, str | None] = dict.fromkeys(names)
    for name in versions:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def code_version() -> dict[str, Any]:
    """Git commit of the workflow and whether tracked files differ from it (None outside git)."""
    repo = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "dirty": bool(status) if status is not None else None}


def module_hashes() -> dict[str, str]:
    """sha256 of the source file of every loaded project module but :data:`UNTRACKED_MODULES`."""
    hashes = {}
    for name, module in sorted(sys.modules.items()):
        if name.split(".")[0] != "isotropy" or name in UNTRACKED_MODULES:
            continue
        source = getattr(module, "__file__", None)
        if source and source.endswith(".py") and Path(source).is_file():
            hashes[name] = sha256_file(source)
    return hashes


def module_source(name: str) -> Path | None:
    """The current source file of project module ``name`` (None: none, or not this project's),
    found by path, never by importing: a record read from disk must never run code."""
    parts = name.split(".")
    if parts[0] != "isotropy" or not all(part.isidentifier() for part in parts):
        return None
    base = Path(__file__).resolve().parent.joinpath(*parts[1:])
    return next((c for c in (base.with_suffix(".py"), base / "__init__.py") if c.is_file()), None)


def hardware() -> dict[str, Any]:
    """CPU model and count, and the GPU models when torch is already loaded (else none used)."""
    try:
        found = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
    except OSError:  # no /proc: what platform reports
        found = None
    cpu = found.group(1).strip() if found else platform.processor() or platform.machine()
    info: dict[str, Any] = {"cpu": cpu, "cpu_count": os.cpu_count(), "gpu": None}
    torch = sys.modules.get("torch")
    with contextlib.suppress(Exception):  # a broken CUDA setup must not lose the record
        if torch is not None and torch.cuda.is_available():
            info["gpu"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return info


def file_entries(paths: Iterable[str | os.PathLike]) -> dict[str, dict[str, Any]]:
    """sha256, size and modification time of each file (every file inside a directory)."""
    entries: dict[str, dict[str, Any]] = {}
    for path in paths:
        path = Path(path)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in (f for f in files if not f.name.endswith(RECORD_SUFFIX)):
            stat = file.stat()
            entries[str(file)] = {
                "sha256": sha256_file(file),
                "bytes": stat.st_size,
                "mtime": stat.st_mtime,
            }
    return entries


def build_record(
    *,
    rule: str,
    inputs: Iterable[str],
    outputs: Iterable[str],
    params: Any = None,
    wildcards: Any = None,
    config: Any = None,
    script: str | None = None,
    device: Any = None,
    seeds: list[int] | None = None,
    extra: dict | None = None,
    workflow_root: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """The record of one step; ``script`` is named relative to ``workflow_root``, so a folder
    copied into another clone is audited there."""
    record = {
        "record_version": RECORD_VERSION,
        "rule": rule,
        "wildcards": plain_data(wildcards or {}),
        "params": plain_data(params or {}),
        "inputs": file_entries(inputs),
        "outputs": file_entries(outputs),
        "code": {
            **code_version(),
            "script": workflow_path(script, workflow_root) if script else None,
            "script_sha256": sha256_file(script) if script and Path(script).is_file() else None,
            "modules": module_hashes(),
        },
        "packages": package_versions(),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "device": describe_device(device) if hasattr(device, "type") else str(device or "cpu"),
        "hardware": hardware(),
        "seeds": seeds,
        "started": STARTED.isoformat(),
        "finished": _dt.datetime.now(_dt.UTC).isoformat(),
        "config": plain_data(config or {}),
    }
    if extra:
        record["extra"] = plain_data(extra)
    return record


def record_step(
    snakemake: Any, *, device: Any = None, seeds: list[int] | None = None, extra: dict | None = None
) -> dict:
    """Write a provenance record beside every output of a Snakemake ``script:`` step."""
    import __main__

    record = build_record(
        workflow_root=workflow_root_of(snakemake),
        rule=snakemake.rule,
        inputs=[str(p) for p in snakemake.input],
        outputs=[str(p) for p in snakemake.output],
        params=snakemake.params,  # Snakemake's named lists: items() (plain_data)
        wildcards=snakemake.wildcards,
        config=snakemake.config,
        script=getattr(__main__, "__file__", None),  # Snakemake's preamble: the step's script
        device=device,
        seeds=seeds,
        extra=extra,
    )
    try:
        for output in snakemake.output:
            if Path(output).is_file():
                write_json(record_path(output), record)
    except BaseException:
        remove_records(snakemake.output)  # all or none: never a record without its twin outputs
        raise
    return record


def workflow_path(path: str | os.PathLike, root: str | os.PathLike | None) -> str:
    """``path`` relative to the workflow's root folder when it lies there, else absolute."""
    absolute = Path(path).resolve()
    if root is not None and absolute.is_relative_to(base := Path(root).resolve()):
        return absolute.relative_to(base).as_posix()
    return str(absolute)


def workflow_root_of(snakemake: Any) -> Path | None:
    """The workflow's root folder (None outside a script): the parent of ``scripts/``, else the
    script's own folder."""
    scriptdir = getattr(snakemake, "scriptdir", None)
    if not scriptdir:
        return None
    return Path(scriptdir).parent if Path(scriptdir).name == "scripts" else Path(scriptdir)


def read_record(path: str | os.PathLike) -> dict | None:
    """The provenance record beside ``path`` (None when there is none)."""
    sidecar = record_path(path)  # through the door: a regular file inside its folder, capped
    return read_json(sidecar.parent, sidecar.name) if os.path.lexists(sidecar) else None


def code_label(record: Mapping[str, Any]) -> str:
    """The code version that made ``record``: its git commit, " (dirty)" if files differed."""
    code = record.get("code") or {}
    return f"{code.get('git_commit')}{' (dirty)' if code.get('dirty') else ''}"


def damaged_npy(path: str | os.PathLike) -> str | None:
    """Why an existing ``.npy`` input cannot be loaded (None if it can): its size against its
    header and its provenance record."""
    try:
        record = read_record(path)
    except (OSError, ValueError):
        record = None
    outputs = record.get("outputs") if isinstance(record, dict) else None
    entry = outputs.get(str(path)) if isinstance(outputs, dict) else None
    return npy_problem(path, entry.get("bytes") if isinstance(entry, dict) else None)


def remove_records(outputs: Iterable[str | os.PathLike]) -> None:
    """Remove the provenance records of ``outputs``: no record of a file that is not there."""
    for output in outputs:
        record_path(output).unlink(missing_ok=True)
