"""The extension study's committed run (a copy of ``results/extensions/seeds.csv``) and the
answers of docs/extensions.md rendered from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.committed.record import DATA, Checksums, CommittedRun, Page, page_markers
from isotropy.intake import read_csv
from isotropy.io import checked_record, commit_files
from isotropy.statistics import NOT_DECIDED
from isotropy.verdicts.extension_answers import claims_table

SEEDS = DATA / "extensions_seeds.csv"
RUN = DATA / "extensions_run.json"
DOC = Path("docs/extensions.md")


def answers_parts(seeds: pd.DataFrame, run: dict) -> list[Any]:
    """What ran, then every claim row with its mean's interval and its verdict."""
    counts = seeds.groupby("question", sort=False)["seed"].nunique().to_dict()
    ran = ", ".join(f"{question}: {n} seeds" for question, n in counts.items())
    table = claims_table(seeds)
    shown = table.assign(
        claim="`" + table["claim"] + "`",
        interval=table["interval"].where(table["verdict"] != NOT_DECIDED, "–"),
        verdict="*" + table["verdict"] + "*",
    )[["claim", "setup", "interval", "verdict"]]
    shown = shown.rename(columns={"interval": "mean [95% t-interval]"})
    return [f"Run: {run['run']}. Per-seed values: `{SEEDS.as_posix()}` ({ran}).", "", shown]


def load(root: Path = Path(".")) -> tuple[pd.DataFrame, dict]:
    """The committed per-seed values and their record; criteria rows recorded without their last
    step get it from the record."""
    run, seeds = checked_record(root, RUN), read_csv(root, str(SEEDS))
    criteria = seeds[(seeds["question"] == "criteria") & (seeds["quantity"] == "optimum_step")]
    if "last_step" in run and not (seeds["quantity"] == "last_step").any() and len(criteria):
        last = criteria.assign(quantity="last_step", value=float(run["last_step"]))
        seeds = pd.concat([seeds, last], ignore_index=True)
    return seeds, run


def copy(root: Path, sources: list[Path], facts: dict[str, Any], config: Path, into) -> None:
    """``facts``: ``run``, what ran and when (one sentence), and any other fact of the run."""
    if "run" not in facts:
        raise ValueError("the extension run's facts need 'run': what ran and when")
    (seeds,) = sources
    commit_files(root, RUN, {SEEDS: seeds}, facts)


COMMITTED = CommittedRun(
    name="extensions",
    records=(Checksums(RUN, (SEEDS,)),),
    pages=(Page(DOC, lambda root: answers_parts(*load(root)), page_markers("extensions answers")),),
    copy=copy,
    sources=paths.extensions_file("seeds.csv"),
)
