"""The intake: a results folder made elsewhere is audited (and reported) only through a copy.

Every file from outside is opened component by component with ``O_NOFOLLOW | O_NONBLOCK``: only a
regular file with one link within the caps below (what it refuses: docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import shutil
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import yaml

from isotropy.paths import AUDIT_TABLE, MADE_WITH, MANIFEST_NAME, MODELS_ROOT, RAW_ROOT

# Caps, each overridable by ISOTROPY_INTAKE_<name>.
MAX_FILE_BYTES = int(os.environ.get("ISOTROPY_INTAKE_MAX_FILE_BYTES", 16 * 2**30))
MAX_TOTAL_BYTES = int(os.environ.get("ISOTROPY_INTAKE_MAX_TOTAL_BYTES", 256 * 2**30))
# The bytes the audit hashes, holes included (a sparse file's copy costs no disk, its sha256 does).
MAX_HASHED_BYTES = int(os.environ.get("ISOTROPY_INTAKE_MAX_HASHED_BYTES", 64 * 2**30))
MAX_ROWS = int(os.environ.get("ISOTROPY_INTAKE_MAX_ROWS", 50_000_000))
# A table's memory once read (Parquet: 8 bytes a value at least; a CSV file: up to 8 times its
# bytes, pandas measured at 4.5); the disk the copy leaves free.
MAX_READ_BYTES = int(os.environ.get("ISOTROPY_INTAKE_MAX_READ_BYTES", 2 * 2**30))
MAX_TABLE_BYTES = MAX_READ_BYTES // 8  # a CSV table's bytes read whole (8 times that once read)
DISK_MARGIN = int(os.environ.get("ISOTROPY_INTAKE_DISK_MARGIN", 2**30))
# Folders below the folder: the workflow's go 6 deep; Python's walks recurse (about 1,000).
MAX_DEPTH = int(os.environ.get("ISOTROPY_INTAKE_MAX_DEPTH", 64))
# Values in a record or config file: YAML aliases of aliases make a few lines stand for billions.
MAX_VALUES = int(os.environ.get("ISOTROPY_INTAKE_MAX_VALUES", 200_000))
# A JSON file's bytes (a record, a result), checked before it is read: 200,000 values of ~80 bytes.
MAX_RECORD_BYTES = int(os.environ.get("ISOTROPY_INTAKE_MAX_RECORD_BYTES", 16 * 2**20))
MAX_JSON_DEPTH = 64  # records nest a few levels; Python's parser gives up near 1,000
MAX_FILES = int(os.environ.get("ISOTROPY_INTAKE_MAX_FILES", 500_000))
# Folders of the workflow that may themselves be links (to a scratch disk); nothing below them.
LINKABLE = frozenset({"results", "logs", "benchmarks"})
RECORD_SUFFIX = ".provenance.json"
RESULTS = "results"
STAGING = re.compile(r"\A\..+\.part(\.|\Z)")  # a write's staging file: io.atomic_path
# An effective configuration is a few kilobytes; a gigabyte of YAML parses for minutes.
MAX_CONFIG_BYTES = 4 * 2**20
# Snakemake reads every --configfile with YTE, which runs the Python in a file that sets this key.
YTE_KEY = "__use_yte__"


class FolderError(ValueError):
    """A folder, or a file of it, that the intake (or the folder check) refuses; one line."""


def escaped(text: str, limit: int = 1000) -> str:
    """``text`` with every unprintable character and backslash escaped, shortened past
    ``limit``: a printed name is one line whatever it holds, and never reads as another row."""
    shown = "".join(
        c if c.isprintable() and c != "\\" else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
    return shown if len(shown) <= limit else f"{shown[:limit]}… ({len(shown):,} characters)"


def name_problem(name: str) -> str | None:
    """Why a path a record names is not a path inside the folder (None: it is)."""
    path = PurePosixPath(name)
    if not name or "\0" in name or path.is_absolute() or ".." in path.parts:
        return "names a path outside the folder (absolute, or with '..'): never read"
    if not path.parts or len(path.parts) > MAX_DEPTH + 1:
        return f"names the folder itself, or a path over {MAX_DEPTH} folders deep: never read"
    longest = max(len(os.fsencode(part)) for part in path.parts)
    if len(name.removesuffix(RECORD_SUFFIX)) > 1024 or longest > 255:  # a record: as its file
        return f"names a path of {len(name):,} characters, longer than files have: never read"
    return None


def open_inside(root: int | str | os.PathLike, name: str) -> int:
    """A read-only, non-blocking descriptor of ``name`` below ``root`` (a folder or its
    descriptor), every component opened with O_NOFOLLOW (ELOOP/ENOTDIR: a link on the way)."""
    parts = PurePosixPath(name).parts
    fd = os.dup(root) if isinstance(root, int) else os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for index, part in enumerate(parts[:-1]):
            follow = 0 if index == 0 and part in LINKABLE else os.O_NOFOLLOW
            flags = os.O_RDONLY | os.O_DIRECTORY | follow
            fd, parent = os.open(part, flags, dir_fd=fd), fd
            os.close(parent)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _open_cause(error: OSError) -> str | None:
    return "a link on its path" if error.errno in (errno.ELOOP, errno.ENOTDIR) else error.strerror


def file_problem(info: os.stat_result, path: Path | None = None) -> str | None:
    """Why an entry with this (l)stat is not a plain file with one link (None: it is); ``path``
    names a link's target."""
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        target = f" to {escaped(os.readlink(path)[:120])!r}" if path is not None else ""
        return (
            f"is a link{target}: the workflow makes none, and what it or Snakemake writes or "
            "reports there would go through it; remove the link"
        )
    if stat.S_ISREG(mode):
        if info.st_nlink == 1:
            return None
        return (
            f"has {info.st_nlink} hard links: the workflow makes none, and a write to it would "
            "reach the other names"
        )
    kinds = {stat.S_IFIFO: "a pipe (FIFO)", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}
    waits = "" if stat.S_ISDIR(mode) else ", and reading it would wait forever"
    what = kinds.get(stat.S_IFMT(mode), "a device")
    return f"is {what}, not a file: the workflow writes none{waits}; remove it"


