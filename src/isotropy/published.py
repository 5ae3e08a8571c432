"""The papers' printed numbers (``config/published_values.csv``): which published row's setup
pattern fits one of our setups; and the form of a claim a study judges on its per-seed values
(:class:`SeedClaim`). Neutral ground: the result tables (:mod:`isotropy.summaries`) print a
paper's value beside ours, a study's science names the claims its values answer, and the
verdicts (:mod:`isotropy.verdicts`) judge ours against them; science never imports the verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase


def matches(pattern: str, paper_setup: str) -> bool:
    """Whether a published setup pattern (fnmatch, alternatives joined by '|') fits a setup."""
    return any(fnmatchcase(paper_setup, part.strip()) for part in str(pattern).split("|"))


@dataclass(frozen=True)
class SeedClaim:
    """A claim about a per-seed value's direction: ``above`` or ``below`` ``bound``.

    ``scope`` ``each setup`` judges every setup on its own (one row each); ``any setup`` is an
    existence claim ("need not", "not necessarily"): one row, supported when some setup holds
    by the test over its seeds, not supported when every setup goes the other way."""

    name: str
    statement: str
    direction: str
    paper: str
    bound: float = 0.0
    scope: str = "each setup"
