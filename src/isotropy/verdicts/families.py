"""Holm families declared, not accidental (issue 59, item 3; docs/verdicts.md, "Families"): one
per paper × study and rule kind, fixed by the row itself, so a row's verdict never moves with
what else the run holds, and a row two pages print reads the same on both.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

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


# Tests over seeds (rules seeds_below / seeds_above: the I-STAR grid) hold one quantity each,
# every λ of it: an accuracy test is never adjusted with IsoScore* tests whose p is about 1.
SEED_TEST_QUANTITIES = {"istar_isoscore_change": "IsoScore*", "istar_metric_gain": "task metric"}


def seed_test_family(paper: str, study: str, quantity: str) -> str:
    """'Rudman & Eickhoff 2024 · I-STAR · task metric': the family of a test over seeds, one per
    paper × study × quantity (issue 79: a Holm family holds tests of one kind)."""
    return f"{family_name(paper, study)} · {SEED_TEST_QUANTITIES.get(quantity, quantity)}"


def family_of_claim(study: str, rule: str, quantity: str) -> str:
    """The family of a claims-page test: its study's (the paper it checks × the study), or for a
    test over seeds of a paired difference (:data:`SEED_TEST_QUANTITIES`) its study's and
    quantity's."""
    paper = STUDY_PAPERS.get(study, study)
    if rule == "seeds" and quantity in SEED_TEST_QUANTITIES:
        return seed_test_family(paper, study, quantity)
    return family_name(paper, study)


def family_sizes(families: Iterable[str], noun: str) -> str:
    """'Mickus et al. 2024 · main (4 rows), …': the family of each tested row of a page, counted
    in the page's order ('none' without any)."""
    counted = Counter(families)
    return ", ".join(f"{family} ({n} {noun})" for family, n in counted.items()) or "none"


def holm_by_family(tests: Sequence[tuple[str, float, float]]) -> list[tuple[float, float, int]]:
    """Each test's (family, first p-value, second p-value) as (both Holm-adjusted within its
    family, the family's size: its tests with a finite first p-value; NaN stays NaN, outside
    it)."""
    adjusted = [(math.nan, math.nan, 0)] * len(tests)
    for family in dict.fromkeys(name for name, _, _ in tests):
        members = [i for i, test in enumerate(tests) if test[0] == family]
        size = sum(1 for i in members if math.isfinite(tests[i][1]))
        first = holm([tests[i][1] for i in members])
        second = holm([tests[i][2] for i in members])
        for i, a, b in zip(members, first, second):
            adjusted[i] = (a, b, size)
    return adjusted
