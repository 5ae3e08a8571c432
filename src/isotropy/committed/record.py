"""A committed run's record (:class:`CommittedRun`): its files with the checksum records that
list them, and the pages rendered from them; checked and written by one command
(``python -m isotropy.committed``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from isotropy.io import (
    atomic_path,
    checked_record,
    generated_block,
    markers,
    sha256_file,
    with_block,
)
from isotropy.provenance import single_commit

DATA = Path("docs/data")
COMMAND = "python -m isotropy.committed write"


def one_value(records: Sequence[Mapping[str, Any]], key: Callable[[Any], Any], what: str) -> Any:
    """The one value ``key`` gives every provenance record of a run (``what``: what it is, for
    the error when the records disagree: a run made by several is refused)."""
    found = {json.dumps(key(record), sort_keys=True) for record in records}
    if len(found) != 1:
        raise ValueError(f"the run's files were made by {len(found)} {what}: {sorted(found)}")
    return json.loads(found.pop())


def made_by(
    records: Sequence[Mapping[str, Any]], what: str, sources: Sequence[Path], base: Path
) -> dict[str, Any]:
    """What made a run's ``sources`` (``what``: they, for the error), from their provenance
    ``records``: the one code commit and package set (a run made by several is refused), and
    each source's sha256 by its path under ``base``."""
    return {
        "code_commit": single_commit(records, what),
        "packages": one_value(records, lambda r: r.get("packages"), "package sets"),
        "sources_sha256": {str(p.relative_to(base)): sha256_file(p) for p in sources},
    }


def device_calls(folders: Sequence[Path]) -> list[dict[str, Any]]:
    """The records of device calls (each ``$OUT`` folder's record.json), in order, without the
    checksums each states of its own files (the combined record states them)."""
    calls = [json.loads((f / "record.json").read_text(encoding="utf-8")) for f in folders]
    for call in calls:
        call.pop("files_sha256", None)
    return calls


def page_markers(what: str) -> tuple[str, str]:
    """The markers of a committed run's generated block, naming the one command that writes it."""
    return markers(what, COMMAND)


@dataclass(frozen=True)
class Checksums:
    """A JSON record (``path``, under the repository) whose ``files_sha256`` states the sha256
    of every one of ``files``, of any of ``optional`` and of nothing else
    (:func:`isotropy.io.commit_files` writes it)."""

    path: Path
    files: tuple[Path, ...]
    optional: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Page:
    """A page rendered from committed files: ``render(root)`` is its generated block between
    ``block`` (the two marker lines), or the whole page when ``block`` is None."""

    path: Path
    render: Callable[[Path], str]
    block: tuple[str, str] | None = None

    def generated(self, root: Path) -> str:
        """What the page holds now where :attr:`render` writes."""
        text = (root / self.path).read_text(encoding="utf-8")
        return text if self.block is None else generated_block(text, *self.block)

    def write(self, root: Path) -> None:
        rendered = self.render(root)
        if self.block is not None:
            text = (root / self.path).read_text(encoding="utf-8")
            rendered = with_block(text, rendered, *self.block)
        with atomic_path(root / self.path) as tmp:
            tmp.write_text(rendered, encoding="utf-8")


@dataclass(frozen=True)
class CommittedRun:
    """One committed run: its ``name``, its checksum ``records``, its ``pages``, and ``copy``,
    which copies a finished run in: ``copy(root, sources, facts, config, into)`` writes the
    files of the record ``into`` (one of ``records``) and that record, through
    :func:`isotropy.io.commit_files`, from ``sources`` (the run's result folders or files, as
    ``sources`` says), ``facts`` (what no file holds: start, end, machine) and ``config`` (the
    run's effective configuration, by default ``effective_config``); ``source_count``: how many
    sources it takes (0: any number)."""

    name: str
    records: Sequence[Checksums]
    pages: Sequence[Page]
    copy: Callable[[Path, list[Path], dict[str, Any], Path, Checksums], Any] | None = None
    sources: str = ""
    source_count: int = 1
    effective_config: str = ""

    def committed(self, root: Path) -> bool:
        """Whether its run is committed yet (its first record exists, or it has none: a page of
        the code): a study registered before its run lands has nothing to check."""
        return not self.records or (root / self.records[0].path).is_file()

    def problems(self, root: Path) -> list[str]:
        """What is wrong with the committed files and pages under ``root`` (empty: all fresh):
        a file that does not match its record's checksum, a record naming other files than
        this one names, a page whose generated part is not what the files render."""
        found = []
        for record in self.records:
            try:
                listed = set(checked_record(root, record.path)["files_sha256"])
            except (OSError, ValueError, KeyError) as error:
                found.append(f"{self.name}: {error}")
                continue
            named = {str(path) for path in record.files}
            allowed = named | {str(path) for path in record.optional}
            if not named <= listed <= allowed:
                found.append(
                    f"{self.name}: {record.path} lists {sorted(listed)}, the study names "
                    f"{sorted(named)} (and may name {sorted(allowed - named)})"
                )
        if found:  # a page rendered from files that fail their checksum would say nothing
            return found
        for page in self.pages:
            try:
                fresh = page.generated(root) == page.render(root)
            except (OSError, ValueError) as error:  # a page missing, or without its markers
                found.append(f"{self.name}: {page.path}: {error}")
                continue
            if not fresh:
                found.append(f"{self.name}: {page.path} is stale: run `{COMMAND} {self.name}`")
        return found

    def copy_in(
        self,
        root: Path,
        sources: list[Path],
        facts: dict[str, Any],
        config: Path | None = None,
        into: Checksums | None = None,
    ) -> None:
        """Copy a finished run in (:attr:`copy`), then render its pages; a page without its
        markers is refused first, so nothing is half-written."""
        if self.copy is None:
            raise ValueError(f"{self.name} is not copied from a run")
        for page in self.pages:
            if page.block is not None:
                page.generated(root)
        config = config or Path(self.effective_config)
        self.copy(root, sources, facts, config, into or self.records[0])
        self.write(root)

    def write(self, root: Path) -> None:
        """Rewrite every page from the committed files (refused when a checksum fails)."""
        for record in self.records:
            checked_record(root, record.path)
        for page in self.pages:
            page.write(root)
