"""A results folder is data, never code: what Snakemake reads from the folder it runs in is
checked before it reads it; nothing there is imported, waited on or written through.

Snakemake's report loads a record's ``conda_env`` with ``yaml.Loader`` (a YAML tag runs a command)
and pastes ``rule`` unescaped into a ``<script>``: so records it does not write, links, hard links,
pipes, sockets, devices and config files that are not plain YAML are refused (exit 1, each named).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from isotropy import intake

METADATA = Path(".snakemake") / "metadata"
SHOWN = 10  # problems listed; the rest counted

SCHEMAS = yaml.safe_load(Path(__file__).with_name("records.schema.yaml").read_text("utf-8"))
UNSAFE_TEXT = re.compile(SCHEMAS["$defs"]["safe_text"]["not"]["pattern"])


# A record's conda_env is the rule's environment file, base64-encoded, which Snakemake's report
# loads with yaml.Loader: only this checkout's own envs/*.yaml are believed.
ENVS = Path(__file__).resolve().parents[2] / "envs"
SCHEMAS["snakemake_record"]["properties"]["conda_env"]["enum"] = [
    None,
    *sorted(base64.b64encode(env.read_bytes()).decode() for env in ENVS.glob("*.yaml")),
]


def validator(name: str) -> jsonschema.protocols.Validator:
    """The validator of one schema of records.schema.yaml (its ``$defs`` shared)."""
    return jsonschema.Draft202012Validator({**SCHEMAS[name], "$defs": SCHEMAS["$defs"]})


def record_problem(record: Any, validator: jsonschema.protocols.Validator) -> str | None:
    """Why one parsed record is not the shape of ``validator``'s schema (None: it is), naming
    the key and what it must be where the schema describes it."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    if error is None:
        return None
    if not isinstance(record, dict):
        return f"it is a JSON {type(record).__name__}, not an object"
    if error.validator == "additionalProperties" and not error.path:
        known = validator.schema["properties"]
        unknown = ", ".join(repr(k)[:60] for k in sorted(set(record) - set(known))[:5])
        return f"it has keys Snakemake never writes: {unknown}"
    key = error.path[0] if error.path else ""
    if error.validator == "not" and (found := UNSAFE_TEXT.search(str(error.instance))) is not None:
        cause = "which would end the report's <script> or a line"
        return f"its {key} holds {found.group()!r}, {cause}: {error.instance[:60]!r}"
    field = validator.schema["properties"].get(key, {})
    defined = SCHEMAS["$defs"].get(field.get("$ref", "").split("/")[-1], {})
    if what := field.get("description") or defined.get("description"):
        return f"its {key} is not {what}"
    where = "/".join(map(str, error.absolute_path))
    return f"it does not fit its schema{f' at {where}' if where else ''} ({error.message[:120]})"


def read_record(
    path: Path, validator: jsonschema.protocols.Validator, *, constants: bool = True
) -> tuple[Any, str | None]:
    """The JSON record at ``path`` and why it cannot be used (None: usable), nesting and values
    capped (:func:`~isotropy.intake.parse_json`, whose ``constants`` it takes)."""
    try:  # through the door: a regular file, no link, its size capped before it is read
        record = intake.parse_json(intake.read_inside(path.parent, path.name), constants=constants)
    except intake.FolderError as error:
        return None, str(error).removeprefix(f"{intake.escaped(str(path), 300)}: ")
    return record, record_problem(record, validator)


def _output_named(name: Path) -> str:
    """The output path a record's file name encodes (urlsafe base64, split into '@' folders)."""
    encoded = "".join(part.lstrip("@") for part in name.parts)
    try:
        return repr(base64.urlsafe_b64decode(encoded).decode("utf-8"))[:120]
    except (binascii.Error, ValueError):
        return "an output it does not name"


# Snakemake's record folders and what each record must be; the marker file of a migration aside.
SUBJECTS = {
    METADATA: validator("snakemake_record"),
    Path(".snakemake") / "incomplete": validator("snakemake_incomplete"),
}
MIGRATION_MARKER = "migration_underway"


def snakemake_record_problem(root: Path, rel: Path) -> str | None:
    """Why the regular file ``rel`` is not a record Snakemake writes, naming the output it
    describes (None: it is one, or it lies outside Snakemake's record folders)."""
    subject = next((s for s in SUBJECTS if rel.is_relative_to(s)), None)
    if subject is None or rel.name == MIGRATION_MARKER:
        return None
    problem = read_record(root / rel, SUBJECTS[subject], constants=False)[1]
    if problem is None:
        return None
    return f"the record of {_output_named(rel.relative_to(subject))}: {problem}"


