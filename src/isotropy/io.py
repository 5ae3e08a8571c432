"""File helpers: atomic writes, so a failure never leaves half a file; a page's generated block."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (with its suffix, from which pandas, numpy and
    matplotlib pick the format); rename it onto ``path`` only on success, else remove it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = "".join(path.suffixes)
    # An earlier writer's staging file, killed outright: one writer per target, so debris. A
    # folder of that name is left alone (the audit names it).
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.part{glob.escape(suffix)}"):
        with contextlib.suppress(IsADirectoryError):
            stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".part{suffix}", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp makes owner-only files; results are shared: the umask's mode.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as error:
        size = tmp_path.stat().st_size if tmp_path.exists() else 0
        tmp_path.unlink(missing_ok=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT) and not isinstance(error, DiskFullError):
            written = f"{size:,} bytes written before it stopped" if size else "nothing written yet"
            raise DiskFullError(path, written, error) from error
        raise
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


class DiskFullError(OSError):
    """A write that ran out of disk space (or quota), naming the file, ``amount`` and space left."""

    def __init__(self, path: str | os.PathLike, amount: str, cause: OSError) -> None:
        free = 0
        with contextlib.suppress(OSError):
            free = shutil.disk_usage(Path(path).parent).free
        super().__init__(
            cause.errno or errno.ENOSPC,
            f"no space left on the device of {path} while writing it ({amount}, {free:,} bytes "
            "free there); nothing was kept: free some space (or point the working directory "
            "elsewhere) and run again",
        )

    def __str__(self) -> str:
        return self.strerror or ""


def reserve(staging: str | os.PathLike, size: int, target: str | os.PathLike | None = None) -> None:
    """Give a staging file ``size`` bytes of real disk blocks now, so that a memory-mapped write
    cannot find the disk full halfway (a SIGBUS); a full disk is a :class:`DiskFullError`."""
    fd = os.open(staging, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(target or staging, f"{size:,} bytes needed", error) from error
        if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
    finally:
        os.close(fd)


def npy_problem(path: str | os.PathLike, recorded_bytes: int | None = None) -> str | None:
    """Why a ``.npy`` file cannot be what its header (or ``recorded_bytes``) says (None if its
    size fits), from its header and size alone."""
    import numpy as np

    path = Path(path)
    size = path.stat().st_size
    if recorded_bytes is not None and size != recorded_bytes:
        return (
            f"{path} has {size:,} bytes, but its provenance record says it was written with "
            f"{recorded_bytes:,}"
        )
    fmt = np.lib.format
    try:
        with open(path, "rb") as handle:
            read_header = getattr(fmt, f"read_array_header_{min(fmt.read_magic(handle)[0], 2)}_0")
            shape, _, dtype = read_header(handle)
            offset = handle.tell()
    except (ValueError, OSError, EOFError) as error:
        return f"{path} is not a readable .npy file ({error})"
    expected = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size != expected:
        return (
            f"{path} has {size:,} bytes, but its header (shape {tuple(shape)}, {dtype}) needs "
            f"{expected:,}: it is truncated or damaged"
        )
    return None


def plain_data(value: Any) -> Any:
    """Nested mappings (Snakemake's named lists too) and sequences as plain dicts and lists, any
    other value JSON does not write as its ``str``: one spelling to compare and to record."""
    if callable(getattr(value, "items", None)):
        return {str(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain_data(item) for item in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def write_json(path: str | os.PathLike, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in chunks."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def commit_files(
    root: str | os.PathLike,
    record: str | os.PathLike,
    files: Mapping[Path, bytes | Path],
    facts: Mapping[str, Any],
) -> dict[str, Any]:
    """Copy a finished run beside the docs: each of ``files`` (a file read through the door),
    then the JSON record ``root/record``: ``facts`` and each file's sha256 (``files_sha256``)."""
    from isotropy.intake import MAX_TABLE_BYTES, read_inside

    root, digests = Path(root), {}
    for name, source in files.items():
        if not isinstance(source, bytes):
            source = read_inside(source.parent, source.name, MAX_TABLE_BYTES)
        with atomic_path(root / name) as tmp:
            tmp.write_bytes(source)
        digests[str(name)] = hashlib.sha256(source).hexdigest()
    written = {**facts, "files_sha256": digests}
    write_json(root / record, written)
    return written


def checked_record(root: str | os.PathLike, record: str | os.PathLike) -> dict[str, Any]:
    """A committed run's JSON record (:func:`commit_files`), every file's checksum checked."""
    # imported here: io stays importable with the standard library alone (envs' post-deploy test)
    from isotropy.intake import hash_inside, read_json

    found = read_json(root, str(record))  # each file through the door: inside, regular, capped
    listed = found.get("files_sha256") if isinstance(found, dict) else None
    if not isinstance(listed, dict):
        raise ValueError(f"{record}: no mapping files_sha256 of file to checksum")
    for name, digest in listed.items():
        if hash_inside(root, str(name)) != digest:
            raise ValueError(f"{name} does not match the checksum {record} records for it")
    return found


def save_npz(path: str | os.PathLike, **arrays: Any) -> None:
    """``np.savez`` of ``arrays`` to ``path``, atomically."""
    import numpy as np

    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays)


@contextlib.contextmanager
def open_npz(path: str | os.PathLike) -> Iterator[Any]:
    """``np.load`` of a ``.npz`` file whose damage is a ValueError naming the file and how to
    re-make it."""
    import zipfile

    import numpy as np

    try:
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as data:
            yield data
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError, OSError) as error:
        if isinstance(error, OSError) and not Path(path).is_file():
            raise  # missing, not damaged: Snakemake names it
        raise ValueError(
            f"{path} cannot be read ({type(error).__name__}: {error}): it is truncated or damaged; "
            f"re-make it: delete it (rm -f {path}) and run the workflow again"
        ) from error


def _split_at_markers(text: str, begin: str, end: str) -> tuple[str, str, str]:
    """What lies before ``begin``, between the markers and after ``end``; the markers must each
    appear once, in that order."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(end) < text.index(begin):
        raise ValueError(f"the text needs the markers {begin!r} and {end!r} once each, in order")
    head, rest = text.split(begin)
    block, tail = rest.split(end)
    return head, block, tail


def with_block(text: str, block: str, begin: str, end: str) -> str:
    """``text`` with what lies between ``begin`` and ``end`` replaced by ``block``."""
    head, _, tail = _split_at_markers(text, begin, end)
    return f"{head}{begin}\n\n{block}\n{end}{tail}"


def generated_block(text: str, begin: str, end: str) -> str:
    """What lies between the markers of ``text`` (as :func:`with_block` writes it)."""
    return _split_at_markers(text, begin, end)[1].strip("\n") + "\n"


def markdown_table(table: pd.DataFrame) -> str:
    """``table`` as a Markdown table (each cell's ``str``, a ``|`` escaped)."""
    cells = [list(table.columns), *table.astype(str).to_numpy().tolist()]
    lines = ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in cells]
    lines.insert(1, "|" + "---|" * len(table.columns))
    return "\n".join(lines) + "\n"


def decode_text(data: bytes, encoding: str, label: str) -> str:
    """Decode ``data`` strictly; a bad byte is reported with the file and line it sits on."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{label}, line {line}: byte {data[exc.start : exc.start + 1]!r} is not valid "
            f"{encoding}; the file must be {encoding}-encoded"
        ) from exc
