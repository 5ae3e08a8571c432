"""A committed run's record (:class:`CommittedRun`): its files, the checksum records that list
them and the pages rendered from them."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from filecmp import cmp
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.intake import hash_inside, parse_json, read_csv, read_json, read_text, read_yaml
from isotropy.io import atomic_path, checked_record, markdown_table, with_block
from isotropy.provenance import code_label, read_record
from isotropy.verdicts.claims import verdict_cells
from isotropy.verdicts.comparison import read_published

DATA = Path("docs/data")
COMMAND = "python -m isotropy.committed write"
DATA_IN = (f"{Path(paths.dataset_table()).parent}/", f"{paths.RAW_ROOT}/")  # prepared, raw
# Runs whose paper's models are another study's published rows (config/published_values.csv).
STUDY_OF = dict(rajaee_cls="geometry", extensions="main", sensitivity="main", identities="main")


@functools.cache
def run_facts(root: Path, record: str) -> dict[str, Any]:
    """A committed run's facts, read alike from every record (what it leaves out: config.yaml):
    its ``papers``, the models it ran that are pinned, named (by id or paper name) in its
    study's rows of config/published_values.csv and no stand-in (none: the run is a stand-in);
    each setup's ``items`` (its Table 1 or 2) and each data input's sha256 (``data``)."""
    found, base = read_json(root, record), read_yaml(root, "config.yaml")
    run = Path(record).stem.removesuffix("_run").removesuffix("_record")
    published = read_published()
    study = next(s for s in (*STUDY_OF, *published["study"], run) if run.startswith(s))
    printed = " ".join(published.loc[published["study"] == STUDY_OF.get(study, study), "model"])
    saved = found.get("config") or (found.get("calls") or [{}])[0]  # or its device call's
    config = {**base, **saved, "models": {**base["models"], **saved.get("models", {})}}
    models, encoders = config["models"], config["encoders"]
    encoder_of = {d: s["encoder"] for d, s in config["main"]["setups"].items()}
    settings = {**(base.get(run) or {}), **(saved.get(run) or saved.get(study) or {})}
    ran = settings.get("run_models") or settings.get("models") or settings.get("encoders")
    by_id = [m for m, v in models.items() if v.get("model") == found.get("model", {}).get("id")]
    ran = ran or by_id or list(encoder_of.values())
    model_of = {e: v.get("model", e) for e, v in encoders.items()}
    stand_ins, named = found.get("stand_ins") or {}, set()
    for name in {model_of.get(n, n) for n in ran}:
        entry = models.get(name) or {}
        said = [entry.get("paper"), (entry.get("model") or "").split("/")[-1]]
        paper = any(re.search(rf"\b{re.escape(w)}\b", printed, re.I) for w in said if w)
        named |= {name} if paper and entry.get("revision") and name not in stand_ins else set()
    papers = {n for n in {*ran, *encoders} if model_of.get(n, n) in named}
    counts = f"{DATA}/{run}_{paths.COUNT_TABLES.get(run)}.csv"  # the run's Table 1 or 2
    tables = [read_csv(root, counts)] if counts in found.get("files_sha256", {}) else []
    items = {f"{e}/{d}": n for t in tables for e, d, n in t[["encoder", "dataset", "items"]].values}
    facts = dict(settings=settings, study=run, stand_ins=stand_ins, encoder_of=encoder_of)
    return {**facts, "papers": papers, "items": items, "data": found.get("data_sha256", {})}


def made_by(
    sources: Sequence[Path], base: Path, device: Callable[[Mapping[str, Any]], Any]
) -> dict[str, Any]:
    """The one code commit, package set and ``device`` of the provenance records of a run's
    ``sources``, each source's sha256 by its path under ``base`` and each data set's (the
    prepared or raw data inputs they name); a source without its record, or several values of
    one, is refused."""
    records = [read_record(path) for path in sources]  # each read once
    if None in records:  # name the first without one
        missing = sources[records.index(None)]
        raise FileNotFoundError(f"{missing}: no provenance record beside it; not a workflow output")

    def one(key: Callable[[Any], Any], what: str) -> Any:
        found = {json.dumps(key(record), sort_keys=True) for record in records}
        if len(found) != 1:
            raise ValueError(f"the run's files were made by {len(found)} {what}: {sorted(found)}")
        return json.loads(found.pop())

    names = [str(path.relative_to(base)) for path in sources]
    inputs = [(r or {}).get("inputs") or {} for r in records]
    read = {(n, i.get("sha256")) for r in inputs for n, i in r.items() if n.startswith(DATA_IN)}
    data = dict(sorted(read))
    if twice := [n for n in data if sum(m == n for m, _ in read) > 1]:
        raise ValueError(f"the run's files read two versions of {twice[0]}")
    return {
        "code_commit": one(code_label, "code versions"),
        "packages": one(lambda record: record.get("packages"), "package sets"),
        "sources_sha256": {name: hash_inside(base, name) for name in names},
        "data_sha256": data,  # the data sets the sources' provenance records say they read
        "device": one(device, "devices"),
    }


def json_lines(text: str) -> list[Any]:
    return [parse_json(line) for line in text.splitlines() if line.strip()]


def committed_files(root: str | os.PathLike, record: Path, *files: Path) -> list[Any]:
    """The run's ``record``, every checksum checked, then each of ``files`` read through the
    door: JSON lines as a list of their values, a CSV (or ``.csv.gz``) as a frame."""
    found: list[Any] = [checked_record(root, record)]
    for file in map(str, files):
        jsonl = file.endswith(".jsonl")
        found.append(json_lines(read_text(root, file)) if jsonl else read_csv(root, file))
    return found


def device_calls(folders: Sequence[Path]) -> list[dict[str, Any]]:
    """Each ``$OUT`` folder's record.json, without its own checksums (the combined record's)."""
    calls = [read_json(folder, "record.json") for folder in folders]
    return [{k: v for k, v in call.items() if k != "files_sha256"} for call in calls]


def page_markers(what: str) -> tuple[str, str]:
    """The two lines around a page's generated ``what``; the first names its command."""
    said = f"<!-- {what}: generated by `{COMMAND}`; do not edit by hand -->"
    return said, f"<!-- end of the generated {what} -->"