def parse_json(data: str | bytes, *, constants: bool = True) -> Any:
    """The JSON in ``data`` within the depth and value caps (without ``constants``, no NaN or
    Infinity either), or :class:`FolderError` saying in one line why not."""
    try:
        value = json.loads(data) if constants else json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise FolderError(f"it is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise FolderError(f"it is not JSON ({str(error)[:80]})") from None
    count, depth = size_and_depth(value)
    if count > MAX_VALUES:
        raise FolderError(f"it holds more than {MAX_VALUES:,} values")
    if depth > MAX_JSON_DEPTH:
        raise FolderError(f"it is nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number Snakemake writes")


class Intake:
    """One copy of a folder's audited files into ``workspace``; :attr:`refused` says what not."""

    def __init__(self, folder: str | os.PathLike, workspace: str | os.PathLike) -> None:
        self.folder, self.workspace = Path(folder), Path(workspace)
        self.refused: dict[str, str] = {}
        self.named_by: dict[str, str] = {}  # a name a record gave: that record
        self.taken: set[str] = set()
        self.listed: set[str] = set()
        self.total = self.files = self.hashed = 0
        self.workspace.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.workspace).free - DISK_MARGIN
        self.budget, self.by_disk = max(0, min(MAX_TOTAL_BYTES, free)), free < MAX_TOTAL_BYTES
        self.queue: deque[str] = deque()
        self.root = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)

    def refuse(self, name: str, cause: str) -> None:
        by = f" (named by {escaped(self.named_by[name], 200)})" if name in self.named_by else ""
        self.refused.setdefault(name, cause + by)

    def enqueue(self, names: Iterable[str], by: str | None = None) -> None:
        """Queue ``names``, each spelled once (``a//b``, ``a/./b``: ``a/b``)."""
        for name in names:
            name = PurePosixPath(name).as_posix()
            self.queue.append(name)
            if by is not None:
                self.named_by.setdefault(name, by)

    def take(self, name: str) -> Path | None:
        """Copy ``name`` into the workspace once; the copy, or None: absent, refused or a folder,
        or taken before."""
        if name in self.taken or name in self.refused:
            return None
        if (problem := name_problem(name)) is not None:
            self.refuse(name, problem)
            return None
        self.taken.add(name)
        try:
            fd = open_inside(self.root, name)
        except FileNotFoundError:
            if name in self.listed:  # listed, then gone: never a silent skip
                self.refuse(name, "vanished or cannot be opened (No such file or directory)")
            return None  # a name a record gives: the audit names what is missing
        except OSError as error:
            self.refuse(name, f"cannot be opened ({_open_cause(error)}): never followed")
            return None
        try:
            return self._copy(name, fd)
        except OSError as error:
            self.refuse(name, f"cannot be copied ({error.strerror})")
            return None
        finally:
            os.close(fd)

    def _copy(self, name: str, fd: int) -> Path | None:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):  # a folder Snakemake names as an input: its files
            self.enqueue(f"{name}/{child}" for child in sorted(os.listdir(fd)))
            return None
        problem = file_problem(info)
        if problem is None and info.st_size > MAX_FILE_BYTES:
            problem = f"is larger than the intake's cap of {MAX_FILE_BYTES:,} bytes"
        # A result table or JSON file the report reads whole (a record: never read past its cap).
        suffix = "" if name.endswith(RECORD_SUFFIX) else PurePosixPath(name).suffix.lower()
        if problem is None and name.startswith(f"{RESULTS}/") and suffix in (".csv", ".json"):
            cap, times = (MAX_READ_BYTES // 8, 8) if suffix == ".csv" else (MAX_RECORD_BYTES, 20)
            if info.st_size > cap:
                problem = (
                    f"is {info.st_size:,} bytes, past the intake's cap of {cap:,} for a {suffix} "
                    f"result read whole (up to {times} times its bytes in memory once read)"
                )
        if problem is None and self.files >= MAX_FILES:
            problem = f"is past the {MAX_FILES:,} files the intake copies"
        if problem is None and self.hashed + info.st_size > MAX_HASHED_BYTES:
            problem = (
                f"is {info.st_size:,} bytes, past the cap of {MAX_HASHED_BYTES:,} hashed in all"
            )
        if problem is not None:
            self.refuse(name, problem)
            return None
        target, total = self.workspace / name, self.total
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(target, "xb") as out:
                self._write(fd, out, info.st_size)
            if name.endswith(".parquet") and (problem := parquet_problem(target)) is not None:
                raise FolderError(problem)
        except (FolderError, OSError) as error:  # its bytes given back to the cap in all
            target.unlink(missing_ok=True)
            self.total = total
            if not isinstance(error, FolderError):
                raise
            self.refuse(name, str(error))
            return None
        self.files, self.hashed = self.files + 1, self.hashed + info.st_size
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
        return target

    def _write(self, fd: int, out: BinaryIO, size: int) -> None:
        """The data of ``fd`` into ``out``, holes kept, each byte counted against the budget."""
        offset = 0
        while offset < size:
            try:
                offset = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError as error:  # ENXIO: a hole to the end
                if error.errno != errno.ENXIO:
                    raise
                break
            end = min(os.lseek(fd, offset, os.SEEK_HOLE), size)
            out.seek(offset)
            while offset < end and (chunk := os.pread(fd, min(end - offset, 1 << 20), offset)):
                if self.total + len(chunk) > self.budget:
                    disk = ", the workspace's free space less a margin" if self.by_disk else ""
                    cap = f"the intake's cap of {self.budget:,} bytes in all{disk}"
                    raise FolderError(f"passes {cap}")
                out.write(chunk)
                offset, self.total = offset + len(chunk), self.total + len(chunk)
        out.truncate(size)

    def parsed(self, name: str) -> Any:
        """``name`` copied and parsed as JSON; None when it fails (the audit names the copy)."""
        with contextlib.suppress(FolderError):
            return None if self.take(name) is None else read_json(self.workspace, name)
        return None

    def follow(self, name: str) -> None:
        """Copy ``name`` with its provenance record, and queue what the record names."""
        manifest = self.parsed(name) if is_manifest(name) else self.take(name)
        if name in self.refused:
            return
        # A record's name too long for a file (a name at the cap): none, never a finding.
        record = None if name_problem(name + RECORD_SUFFIX) else self.parsed(name + RECORD_SUFFIX)
        if isinstance(record, dict):
            for key in ("inputs", "outputs"):
                if isinstance(entries := record.get(key), dict):
                    self.enqueue(map(str, entries), name + RECORD_SUFFIX)
        if is_manifest(name) and isinstance(manifest, dict):
            folder = PurePosixPath(name).parent
            for entry in manifest.get("files") or []:
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    self.enqueue([str(folder / entry["path"])], name)

    def run(self) -> dict[str, str]:
        """Copy every result file and what they name; then close the folder."""
        listed = listing(self.folder, RESULTS, self.refused)
        self.listed = set(listed)
        self.enqueue(listed)
        try:
            while self.queue:  # a name taken or refused before: follow copies nothing again
                self.follow(self.queue.popleft())
        finally:
            os.close(self.root)
        return self.refused


def tree(
    top: Path, skipped: Callable[[Path], bool], depth: int = 0
) -> Iterator[tuple[Path, os.stat_result | None, str | None]]:
    """(path, lstat, problem) of every entry below ``top``, no link followed, ``skipped`` folders
    not entered; a folder too deep or not listable comes with why."""
    stack = [(top, depth)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                found = sorted((Path(e.path), e.stat(follow_symlinks=False)) for e in entries)
        except OSError as error:
            if folder != top or not isinstance(error, FileNotFoundError):
                yield folder, None, f"cannot be listed ({error.strerror}): nothing in it is read"
            continue
        for path, info in found:
            if stat.S_ISDIR(info.st_mode) and not skipped(path):
                if depth >= MAX_DEPTH:
                    yield path, info, f"lies over {MAX_DEPTH} folders deep: nothing in it is read"
                    continue
                stack.append((path, depth + 1))
            yield path, info, None


def listing(folder: Path, top: str, problems: dict[str, str] | None = None) -> list[str]:
    """Every non-folder entry below ``top`` but records, hidden ones and the audit's table; a
    folder not walked, or a staging name that is no file, goes into ``problems``."""
    names = []
    entries = tree(folder / top, lambda path: path.name.startswith("."), len(Path(top).parts))
    for path, info, problem in entries:
        rel = path.relative_to(folder).as_posix()
        if problem is None and info is not None and STAGING.search(path.name):
            problem = None if stat.S_ISREG(info.st_mode) else file_problem(info, path)
        if problem is not None and problems is not None:
            problems[rel] = problem
        elif info is None or stat.S_ISDIR(info.st_mode) or path.name.startswith("."):
            continue
        elif not rel.endswith(RECORD_SUFFIX) and rel != AUDIT_TABLE:
            names.append(rel)
    return names


def parquet_problem(path: Any) -> str | None:
    """Why a Parquet table is not read: unreadable, or past the row or memory cap counted from
    its row groups, never from the footer's total alone."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
        groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
        chunks = [[g.column(c) for g in groups] for c in range(meta.num_columns)]
    except Exception as error:  # whatever the footer holds: one line
        return f"is not a readable Parquet table ({type(error).__name__}: {str(error)[:80]})"
    values = [sum(chunk.num_values for chunk in column) for column in chunks]
    rows = max(meta.num_rows, sum(g.num_rows for g in groups), *values, 0)
    said = "its footer says" if rows == meta.num_rows else f"its footer says {meta.num_rows:,}"
    if rows > MAX_ROWS:
        return f"holds {rows:,} rows ({said}), past the intake's cap of {MAX_ROWS:,}"
    unpacked = sum(max(c.total_uncompressed_size, 8 * c.num_values) for k in chunks for c in k)
    need = max(unpacked, 8 * rows * meta.num_columns)
    if need > MAX_READ_BYTES:
        return (
            f"takes about {need:,} bytes once read ({rows:,} rows of {meta.num_columns} columns), "
            f"past the intake's budget of {MAX_READ_BYTES:,} bytes of memory"
        )
    return None


def config_file_problem(path: str | os.PathLike) -> str | None:
    """Why Snakemake must not load config file ``path``: not a regular file, too large, not
    YAML or not plain settings (None: fine, or absent, which Snakemake says itself)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return (
                "is not a regular file (a pipe or a device, which Snakemake would wait on forever)"
            )
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if len(data) > MAX_CONFIG_BYTES:
        limit = f"{MAX_CONFIG_BYTES // 2**20} MiB"
        return f"is larger than {limit}: not a configuration this workflow writes"
    return loaded_config(data)[1]


def load_yaml(data: bytes) -> Any:
    """``yaml.safe_load(data)`` once its events show no nesting past :data:`MAX_JSON_DEPTH`
    levels (PyYAML builds a document by recursion) and no mapping gives a key twice."""
    depth = 0
    for event in yaml.parse(data, Loader=yaml.SafeLoader):
        depth += isinstance(event, yaml.CollectionStartEvent)
        depth -= isinstance(event, yaml.CollectionEndEvent)
        if depth > MAX_JSON_DEPTH:
            raise yaml.YAMLError(f"it is nested deeper than {MAX_JSON_DEPTH} levels")
    return yaml.load(data, Loader=_UniqueKeys)


class _UniqueKeys(yaml.SafeLoader):
    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """The mapping of ``node``, refused where it gives a key twice (the last would win
        silently); each node is constructed once, an alias's too."""
        lines: dict[str, int] = {}
        for key, _ in node.value:  # before the merge keys ("<<") are laid in
            if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                if key.value in lines:
                    raise yaml.YAMLError(
                        f"line {key.start_mark.line + 1} gives the key {key.value!r} again "
                        f"(first on line {lines[key.value]})"
                    )
                lines[key.value] = key.start_mark.line + 1
        return super().construct_mapping(node, deep)


# The door: a file the project did not just write is read only through these.
def _opened(root: str | os.PathLike, name: str, cap: int) -> tuple[int, int]:
    """A descriptor of the regular file ``name`` below ``root`` (no link followed, nothing
    outside it) and its size within ``cap``, or :class:`FolderError` naming the file."""
    shown = escaped(str(Path(root) / name), 300)
    if (problem := name_problem(name)) is not None:
        raise FolderError(f"{shown}: {problem.replace('the folder', str(root))}")
    try:
        fd = open_inside(root, name)
    except OSError as error:
        raise FolderError(f"{shown}: cannot be opened ({_open_cause(error)})") from None
    info = os.fstat(fd)
    problem = None if stat.S_ISREG(info.st_mode) else file_problem(info)
    if problem is None and info.st_size > cap:
        problem = f"is {info.st_size:,} bytes, past the cap of {cap:,} for this file"
    if problem is not None:
        os.close(fd)
        raise FolderError(f"{shown}: {problem}")
    return fd, info.st_size


def read_inside(root: str | os.PathLike, name: str, cap: int = MAX_RECORD_BYTES) -> bytes:
    """The bytes of the regular file ``name`` below ``root``, at most ``cap`` of them."""
    fd, size = _opened(root, name, cap)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(min(size, cap) + 1)[:cap]


def hash_inside(root: str | os.PathLike, name: str, cap: int = MAX_FILE_BYTES) -> str:
    """The hex sha256 of the regular file ``name`` below ``root`` (:func:`read_inside`)."""
    fd, _ = _opened(root, name, cap)
    with os.fdopen(fd, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def read_json(root: str | os.PathLike, name: str) -> Any:
    """The JSON file ``name`` below ``root``, capped (:func:`parse_json`); errors name it."""
    data = read_inside(root, name)  # its own errors name the file
    try:
        return parse_json(data)
    except FolderError as error:
        raise FolderError(_named(root, name, error)) from None


def read_text(root: str | os.PathLike, name: str, cap: int = MAX_RECORD_BYTES) -> str:
    """The UTF-8 text of file ``name`` below ``root`` (:func:`read_inside`)."""
    try:
        return read_inside(root, name, cap).decode("utf-8")
    except UnicodeDecodeError as error:
        raise FolderError(_named(root, name, f"byte {error.start:,} is not UTF-8")) from None


def read_csv(root: str | os.PathLike, name: str, cap: int = MAX_TABLE_BYTES) -> Any:
    """The CSV table (gzipped: ``.gz``) in file ``name`` below ``root``, read by pandas."""
    import pandas as pd

    data = io.BytesIO(read_inside(root, name, cap))
    try:
        return pd.read_csv(data, compression="gzip" if name.endswith(".gz") else None)
    except ValueError as error:  # pandas' ParserError and EmptyDataError too
        raise FolderError(_named(root, name, f"not CSV ({escaped(str(error), 120)})")) from None


def read_yaml(root: str | os.PathLike, name: str) -> dict[str, Any]:
    """The YAML mapping in file ``name`` below ``root`` (:func:`load_yaml`, values capped)."""
    return _mapping(root, name, read_inside(root, name, MAX_CONFIG_BYTES))


def read_effective_config(root: str | os.PathLike, name: str) -> tuple[str, dict[str, Any]]:
    """A run's effective configuration (``<target>.yaml``, isotropy.estimate.started): the files
    its first line says it was made with, and its settings (:func:`read_yaml`)."""
    data = read_inside(root, name, MAX_CONFIG_BYTES)
    settings = _mapping(root, name, data)  # first: bytes that are not UTF-8 refused there
    return data.decode("utf-8", "replace").partition("\n")[0].partition(MADE_WITH)[2], settings


def _mapping(root: str | os.PathLike, name: str, data: bytes) -> dict[str, Any]:
    loaded, problem = loaded_config(data)
    if problem is None and not isinstance(loaded, dict):
        problem = f"it holds a {type(loaded).__name__}, not a mapping of settings"
    if problem is not None:
        raise FolderError(_named(root, name, problem))
    return loaded


def _named(root: str | os.PathLike, name: str, error: object) -> str:
    return f"{escaped(str(Path(root) / name), 300)}: {error}"


def loaded_config(data: bytes) -> tuple[Any, str | None]:
    """The settings in config file bytes ``data``, and why they are not plain settings (None:
    they are)."""
    try:
        loaded = load_yaml(data)
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        return None, f"it is not plain YAML ({str(error).splitlines()[0][:120]})"
    return loaded, plain_config_problem(loaded)


def plain_config_problem(loaded: Any) -> str | None:
    """Why a loaded config file is not plain settings (None: it is)."""
    if isinstance(loaded, dict) and YTE_KEY in loaded:
        return (
            f"sets {YTE_KEY}: Snakemake would run the Python it holds (YTE templating); give "
            "plain YAML"
        )
    if size_and_depth(loaded)[0] > MAX_VALUES:
        return (
            f"stands for more than {MAX_VALUES:,} values (YAML aliases repeating aliases: "
            "an alias bomb); write the settings out without nested aliases"
        )
    return None


def size_and_depth(value: Any) -> tuple[int, int]:
    """How many keys and values ``value`` holds (up to :data:`MAX_VALUES` and one) and how deep
    it nests, without recursion."""
    count, deepest, stack = 0, 0, [(value, 1)]
    while stack and count <= MAX_VALUES:
        item, depth = stack.pop()
        count += 1
        if isinstance(item, dict):
            count += len(item)
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((child, depth + 1) for child in item)
        else:
            continue
        deepest = max(deepest, depth)
    return count, deepest


def is_manifest(name: str) -> bool:
    """Whether ``name`` is a raw source's (or an assembled model's) download manifest."""
    folder, _, file = name.rpartition("/")
    return file == MANIFEST_NAME and str(PurePosixPath(folder).parent) in (RAW_ROOT, MODELS_ROOT)


def intake(folder: str | os.PathLike, workspace: str | os.PathLike) -> dict[str, str]:
    """Copy what the audit of ``folder`` reads into the empty ``workspace``; return path → why
    it was refused."""
    return Intake(folder, workspace).run()