# The workflow makes no links under these folders (they themselves may be links), and no hard
# links there or below .snakemake/; Snakemake's environments and shadow folders hold its own.
WRITTEN = frozenset({"results", "logs", "benchmarks", "resources"})
SNAKEMAKE_DIR = ".snakemake"
LINKED_INSIDE = frozenset({"conda", "singularity", "apptainer", "shadow"})
NOT_WALKED = frozenset({".git", ".venv"})
FOLDERS = (SNAKEMAKE_DIR, str(METADATA), "logs/effective-config")
LAST_RUN = Path("logs") / "last_run.txt"
MAX_LAST_RUN_BYTES = 64 * 2**10
# Snakemake's pickled inventory of the folder, unpickled with --trust-io-cache.
IOCACHE = Path(SNAKEMAKE_DIR) / "iocache" / "latest.pkl"


def folder_problems(workdir: str | os.PathLike = ".") -> list[tuple[str, str]]:
    """(path, problem) of everything in ``workdir`` that Snakemake must not read or write
    through (see the module docstring), each path once."""
    root = Path(workdir)
    problems: dict[str, str] = {}  # each path once: its first problem
    for name in FOLDERS:
        path = root / name
        if os.path.lexists(path) and not path.is_symlink() and not path.is_dir():
            problems[name] = "is not a folder: Snakemake and the workflow keep records there"
    tops = [root] + [root / t for t in WRITTEN if (root / t).is_symlink() and (root / t).is_dir()]
    for top in tops:  # links listed, never followed; a folder too deep named, never entered
        depth = len(top.relative_to(root).parts)
        for path, info, problem in intake.tree(top, lambda path: _skipped(root, path), depth):
            rel = path.relative_to(root)
            top_name = (rel.parts or ("",))[0]
            written = top_name == SNAKEMAKE_DIR or (top_name in WRITTEN and len(rel.parts) > 1)
            # A folder not entered: too deep, or unreadable (named where the workflow writes)
            if info is None or problem is not None:
                if info is not None or top_name in WRITTEN | {SNAKEMAKE_DIR}:
                    problems.setdefault(str(rel), str(problem))
                continue
            mode = info.st_mode
            if stat.S_ISDIR(mode) or (not written and (stat.S_ISREG(mode) or stat.S_ISLNK(mode))):
                continue  # outside where the workflow writes, a link or hard link is no harm
            if problem := intake.file_problem(info, path) or snakemake_record_problem(root, rel):
                problems.setdefault(str(rel), problem)
    last_run = root / LAST_RUN
    if last_run.is_file() and last_run.lstat().st_size > MAX_LAST_RUN_BYTES:
        reason = "is larger than 64 KiB (make run writes two short lines)"
        problems.setdefault(str(LAST_RUN), reason)
    return list(problems.items())


def _skipped(root: Path, path: Path) -> bool:
    """The checkout's .git and .venv, and Snakemake's own environments and shadow folders."""
    if path.parent == root:
        return path.name in NOT_WALKED
    return path.parent == root / SNAKEMAKE_DIR and path.name in LINKED_INSIDE


def workflow_problems(
    workflow_root: str | os.PathLike, configfiles: list[str] | None = None
) -> list[tuple[str, str]]:
    """Each config file Snakemake is given, the folder's config.yaml included, that is not
    plain YAML (:func:`~isotropy.intake.config_file_problem`)."""
    configs = dict.fromkeys([*(configfiles or []), str(Path(workflow_root) / "config.yaml")])
    return [(f, p) for f in configs if (p := intake.config_file_problem(f)) is not None]


def refusal(problems: list[tuple[str, str]], workdir: str | os.PathLike = ".") -> str:
    """One message for the refused records: each file and why, and what to do."""
    lines = [f"{intake.escaped(name)}: {intake.escaped(why)}" for name, why in problems[:SHOWN]]
    if len(problems) > SHOWN:
        lines.append(f"… and {len(problems) - SHOWN} more")
    return (
        f"{len(problems)} file(s) in {Path(workdir).resolve()} are not what this workflow and "
        "Snakemake write, and Snakemake would read them as its own (its report runs YAML tags "
        "and pastes text into a <script>), import them, wait on them or write through them:\n  "
        + "\n  ".join(lines)
        + "\nThis folder was damaged or forged: do not run or report it as it is; audit its "
        "results (isotropy-audit, which reads none of .snakemake/), or remove what is named"
    )


def guard_folder(workdir: str | os.PathLike = ".") -> None:
    """Before Snakemake reads ``workdir``: a FolderError naming what it must not read or write
    through; else the inventory cache removed (a pickle runs the code it names)."""
    if problems := folder_problems(workdir):
        raise intake.FolderError(refusal(problems, workdir))
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        os.remove(Path(workdir) / IOCACHE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--directory", "-d", default=".", help="the Snakemake working directory")
    plain = "config files Snakemake will be given: checked to be plain YAML (no YTE)"
    parser.add_argument("--configfile", nargs="+", default=[], metavar="FILE", help=plain)
    args = parser.parse_args(argv)
    try:  # make runs in the workflow's root, whose Snakefile reads the folder's config.yaml
        problems = folder_problems(args.directory)
        problems += workflow_problems(args.directory, args.configfile)
    except OSError as error:  # a folder that cannot be read: one line
        print(f"refused: {intake.escaped(str(error))}", file=sys.stderr)
        return 1
    if problems:
        print(f"refused: {refusal(problems, args.directory)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