def claims_table(
    table: pd.DataFrame, columns: Sequence[str], rename: Mapping[str, str] = {}, **cells: Any
) -> pd.DataFrame:
    """Claims as every page shows them: ``columns`` of ``table``, ``cells`` replaced, each verdict
    saying a stand-in or near-guaranteed (:func:`isotropy.verdicts.claims.verdict_cells`)."""
    return table.assign(**cells, verdict=verdict_cells(table))[list(columns)].rename(columns=rename)


@dataclass(frozen=True)
class Checksums:
    """A JSON record whose ``files_sha256`` lists every one of ``files``, any of ``optional``
    and nothing else (:func:`isotropy.io.commit_files`)."""

    path: Path
    files: tuple[Path, ...]
    optional: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Page:
    """A page made by one function, ``parts(root)``: its lines of text and the tables it shows,
    in order, rendered between the markers ``block``, or as the whole page ``whole`` = (run,
    title); its :meth:`tables` are what coverage reads of it, never its Markdown."""

    path: Path
    parts: Callable[[Path], list[Any]]
    block: tuple[str, str] | None = None
    whole: tuple[str, str] | None = None

    def render(self, root: Path) -> str:
        parts = self.parts(root)
        if self.whole is not None:  # a page of its own: its title and the command that writes it
            run, title = self.whole
            said = f"generated by `{COMMAND} {run}` from docs/data/{run}_*; do not edit by hand"
            parts = [f"# {title}", "", f"<!-- {said} -->", "", *parts]
        text = "\n".join(markdown_table(p) if isinstance(p, pd.DataFrame) else p for p in parts)
        return text if self.whole is None else text.rstrip() + "\n"

    def tables(self, root: Path) -> list[pd.DataFrame]:
        return [part for part in self.parts(root) if isinstance(part, pd.DataFrame)]

    def written(self, root: Path) -> str:
        """The file as a write leaves it: the render, or the page with it in its block."""
        if self.block is None:
            return self.render(root)
        return with_block(read_text(root, str(self.path)), self.render(root), *self.block)


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
        return not self.records or (root / self.records[0].path).is_file()

    def problems(self, root: Path) -> list[str]:
        """Each file that fails its checksum, record naming other files, and stale page."""
        found = []
        for record in self.records:
            try:
                listed = set(checked_record(root, record.path)["files_sha256"])
            except (OSError, ValueError, KeyError) as error:
                found.append(str(error))
                continue
            named, optional = ({str(p) for p in paths} for paths in (record.files, record.optional))
            if not named <= listed <= named | optional:
                said = f"the study names {sorted(named)} (and may name {sorted(optional - named)})"
                found.append(f"{record.path} lists {sorted(listed)}, {said}")
        if not found:  # a page rendered from files that fail their checksum would say nothing
            for page in self.pages:
                try:
                    if page.written(root) != read_text(root, str(page.path)):
                        found.append(f"{page.path} is stale: run `{COMMAND} {self.name}`")
                except (OSError, ValueError) as error:  # a page missing, or without its markers
                    found.append(f"{page.path}: {error}")
        return [f"{self.name}: {p}" for p in found]

    def copy_in(
        self,
        root: Path,
        sources: list[Path],
        facts: dict[str, Any],
        config: Path | None = None,
        into: Path | None = None,
    ) -> Checksums:
        """Copy a finished run in (record ``into``, default the first): its files and pages are
        written and checked in a staging copy of docs/, then what changed moves into ``root``
        together; on any failure (a page without its markers, a failing render) nothing changes."""
        if self.copy is None:
            raise ValueError(f"{self.name} is not copied from a run")
        if self.source_count and len(sources) != self.source_count:
            raise ValueError(f"{self.name} copies {self.source_count} source(s): {self.sources}")
        if (record := next((r for r in self.records if into in (None, r.path)), None)) is None:
            raise ValueError(f"{self.name} has no record {into}")
        with tempfile.TemporaryDirectory(prefix=".committed-copy.", dir=root) as temporary:
            stage = Path(temporary)
            docs = shutil.copytree(root / DATA.parent, stage / DATA.parent, symlinks=True)
            self.copy(stage, sources, facts, config or Path(self.effective_config), record)
            self.write(stage)
            if problems := self.problems(stage):
                raise ValueError("; ".join(problems))
            for path in sorted(docs.rglob("*")):
                target = root / path.relative_to(stage)
                if path.is_file() and not (target.is_file() and cmp(path, target, shallow=False)):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(path, target)
        return record

    def write(self, root: Path) -> None:
        """Rewrite every page from the committed files (refused when a checksum fails)."""
        for record in self.records:
            checked_record(root, record.path)
        for page in self.pages:
            with atomic_path(root / page.path) as tmp:
                tmp.write_text(page.written(root), encoding="utf-8")
