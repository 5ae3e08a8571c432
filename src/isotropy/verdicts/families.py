"""Holm families, fixed by the row itself (docs/verdicts.md, "Families")."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import pandas as pd

from isotropy.io import markdown_table
from isotropy.verdicts.equivalence import holm

# The name a study goes by in a family (and on the comparison page).
STUDY_LABELS = {
    "main": "main",
    "glue": "GLUE",
    "geometry": "geometry",
    "istar": "I-STAR",
    "extensions": "extensions",
    "rajaee_cls": "CLS",
}
# The paper whose claims each study of the claims page checks.
STUDY_PAPERS = {
    "main": "Mickus et al. 2024",
    "glue": "Mickus et al. 2024",
    "extensions": "Mickus et al. 2024",
    "istar": "Rudman & Eickhoff 2024",
    "geometry": "Rajaei & Sheikhi 2020",
    "rajaee_cls": "Rajaei & Sheikhi 2020",
}


def family_name(paper: str, study: str) -> str:
    """'Mickus et al. 2024 · main': the family of a paper's rows of one study."""
    return f"{paper} · {STUDY_LABELS.get(study, study)}"


# A family of tests over seeds holds one quantity: an accuracy test is never adjusted with
# IsoScore* tests whose p is about 1.
SEED_TEST_QUANTITIES = {"istar_isoscore_change": "IsoScore*", "istar_metric_gain": "task metric"}


def seed_test_family(paper: str, study: str, quantity: str) -> str:
    """'Rudman & Eickhoff 2024 · I-STAR · task metric': the family of a test over seeds."""
    return f"{family_name(paper, study)} · {SEED_TEST_QUANTITIES.get(quantity, quantity)}"


def family_of_claim(study: str, rule: str, quantity: str) -> str:
    """The family of a claims-page test."""
    paper = STUDY_PAPERS.get(study, study)
    if rule == "seeds" and quantity in SEED_TEST_QUANTITIES:
        return seed_test_family(paper, study, quantity)
    return family_name(paper, study)


def family_sizes(notes: pd.Series, noun: str) -> str:
    """'Mickus et al. 2024 · main (4 rows), …': the families a page's ``notes`` were adjusted
    over ('none' without any)."""
    found = notes.astype(str).str.extract(r"Holm over the \d+ \w+ of ([^:;]+)")[0].dropna()
    counted = Counter(found)
    return ", ".join(f"{family} ({n} {noun})" for family, n in counted.items()) or "none"


def verdict_page(title: str, paragraphs: Sequence[str], tables: Mapping[str, pd.DataFrame]) -> str:
    """A verdict page (the claims, the comparison with the papers) in Markdown: its title, its
    paragraphs, then each table under its heading."""
    lines = [f"# {title}"]
    for paragraph in paragraphs:
        lines += ["", paragraph]
    for heading, table in tables.items():
        lines += ["", f"## {heading}", "", markdown_table(table)]
    return "\n".join(lines)


def holm_by_family(tests: Sequence[tuple[str, float, float]]) -> list[tuple[float, float, int]]:
    """Each test's (family, p, p') as (p, p' Holm-adjusted within the family, the family's
    size: its tests with a finite p)."""
    adjusted = [(math.nan, math.nan, 0)] * len(tests)
    for family in dict.fromkeys(name for name, _, _ in tests):
        members = [i for i, test in enumerate(tests) if test[0] == family]
        size = sum(1 for i in members if math.isfinite(tests[i][1]))
        first = holm([tests[i][1] for i in members])
        second = holm([tests[i][2] for i in members])
        for i, a, b in zip(members, first, second):
            adjusted[i] = (a, b, size)
    return adjusted
