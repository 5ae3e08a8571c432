"""The papers' printed numbers (``config/published_values.csv``): which published row's setup
pattern fits one of our setups. Neutral ground: the result tables (:mod:`isotropy.summaries`)
print a paper's value beside ours, and the verdicts (:mod:`isotropy.verdicts.comparison`) judge
ours against it, and science never imports the verdicts."""

from __future__ import annotations

from fnmatch import fnmatchcase


def matches(pattern: str, paper_setup: str) -> bool:
    """Whether a published setup pattern (fnmatch, alternatives joined by '|') fits a setup."""
    return any(fnmatchcase(paper_setup, part.strip()) for part in str(pattern).split("|"))
