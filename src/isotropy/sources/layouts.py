"""Layouts: each kind of source's raw files (:data:`LAYOUTS`), the same from its URLs or a mirror.
Archives are read member by member within the ``downloads`` limits, never with ``extractall``."""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from isotropy.configuration.data import Downloads
from isotropy.io import atomic_path, decode_text
from isotropy.sources.pins import check_pin

HUB_FILE = "data.parquet"  # a hub data set's split, as downloaded
CRAFTED = "the archive is damaged or crafted, so fetch it again from a trusted source"


class ArchiveError(ValueError):
    """An archive that is unsafe to unpack: a member escaping its folder, a link, or a bomb."""


def mirror_path_problem(rel: str) -> str | None:
    """Why a mirror file (or an archive member) would lie outside its folder (None if inside)."""
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts or "\0" in rel:
        return (
            f"{rel!r} is not a path inside the mirror folder; "
            "list files relative to the mirror, without '..' or a leading '/'"
        )
    return None


@dataclass(frozen=True)
class Fetched:
    """One fetched input (URL file name or mirror path), its limits and pinned ``members``."""

    name: str
    path: Path
    max_bytes: int = Downloads.default("max_extracted_bytes")
    max_members: int = Downloads.default("max_archive_members")
    source: str = ""
    members: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    checked: dict[str, dict[str, Any]] = field(default_factory=dict)


def _entries(item: Fetched) -> Iterator[tuple[str, bool, Callable[[], Any]]]:
    """(name, regular file?, reader) of each member, each tar member through tarfile's filter."""
    if zipfile.is_zipfile(item.path):
        with zipfile.ZipFile(item.path) as archive:
            for info in archive.infolist():
                yield info.filename, not info.is_dir(), functools.partial(archive.open, info)
    else:  # a tar archive: :func:`_pick` asked
        with tarfile.open(item.path) as archive:
            for member in archive:
                try:
                    tarfile.data_filter(member, str(item.path.parent))
                except tarfile.FilterError as exc:
                    raise ArchiveError(
                        f"archive {item.name}: member {member.name!r} is unsafe to unpack ({exc}); "
                        f"{CRAFTED}"
                    ) from exc
                yield member.name, member.isfile(), functools.partial(archive.extractfile, member)


def is_debris(name: str) -> bool:
    return "__MACOSX" in name or Path(name).name.startswith("._")


def extract_members(item: Fetched, wanted: Callable[[str], bool], staging: Path) -> list[str]:
    """Copy the regular members of an archive that are ``wanted`` into ``staging`` by base name
    (macOS debris skipped); return the names written. Two wanted members of one name, one
    outside its folder, or a pinned member missing, are refused."""
    written: dict[str, str] = {}
    left = item.max_bytes  # what the archive may still unpack to
    for count, (member, regular, read) in enumerate(_entries(item), 1):
        if count > item.max_members:
            raise ArchiveError(
                f"archive {item.name} holds more than {item.max_members} members, which "
                "looks like an archive bomb; check the source, or raise "
                "downloads.max_archive_members in the config if it is known to be right"
            )
        if mirror_path_problem(member.rstrip("/")) is not None:
            raise ArchiveError(
                f"archive {item.name}: member {member!r} would unpack outside its folder; {CRAFTED}"
            )
        if not regular or is_debris(member) or not wanted(member):
            continue
        target = Path(member).name
        if target in written:
            raise ArchiveError(
                f"archive {item.name} holds two members named {target} "
                f"({written[target]!r} and {member!r}); which one is the data cannot be told, "
                f"so neither is used: {CRAFTED}"
            )
        with read() as reader:
            left -= _write_member(item, member, reader, staging / target, left)
        written[target] = member
    if missing := sorted(set(item.members) - set(item.checked)):  # a misspelt name, most likely
        held = sorted({Path(m).name for m, file, _ in _entries(item) if file and not is_debris(m)})
        raise ValueError(
            f"sources.{item.source}.members.{missing[0]}: no such member in archive {item.name} "
            f"(it holds {', '.join(held) if len(held) <= 8 else f'{len(held)} files'}); correct "
            "the name, or fetch the published archive"
        )
    return list(written)


def _write_member(item: Fetched, member: str, reader: Any, target: Path, left: int) -> int:
    """Write one member to ``target`` and return its size: past ``left`` bytes read (a declared
    size can lie), it is a bomb. A pinned member is checked before a layout reads it."""
    size, digest = 0, hashlib.sha256()
    with atomic_path(target) as tmp, open(tmp, "wb") as writer:  # a full disk names the file
        while size <= left and (chunk := reader.read(1 << 20)):
            size += len(chunk)
            digest.update(chunk)
            writer.write(chunk)
    if size > left:
        raise ArchiveError(
            f"archive {item.name} unpacks to more than {item.max_bytes} bytes (at member "
            f"{member!r}), which looks like a decompression bomb; check the source, or raise "
            "downloads.max_extracted_bytes in the config if it is known to be right"
        )
    if (pin := item.members.get(base := Path(member).name)) is not None:
        key, label = f"sources.{item.source}.members.{base}", f"{member!r} of archive {item.name}"
        check_pin(size, pin["bytes"], label, key=f"{key}.bytes", what="size")
        check_pin(digest.hexdigest(), pin["sha256"], label, key=f"{key}.sha256")
        item.checked[base] = {"member": member, "sha256": digest.hexdigest(), "bytes": size}
    return size


