"""The claims page as markdown (``results/claims.md`` and each study's own claims page): a
tally per study and claim, then every row, under how the claims are tested
(:mod:`isotropy.verdicts.claims` judges them)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from isotropy.verdicts.claims import CLAIM_MARKS, CLAIM_VERDICTS, STAND_IN_NOTE
from isotropy.verdicts.families import family_sizes, study_family
from isotropy.verdicts.tolerances import ALPHA, ON_STAND_IN, SIMPSON_MARK

ERROR_CONTROL = (
    "How the claims are tested (docs/verdicts.md): a claim is about every run, so it is judged per "
    "seed. A direction (silhouette rises, IsoScore falls, r below the paper's own level, and each "
    "direction the extension study's open questions state) is *supported* when every seed goes "
    f"that way and a one-sided t-test over seeds is significant (per row: a one-sided test at "
    f"{ALPHA:g}). The tested rows are Holm-adjusted within declared families, one per study (the "
    "paper it checks × the study), never across them, so a row's verdict does not depend on what "
    f"else the page holds and {ALPHA:g} bounds the chance of any false *supported* (or false *not "
    "supported* by the test) within a family; the extension and CLS studies' own pages hold the "
    "same families. Families on this page: {families}. Bounds stated for every run (ρ below "
    "−0.998) are checked in every seed (no test needed); the seeds' spread against the size of "
    "the change is tested (confidence bounds of the ratio); a comparison of one value with a "
    "bound tests nothing and reads *untested: holds* / *untested: fails*. A bound at the paper's "
    "own number is not judged on a stand-in (*stand-in: not judged*); a direction is, and its "
    "verdict says *on a stand-in*."
)


def _fmt(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{value:.4g}"


MARKS = {verdict: f"{mark} {verdict}" for verdict, mark in CLAIM_MARKS.items()}


def verdict_cell(verdict: str, note: str) -> str:
    """A row's verdict as printed: a direction judged on a stand-in says so."""
    return MARKS[verdict] + (f" ({ON_STAND_IN})" if STAND_IN_NOTE in str(note) else "")


def claims_markdown(table: pd.DataFrame, title: str = "Claims check") -> str:
    """A short markdown summary: a tally per study and claim, then every row."""
    counts = table["verdict"].value_counts()
    tested = table.loc[table["note"].astype(str).str.contains("Holm over the "), "study"]
    lines = [
        f"# {title}",
        "",
        "Each claim of the replicated papers, checked on this run's results "
        "(`results/claims.csv` holds the same rows).",
        "",
        ERROR_CONTROL.replace("{families}", family_sizes(map(study_family, tested), "tests")),
        "",
        " · ".join(f"{MARKS[v]}: {int(counts.get(v, 0))}" for v in CLAIM_VERDICTS),
        "",
        "## By claim",
        "",
        "| study | claim | paper | " + " | ".join(CLAIM_VERDICTS) + " |",
        "|---|---|---|" + "---|" * len(CLAIM_VERDICTS),
    ]
    for (study, claim), group in table.groupby(["study", "claim"], sort=False):
        tally = group["verdict"].value_counts()
        lines.append(
            f"| {study} | {claim} | {group['paper'].iloc[0]} | "
            + " | ".join(str(int(tally.get(v, 0))) for v in CLAIM_VERDICTS)
            + " |"
        )
    lines += [
        "",
        "## Every check",
        "",
        "| study | setup | claim | measured | threshold | verdict | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples(index=False):
        note = str(row.note).replace("|", "\\|")
        measured = _fmt(row.measured) + (" ⚠" if SIMPSON_MARK in note else "")
        lines.append(
            f"| {row.study} | {row.setup} | {row.claim} | {measured} | "
            f"{row.threshold} | {verdict_cell(row.verdict, note)} | {note} |"
        )
    return "\n".join(lines) + "\n"
