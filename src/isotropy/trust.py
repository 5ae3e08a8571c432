"""A results folder is data, never code: what Snakemake reads from a folder's ``.snakemake/`` is
checked before it reads it, and its script jobs never import from there (issue 53).

Snakemake trusts its own bookkeeping. Its report decodes each record's ``conda_env`` and loads it
with ``yaml.Loader``, which builds whatever Python object a tag names
(``!!python/object/apply:os.system`` runs a command), and it puts ``rule`` and
``container_img_url`` into JSON inside a ``<script>`` without escaping ``</``. It runs each
``script:`` as ``python .snakemake/scripts/tmpXXXX.<name>.py``, so Python looks for imports in
``.snakemake/scripts/`` before anywhere else. A folder someone else made (a shared project, an
archive, a scratch directory) may hold forged records and planted modules, so:

* every record in ``.snakemake/metadata`` must have only Snakemake's keys with plain values
  (:func:`metadata_problems`) before the workflow parses (rules/common.smk), before ``make report``
  and ``make audit`` call Snakemake, and before the audit does;
* no file or folder below ``results/``, ``logs/`` or ``benchmarks/`` is a link
  (:func:`link_problems`): the workflow makes none, and would write or report through it;
* the config files ``make report`` and ``make audit`` give Snakemake (the report's are the
  folder's own effective configuration) are plain YAML: no ``__use_yte__``, whose YTE templating
  Snakemake runs as Python while it loads the file (:func:`config_file_problem`);
* Snakemake's jobs run with ``PYTHONSAFEPATH=1`` (:func:`protect_imports`): a script's own folder
  is not put on ``sys.path``.

    python -m isotropy.trust [--directory .] [--configfile FILE ...]

Exit 1 naming each refused record (its file, the output it describes) or link and why; 0
otherwise.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import functools
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

METADATA = Path(".snakemake") / "metadata"
# A record of Snakemake 9 is well under a megabyte; its conda environment a few kilobytes.
MAX_RECORD_BYTES = 16 * 2**20
MAX_CONDA_ENV_BYTES = 2**20
# Snakemake's rule names are Python identifiers; an image URL is a registry path and a tag.
RULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
IMAGE_URL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*\Z")
HEX = re.compile(r"[0-9a-f]*\Z")
# Snakemake 9 writes "sha256:<hex>", older versions the bare hex.
CHECKSUM = re.compile(r"(?:[a-z0-9]+:)?[0-9a-f]*\Z")
JOB_ID = re.compile(r"[A-Za-z0-9._:@+-]*\Z")
# Seconds since 1970: anything past the year 5000 is not a time Snakemake wrote.
MAX_TIME = 1e11
# Listed before the folder is refused; the rest are counted.
SHOWN = 10


class FolderError(ValueError):
    """A results folder whose Snakemake bookkeeping is not what Snakemake writes."""


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda value: None if value is None else check(value)


def _text(pattern: re.Pattern[str] | None, what: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return f"is a {type(value).__name__}, not text"
        if pattern is not None and not pattern.match(value):
            return f"is not {what}: {value[:80]!r}"
        return None

    return check


def _strings(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "is not a list of paths"
    return None


def _integer(value: Any) -> str | None:
    return None if type(value) is int else f"is not an integer: {str(value)[:40]!r}"


def _time(value: Any) -> str | None:
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 <= value < MAX_TIME:
        return f"is not a time: {str(value)[:40]!r}"
    return None


def _checksums(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str) and CHECKSUM.match(v))
        for k, v in value.items()
    ):
        return "is not a mapping of paths to hexadecimal checksums"
    return None


def conda_env_problem(value: Any) -> str | None:
    """Why a record's ``conda_env`` is not the base64 of a plain conda environment file, or None.

    Plain: UTF-8 YAML without tags, anchors or aliases (which a ``yaml.Loader`` would turn into
    Python objects or an exponential expansion), a mapping once loaded, and no ``</`` or ``<!``
    (which end or disturb the ``<script>`` the report puts it in).
    """
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not base64 text"
    return _conda_env_text_problem(value)


@functools.lru_cache(maxsize=64)  # a folder's records share its few environments
def _conda_env_text_problem(value: str) -> str | None:
    if len(value) > MAX_CONDA_ENV_BYTES * 4 // 3 + 4:
        return f"is longer than {MAX_CONDA_ENV_BYTES} bytes decoded"
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return "is not the base64 of UTF-8 text"
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if (tag := getattr(event, "tag", None)) is not None:
                return f"holds the YAML tag {tag!r}"
            if getattr(event, "anchor", None) is not None:
                return "holds a YAML anchor or alias"
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        return f"is not YAML: {str(error).splitlines()[0]}"
    if not isinstance(loaded, dict):
        return "is not a conda environment (a YAML mapping)"
    if re.search(r"<[/!]", text):
        return "holds '</' or '<!', which would end the report's <script>"
    return None


# Every key Snakemake 9 writes (snakemake.persistence.MetadataRecord; tests/test_trust.py
# checks the list against the installed Snakemake), with what its value must be.
FIELDS: dict[str, Callable[[Any], str | None]] = {
    "rule": _optional(_text(RULE_NAME, "a rule name (letters, digits, _)")),
    "input": _optional(_strings),
    "log": _optional(_strings),
    "shellcmd": _optional(_text(None, "")),
    "params": _optional(lambda v: None if isinstance(v, list) else "is not a list"),
    "code": _optional(_text(None, "")),
    "record_format_version": _integer,
    "conda_env": _optional(conda_env_problem),
    "container_img_url": _optional(_text(IMAGE_URL, "an image URL (letters, digits, ._:/@+-)")),
    "software_stack_hash": _optional(_text(HEX, "a hexadecimal hash")),
    "job_hash": _optional(_integer),
    "starttime": _optional(_time),
    "endtime": _optional(_time),
    "incomplete": _optional(lambda v: None if type(v) is bool else "is not true or false"),
    "external_jobid": _optional(_text(JOB_ID, "a job id")),
    "input_checksums": _optional(_checksums),
}


def record_problem(record: Any) -> str | None:
    """Why one parsed record is not what Snakemake writes, or None."""
    if not isinstance(record, dict):
        return f"it is a JSON {type(record).__name__}, not an object"
    unknown = sorted(set(record) - set(FIELDS))
    if unknown:
        return f"it has keys Snakemake never writes: {', '.join(repr(k)[:60] for k in unknown[:5])}"
    for key, check in FIELDS.items():
        if key in record and (problem := check(record[key])) is not None:
            return f"its {key} {problem}"
    return None


def _output_named(name: Path) -> str:
    """The output path a record's file name encodes (urlsafe base64, split into '@' folders)."""
    encoded = "".join(part.lstrip("@") for part in name.parts)
    try:
        return repr(base64.urlsafe_b64decode(encoded).decode("utf-8"))[:120]
    except (binascii.Error, ValueError):
        return "an output it does not name"


