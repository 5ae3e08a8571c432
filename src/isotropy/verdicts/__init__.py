"""Verdicts: the papers' claims and printed numbers judged on this run's results (the words and
rules: docs/verdicts.md)."""
