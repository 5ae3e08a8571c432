"""The sensitivity study's committed run (its per-seed file) and docs/sensitivity.md's results
table rendered from it."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed.record import DATA, Checksums, CommittedRun, Page, page_markers
from isotropy.intake import MAX_TABLE_BYTES, read_inside, read_text
from isotropy.io import checked_record, commit_files
from isotropy.sensitivity import NOT_RUN_NOTE, cell_table, not_run_cells, read_seeds, with_interval

DOC = Path("docs/sensitivity.md")
DOC_SEEDS = DATA / "sensitivity_seeds.csv"
DOC_SOURCE = DATA / "sensitivity_source.json"
DOC_BEGIN, DOC_END = page_markers("results table")
COLUMNS = {"setup": "setup", "vectors": "vectors", "dimension": "dim", "label_set": "labels"}
COLUMNS |= {"lr_factor": "lr ×", "r": "r [CI]", "pearson_r_seeds": "r per seed"}
COLUMNS |= {"isoscore": "IsoScore"}


def parts(root: Path) -> list[Any]:
    """The cells as shown (the rest is in the per-seed file), the settings, the cells not run."""
    source = checked_record(root, DOC_SOURCE)
    seeds = read_seeds(io.BytesIO(read_inside(root, str(DOC_SEEDS), MAX_TABLE_BYTES)))
    table = cell_table(seeds, source["interval_level"])
    shown = table.assign(
        lr_factor=table["lr_factor"].map("{:g}".format),
        r=[with_interval(row, "pearson_r") for _, row in table.iterrows()],  # as table.md
        isoscore=[
            f"{a:.3f} → {b:.3f}" for a, b in zip(table["isoscore_start"], table["isoscore_end"])
        ],
    )
    note = (
        f"Settings: {source['settings_line']}. r: tanh(mean Fisher z) over the seeds with its "
        f"{table['interval'].iloc[0]}.\n"
    )
    if source.get("not_run"):
        note += f"\n{NOT_RUN_NOTE}{', '.join(source['not_run'])}.\n"
    return [shown.reindex(columns=list(COLUMNS), fill_value="").rename(columns=COLUMNS), note]


def copy(root: Path, sources: list[Path], facts: dict[str, Any], config: Path, into) -> None:
    """Copy ``results/sensitivity``'s seeds.csv, with its settings line (table.csv), the cells
    not run (table.md) and ``facts``' interval level (default 0.95) in the record."""
    (results,) = sources
    seeds_file, table_file, markdown = (results / n for n in ("seeds.csv", "table.csv", "table.md"))
    if missing := [f for f in (seeds_file, table_file, markdown) if not f.is_file()]:
        raise FileNotFoundError(f"{missing[0]} is missing: run `snakemake sensitivity_study` first")
    seeds, table = (read_inside(results, n, MAX_TABLE_BYTES) for n in ("seeds.csv", "table.csv"))
    record = {
        "source": str(seeds_file),
        "sha256": hashlib.sha256(seeds).hexdigest(),
        "table": str(table_file),
        "table_sha256": hashlib.sha256(table).hexdigest(),
        "settings_line": str(pd.read_csv(io.BytesIO(table))["settings"].iloc[0]),
        "interval_level": facts.get("interval_level", 0.95),
        "not_run": not_run_cells(read_text(results, "table.md")),
    }
    commit_files(root, DOC_SOURCE, {DOC_SEEDS: seeds}, {**facts, **record})


COMMITTED = CommittedRun(
    name="sensitivity",
    records=(Checksums(DOC_SOURCE, (DOC_SEEDS,)),),
    pages=(Page(DOC, parts, (DOC_BEGIN, DOC_END)),),
    copy=copy,
    sources="results/sensitivity (a finished sensitivity_study)",
)
