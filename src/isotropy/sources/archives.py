"""Reading fetched archives safely: their members, within limits, never with ``extractall``.

The wanted members are read and written under their base name. Every member must still pass
:func:`tarfile.data_filter` (zip members the same name rules), and an archive with more members
or more unpacked bytes than the ``downloads`` limits is refused (a zip or tar bomb would
otherwise fill the disk).
"""

from __future__ import annotations

import errno
import shutil
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isotropy.io import DiskFullError
from isotropy.sources.mirror import mirror_path_problem
from isotropy.sources.transfer import DOWNLOAD_DEFAULTS, ArchiveError


@dataclass(frozen=True)
class ExtractionLimits:
    """What unpacking one archive may take (config ``downloads``): beyond it, a bomb is assumed."""

    max_bytes: int = DOWNLOAD_DEFAULTS["max_extracted_bytes"]
    max_members: int = DOWNLOAD_DEFAULTS["max_archive_members"]


@dataclass(frozen=True)
class Fetched:
    """One fetched input: ``name`` is the URL's file name or the mirror-relative path."""

    name: str
    path: Path
    limits: ExtractionLimits = ExtractionLimits()


def is_archive(path: Path) -> bool:
    return zipfile.is_zipfile(path) or tarfile.is_tarfile(path)


def archive_members(item: Fetched) -> Iterator[tuple[str, Callable[[], Any]]]:
    """(member name, opener) for the regular files of a zip or tar archive, skipping macOS debris.

    Every member must pass tarfile's ``data`` filter (zip members: no absolute path, no '..'), and
    the archive must stay within ``item.limits``; the openers count what is read against them.
    """
    budget = _ByteBudget(item)
    if zipfile.is_zipfile(item.path):
        with zipfile.ZipFile(item.path) as archive:
            infos = archive.infolist()
            _check_member_count(item, len(infos))
            for info in infos:
                _check_member_name(item, info.filename)
                if not info.is_dir() and not is_debris(info.filename):
                    yield (
                        info.filename,
                        (
                            lambda info=info: budget.open(
                                info.filename, info.file_size, archive.open(info)
                            )
                        ),
                    )
    elif tarfile.is_tarfile(item.path):
        with tarfile.open(item.path) as archive:
            for count, member in enumerate(
                archive, 1
            ):  # lazily: a bomb's headers are never all loaded
                _check_member_count(item, count)
                _check_member_name(item, member.name)
                try:
                    tarfile.data_filter(member, str(item.path.parent))
                except tarfile.FilterError as exc:
                    raise ArchiveError(
                        f"archive {item.name}: member {member.name!r} is unsafe to unpack ({exc}); "
                        "the archive is damaged or crafted, so fetch it again from a trusted source"
                    ) from exc
                if member.isfile() and not is_debris(member.name):
                    yield (
                        member.name,
                        (
                            lambda member=member: budget.open(
                                member.name, member.size, archive.extractfile(member)
                            )
                        ),
                    )
    else:
        raise ValueError(f"{item.path} is neither a zip nor a tar archive")


def _check_member_count(item: Fetched, count: int) -> None:
    if count > item.limits.max_members:
        raise ArchiveError(
            f"archive {item.name} holds more than {item.limits.max_members} members, which looks like an archive "
            "bomb; check the source, or raise downloads.max_archive_members in the config if it is known to be right"
        )


def _check_member_name(item: Fetched, name: str) -> None:
    if mirror_path_problem(name.rstrip("/")) is not None:
        raise ArchiveError(
            f"archive {item.name}: member {name!r} would unpack outside its folder; "
            "the archive is damaged or crafted, so fetch it again from a trusted source"
        )


class _ByteBudget:
    """The bytes one archive may still unpack to; a member that would exceed it stops the fetch."""

    def __init__(self, item: Fetched) -> None:
        self.item, self.left = item, item.limits.max_bytes

    def open(self, member: str, declared: int, reader: Any) -> Any:
        self._spend(member, declared, commit=False)  # refuse a declared bomb before reading a byte
        return _CountingReader(reader, lambda n: self._spend(member, n))

    def _spend(self, member: str, size: int, commit: bool = True) -> None:
        if size > self.left:
            raise ArchiveError(
                f"archive {self.item.name} unpacks to more than {self.item.limits.max_bytes} bytes (at member "
                f"{member!r}), which looks like a decompression bomb; check the source, or raise "
                "downloads.max_extracted_bytes in the config if it is known to be right"
            )
        if commit:
            self.left -= size


class _CountingReader:
    """A member's reader that charges every byte read to a budget (declared sizes can lie)."""

    def __init__(self, reader: Any, charge: Callable[[int], None]) -> None:
        self.reader, self.charge = reader, charge

    def read(self, size: int = -1) -> bytes:
        data = self.reader.read(size)
        self.charge(len(data))
        return data

    def __enter__(self) -> _CountingReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.reader.close()


def is_debris(name: str) -> bool:
    return "__MACOSX" in name or Path(name).name.startswith("._")


def extract_members(item: Fetched, wanted: Callable[[str], bool], staging: Path) -> list[str]:
    """Copy the archive members for which ``wanted(member)`` into ``staging`` (by base name).

    An error if none is wanted, or if two wanted members share a base name (one would silently
    replace the other: a crafted archive could swap a real file for its own). A full disk names
    the member and the archive (:class:`isotropy.io.DiskFullError`).
    """
    written: dict[str, str] = {}
    for member, opener in archive_members(item):
        if wanted(member):
            target = Path(member).name
            if target in written:
                raise ArchiveError(duplicate_message(item, target, written[target], member))
            with opener() as reader:
                _write_member(item, member, reader, staging / target)
            written[target] = member
    if not written:
        raise ValueError(
            f"archive {item.name} holds none of the expected files; its layout changed or the URL is wrong"
        )
    return list(written)


def duplicate_message(item: Fetched, target: str, first: str, second: str) -> str:
    return (
        f"archive {item.name} holds two members named {target} ({first!r} and {second!r}); "
        "which one is the data cannot be told, so neither is used: the archive is damaged or "
        "crafted, fetch it again from a trusted source"
    )


def _write_member(item: Fetched, member: str, reader: Any, target: Path) -> None:
    try:
        with open(target, "wb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        written = target.stat().st_size if target.exists() else 0
        target.unlink(missing_ok=True)
        full = DiskFullError(target, written, error)
        full.strerror = f"unpacking member {member!r} of archive {item.name}: {full.strerror}"
        raise full from error


def copy_into(item: Fetched, staging: Path, target: str) -> str:
    (staging / target).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(item.path, staging / target)
    return target
