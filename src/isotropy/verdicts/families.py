"""Holm families, fixed by the row itself (docs/verdicts.md, "Families")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from isotropy import statistics as st
from isotropy.io import markdown_table
from isotropy.verdicts.tolerances import SIMPSON_MARK, settle

MICKUS, RAJAEI = "Mickus et al. 2024", "Rajaei & Sheikhi 2020"
# Each study's name in a family (and on the comparison page), and the paper its claims are from.
STUDIES = {
    "main": ("main", MICKUS),
    "glue": ("GLUE", MICKUS),
    "geometry": ("geometry", RAJAEI),
    "istar": ("I-STAR", "Rudman & Eickhoff 2024"),
    "extensions": ("extensions", MICKUS),
    "rajaee_cls": ("CLS", RAJAEI),
}


# A family of tests over seeds holds one quantity: an accuracy test is never adjusted with
# IsoScore* tests whose p is about 1.
SEED_TEST_QUANTITIES = {"istar_isoscore_change": "IsoScore*", "istar_metric_gain": "task metric"}


def family_name(paper: str, study: str, seeds_of: str = "") -> str:
    """'Mickus et al. 2024 · main': the family of a paper's rows of one study; with ``seeds_of``,
    of its tests over seeds of that quantity ('Rudman & Eickhoff 2024 · I-STAR · task metric')."""
    name = f"{paper} · {STUDIES.get(study, (study,))[0]}"
    return f"{name} · {SEED_TEST_QUANTITIES.get(seeds_of, seeds_of)}" if seeds_of else name


def family_of_claim(study: str, rule: str, quantity: str) -> str:
    """The family of a claims-page test."""
    seeds_of = quantity if rule == "seeds" and quantity in SEED_TEST_QUANTITIES else ""
    return family_name(STUDIES.get(study, (study, study))[1], study, seeds_of)


def holm_said(row: Mapping, noun: str, p: str = "") -> str:
    """'; Holm over the 4 tests of F: p …' (``p`` formatted with a settled row's fields), the
    words :func:`family_sizes` reads back."""
    said = f"; Holm over the {row['size']} {noun} of {row['family']}"
    return said + (f": {p.format(**row)}" if p else "")


def flagged(shown: str, note: object) -> str:
    """A measured cell, marked ⚠ where its note says it was pooled outside its seeds."""
    return shown + (" ⚠" if SIMPSON_MARK in str(note) else "")


def family_sizes(notes: pd.Series, noun: str) -> str:
    """'Mickus et al. 2024 · main (4 rows), …': the families of a page's ``notes`` ('none')."""
    found = notes.astype(str).str.extract(r"Holm over the \d+ \w+ of ([^:;]+)")[0].dropna()
    return ", ".join(f"{family} ({n} {noun})" for family, n in Counter(found).items()) or "none"


def verdict_page(title: str, paragraphs: Sequence[str], tables: Mapping[str, pd.DataFrame]) -> str:
    """A verdict page in Markdown: its title, its paragraphs, each table under its heading."""
    sections = [f"## {heading}\n\n{markdown_table(table)}" for heading, table in tables.items()]
    return "\n\n".join([f"# {title}", *paragraphs, *sections])


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (NaN stays NaN, outside the family; scipy offers no Holm)."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    order = np.argsort(p, kind="stable")[: np.isfinite(p).sum()]  # a NaN sorts last
    stepped = (len(order) - np.arange(len(order))) * p[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(stepped))
    return adjusted.tolist()


def settle_rows(rows: list[dict], names: tuple[str, str] = (st.AGREES, st.DIFFERS)) -> list[dict]:
    """Every page's one settling: each row naming a ``family`` gets its p-values Holm-adjusted
    in it, the family's ``size`` (tests with a finite p) and its ``verdict``; returns them."""
    tested = [row for row in rows if row.get("family")]
    frame = pd.DataFrame(tested, columns=["family", "p_for", "p_against"])
    by = frame.astype({"p_for": float, "p_against": float}).groupby("family", sort=False)
    frame["p_for"], frame["p_against"] = (by[p].transform(holm) for p in ("p_for", "p_against"))
    frame["size"] = by["p_for"].transform(lambda p: int(np.isfinite(p).sum()))
    frame["verdict"] = [settle(a, b, names) for a, b in zip(frame["p_for"], frame["p_against"])]
    for row, settled in zip(tested, frame.to_dict("records")):
        row.update(settled)
    return tested