def source_kind(name: str, source_cfg: Mapping[str, Any] | None = None) -> str:
    """How a source is laid out: its config ``kind``, else the layout of its name."""
    if source_cfg and source_cfg.get("kind"):
        return str(source_cfg["kind"])
    if name.startswith("glue_"):
        return "glue"
    if name in LAYOUTS:
        return name
    raise ValueError(
        f"source {name!r} has no known layout; give it a 'kind' in config/sources.yaml "
        f"(one of {sorted(LAYOUTS)})"
    )


POLARITY_FILES = ("rt-polarity.pos", "rt-polarity.neg")
# The Cornell tarball is documented as Latin-1 but its punctuation bytes (0x85 …, 0x91 ‘) are
# Windows-1252 (Latin-1 would make them C1 controls); the mirror holds UTF-8 copies.
POLARITY_ENCODING = {"url": "cp1252", "mirror": "utf-8"}


def _polarity(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    found = _pick("|".join(map(re.escape, POLARITY_FILES)), items, origin, staging)
    if missing := sorted(set(POLARITY_FILES) - set(found)):
        raise ValueError(f"polarity source lacks {', '.join(missing)} in {[i.name for i in items]}")
    fetched = {Path(item.name).name: item.name for item in items}  # a mirror's plain files
    for name in POLARITY_FILES:
        label = fetched.get(name, f"{name} in {', '.join(item.name for item in items)}")
        text = decode_text((staging / name).read_bytes(), POLARITY_ENCODING[origin], label)
        (staging / name).write_text(text, encoding="utf-8")
    return list(POLARITY_FILES)


def _pick(
    pattern: str, items: list[Fetched], origin: str, staging: Path, folder: str = ""
) -> list[str]:
    """The fetched files or archive members whose base name ``pattern`` matches, written under
    ``folder``; none, or two of one name, is an error."""
    wanted, into = re.compile(pattern).fullmatch, staging / folder
    into.mkdir(parents=True, exist_ok=True)
    found: list[str] = []
    for item in items:
        if wanted(base := Path(item.name).name):
            with atomic_path(into / base) as tmp:  # a full disk: a DiskFullError naming it
                shutil.copyfile(item.path, tmp)
            found.append(base)
        elif zipfile.is_zipfile(item.path) or tarfile.is_tarfile(item.path):
            found += extract_members(item, lambda member: bool(wanted(Path(member).name)), into)
    if not found or len(set(found)) != len(found):
        raise ValueError(
            f"{[i.name for i in items]} should hold one file of each name like {pattern!r}, but "
            f"hold {found or 'none of the expected files'}; the layout changed or the URL is wrong"
        )
    return sorted(str(PurePosixPath(folder, name)) for name in found)


def _glue(items: list[Fetched], origin: str, staging: Path) -> list[str]:
    """GLUE's ``train.tsv`` from a task's zip (``<Task>/train.tsv``), or MRPC's rebuilt as GLUE's
    download script does: Microsoft's training pairs (SentEval's copy; the original is a Windows
    installer) minus GLUE's dev ids."""
    names = {Path(item.name).name: item.path for item in items}
    if "msr_paraphrase_train.txt" not in names:
        return _pick(r"train\.tsv", items, origin, staging)
    if "mrpc_dev_ids.tsv" not in names:
        raise ValueError("MRPC needs both msr_paraphrase_train.txt and mrpc_dev_ids.tsv")
    msr_train, dev_ids = names["msr_paraphrase_train.txt"], names["mrpc_dev_ids.tsv"]
    ids = decode_text(dev_ids.read_bytes(), "utf-8-sig", str(dev_ids)).splitlines()
    dev = {tuple(line.strip().split("\t")) for line in ids if line.strip()}
    header, *lines = decode_text(msr_train.read_bytes(), "utf-8-sig", str(msr_train)).splitlines()
    rows = [line for line in lines if line.strip() and tuple(line.split("\t")[1:3]) not in dev]
    text = "\n".join([header.strip(), *rows]) + "\n"
    (staging / "train.tsv").write_text(text, encoding="utf-8")
    return ["train.tsv"]


Normaliser = Callable[[list[Fetched], str, Path], list[str]]
# Every kind of source (config ``sources.<name>.kind``): ``(items, origin, staging) -> files``.
LAYOUTS: dict[str, Normaliser] = {
    "polarity": _polarity,  # rt-polarity.pos, rt-polarity.neg (UTF-8)
    "snli": functools.partial(_pick, r"snli_1\.0_dev\.jsonl"),
    # corpora/wordnet.zip (NLTK_DATA=resources/raw/<source> works), kept whole: its pins check it
    "wordnet": functools.partial(_pick, r"wordnet\.zip", folder="corpora"),
    "supersense_words": functools.partial(_pick, r"words\.txt"),
    "supersense_features": functools.partial(_pick, r"words_features\.zip"),
    "codwoe": functools.partial(_pick, r"en\.[^/]*\.(json|csv)"),  # the release's English files
    # one word2vec file: an NLPL zip's model.bin (never its model.txt twin), or one as given
    "word_vectors": functools.partial(
        _pick, r"model\.bin|(?!model\.txt)[^/]+\.(bin|txt|vec)(\.gz)?"
    ),
    "glue": _glue,  # train.tsv
    # data.parquet (one split, by ``datasets``), or a mirror's copy under its names (SICK.txt)
    "hub": functools.partial(_pick, ".*"),
    "files": functools.partial(_pick, ".*"),  # every fetched file as it is, under its own name
}