def _read_record(path: Path) -> Any:
    """The parsed record at ``path``, refusing anything but a regular file of modest size."""
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise FolderError("it is not a regular file (a link, a pipe or a device)")
    if info.st_size > MAX_RECORD_BYTES:
        raise FolderError(f"it is larger than {MAX_RECORD_BYTES // 2**20} MiB")
    try:
        return json.loads(path.read_bytes(), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise FolderError(f"it is not JSON ({str(error)[:80]})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number Snakemake writes")


def incomplete_problem(record: Any) -> str | None:
    """Why a marker of ``.snakemake/incomplete`` is not what Snakemake writes, or None."""
    if not isinstance(record, dict) or set(record) - {"external_jobid"}:
        return "it is not an object holding only external_jobid"
    jobid = record.get("external_jobid")
    if jobid is not None and (problem := _text(JOB_ID, "a job id")(jobid)) is not None:
        return f"its external_jobid {problem}"
    return None


# Snakemake's record folders and what each record must be; the marker file of a migration aside.
SUBJECTS = {METADATA: record_problem, Path(".snakemake") / "incomplete": incomplete_problem}
MIGRATION_MARKER = "migration_underway"


def metadata_problems(workdir: str | os.PathLike = ".") -> list[tuple[str, str]]:
    """(file, reason) for every record in ``workdir``'s ``.snakemake/metadata`` (and marker in
    ``.snakemake/incomplete``) that is not what Snakemake writes; the file relative to
    ``workdir``. Nothing is followed out of the folder."""
    problems = []
    for subject, check in SUBJECTS.items():
        root = Path(workdir) / subject
        if not root.is_dir():
            continue
        for folder, subfolders, files in os.walk(root):
            links = [d for d in subfolders if Path(folder, d).is_symlink()]
            for name in sorted(set(files) - {MIGRATION_MARKER}) + links:
                path = Path(folder) / name
                try:
                    problem = check(_read_record(path))
                except FolderError as error:
                    problem = str(error)
                except OSError as error:
                    problem = f"it cannot be read ({error.strerror})"
                if problem is not None:
                    output = _output_named(path.relative_to(root))
                    problems.append(
                        (str(path.relative_to(workdir)), f"the record of {output}: {problem}")
                    )
    return problems


# The workflow makes no links under these folders: a linked file or folder there was put there,
# and a log or result written to it would be written where it points (the report would embed it).
WRITTEN = ("results", "logs", "benchmarks")


def link_problems(workdir: str | os.PathLike = ".") -> list[tuple[str, str]]:
    """(path, reason) for every link below ``results/``, ``logs/`` and ``benchmarks/`` (the
    folders themselves may be links, e.g. to a scratch disk)."""
    problems = []
    for top in WRITTEN:
        for folder, subfolders, files in os.walk(Path(workdir) / top):
            for name in sorted(subfolders + files):
                path = Path(folder) / name
                if path.is_symlink():
                    problems.append(
                        (
                            str(path.relative_to(workdir)),
                            f"is a link to {os.readlink(path)[:120]!r}: the workflow makes no "
                            "links, and what it writes or reports there would go through it; "
                            "remove the link",
                        )
                    )
    return problems


def folder_problems(workdir: str | os.PathLike = ".") -> list[tuple[str, str]]:
    """Everything in ``workdir`` that Snakemake must not read or write through: forged or damaged
    metadata records, and links where the workflow writes."""
    return metadata_problems(workdir) + link_problems(workdir)


# Snakemake reads every --configfile with YTE, which runs the Python in a file that sets this key.
YTE_KEY = "__use_yte__"


def config_file_problem(path: str | os.PathLike) -> str | None:
    """Why Snakemake must not load config file ``path`` (None: plain YAML). ``make report`` gives
    Snakemake the folder's own logs/effective-config/<target>.yaml, so it is checked first."""
    if not Path(path).is_file():
        return None  # Snakemake says so itself
    try:
        loaded = yaml.safe_load(Path(path).read_bytes())
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        return f"is not plain YAML ({str(error).splitlines()[0][:80]})"
    if isinstance(loaded, dict) and YTE_KEY in loaded:
        return f"sets {YTE_KEY}, which makes Snakemake run the Python it holds (YTE templating)"
    return None


def refusal(problems: list[tuple[str, str]], workdir: str | os.PathLike = ".") -> str:
    """One message for the refused records: each file and why, and what to do."""
    lines = [f"{file}: {reason}" for file, reason in problems[:SHOWN]]
    if len(problems) > SHOWN:
        lines.append(f"… and {len(problems) - SHOWN} more")
    return (
        f"{len(problems)} file(s) in {Path(workdir).resolve()} are not what this workflow and "
        "Snakemake write, and Snakemake would read them as its own (its report runs YAML tags "
        "and pastes text into a <script>) or write through them:\n  "
        + "\n  ".join(lines)
        + "\nThis folder was damaged or forged: do not run or report it as it is; audit its "
        "results without Snakemake (isotropy-audit --no-snakemake), or remove what is named "
        "(removing .snakemake/metadata loses Snakemake's cross-checks)"
    )


def refuse_hostile_folder(workdir: str | os.PathLike = ".") -> None:
    """Raise :class:`FolderError` naming everything Snakemake should not read or write through."""
    problems = folder_problems(workdir)
    if problems:
        raise FolderError(refusal(problems, workdir))


def protect_imports(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    """Jobs started from here (Snakemake's scripts, its subprocesses) never put their own folder
    (``.snakemake/scripts/``, or the working directory for ``python -m``) first on ``sys.path``."""
    environ["PYTHONSAFEPATH"] = "1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--directory", "-d", default=".", help="the Snakemake working directory")
    parser.add_argument(
        "--configfile",
        nargs="+",
        default=[],
        metavar="FILE",
        help="config files Snakemake will be given: checked to be plain YAML (no YTE)",
    )
    args = parser.parse_args(argv)
    problems = folder_problems(args.directory)
    problems += [
        (str(file), problem)
        for file in args.configfile
        if (problem := config_file_problem(file)) is not None
    ]
    if problems:
        print(f"refused: {refusal(problems, args.directory)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
