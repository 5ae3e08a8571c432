"""Verdicts: the papers' claims and printed numbers judged on this run's results.

The verdict words and the rules behind them are defined once, in docs/verdicts.md; the words
themselves are the constants of :mod:`isotropy.verdicts.tolerances` and
:mod:`isotropy.verdicts.claims` (tests/test_verdicts.py checks the page defines every one).
"""
