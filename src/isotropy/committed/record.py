"""A committed run's record (:class:`CommittedRun`): its files, the checksum records that list
them and the pages rendered from them."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.io import (
    atomic_path,
    checked_record,
    generated_block,
    markers,
    sha256_file,
    with_block,
)
from isotropy.provenance import single_commit
from isotropy.verdicts.claims import verdict_cell

DATA = Path("docs/data")
COMMAND = "python -m isotropy.committed write"


def one_value(records: Sequence[Mapping[str, Any]], key: Callable[[Any], Any], what: str) -> Any:
    """The one value ``key`` gives every provenance record of a run; several are refused."""
    found = {json.dumps(key(record), sort_keys=True) for record in records}
    if len(found) != 1:
        raise ValueError(f"the run's files were made by {len(found)} {what}: {sorted(found)}")
    return json.loads(found.pop())


def made_by(
    records: Sequence[Mapping[str, Any]], what: str, sources: Sequence[Path], base: Path
) -> dict[str, Any]:
    """The one code commit and package set of a run's provenance ``records``, and each of its
    ``sources``' sha256 by its path under ``base``."""
    return {
        "code_commit": single_commit(records, what),
        "packages": one_value(records, lambda r: r.get("packages"), "package sets"),
        "sources_sha256": {str(p.relative_to(base)): sha256_file(p) for p in sources},
    }


def device_calls(folders: Sequence[Path]) -> list[dict[str, Any]]:
    """Each ``$OUT`` folder's record.json, without its own checksums (the combined record's)."""
    calls = [json.loads((f / "record.json").read_text(encoding="utf-8")) for f in folders]
    for call in calls:
        call.pop("files_sha256", None)
    return calls


def verdict_cells(table: pd.DataFrame) -> list[str]:
    """Each claim row's verdict as the pages print it (:func:`verdict_cell`)."""
    return [verdict_cell(*row) for row in zip(table["verdict"], table["note"], table["claim"])]


def page_markers(what: str) -> tuple[str, str]:
    """The markers of a generated block, naming the command that writes it."""
    return markers(what, COMMAND)


@dataclass(frozen=True)
class Checksums:
    """A JSON record whose ``files_sha256`` lists every one of ``files``, any of ``optional``
    and nothing else (:func:`isotropy.io.commit_files`)."""

    path: Path
    files: tuple[Path, ...]
    optional: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Page:
    """A page rendered from committed files: ``render(root)`` is its block between the markers
    ``block``, or the whole page."""

    path: Path
    render: Callable[[Path], str]
    block: tuple[str, str] | None = None

    def generated(self, root: Path) -> str:
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
    """One committed run: its checksum ``records``, its ``pages``, and ``copy(root, sources,
    facts, config, into)``, which writes the record ``into`` and its files from a finished run's
    ``sources`` (``source_count`` of them; 0: any number), ``facts`` no file holds (start, end,
    machine) and its effective ``config`` (by default ``effective_config``)."""

    name: str
    pages: Sequence[Page]
    records: Sequence[Checksums] = ()  # none: pages of the code
    copy: Callable[[Path, list[Path], dict[str, Any], Path, Checksums], Any] | None = None
    sources: str = ""
    source_count: int = 1
    effective_config: str = ""

    def committed(self, root: Path) -> bool:
        """Whether its first record exists."""
        return not self.records or (root / self.records[0].path).is_file()

    def problems(self, root: Path) -> list[str]:
        """Each file that fails its checksum, record naming other files, and stale page."""
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
        """Copy a finished run in, then render its pages (a page without its markers first
        refused, so nothing is half-written)."""
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
