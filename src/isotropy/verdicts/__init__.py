"""Verdicts: the papers' claims and printed numbers judged on this run's results.

The verdict words, defined once (docs/verdicts.md gives the rules behind them with examples):

``agrees``
    the paper's number lies within our tolerance, named in the row: our seeds' 95% t-interval
    widened by half the printed last digit (correlations, LID; for a correlation the interval
    also excludes 0), the printed digit alone for a seed-free quantity, equality for a count,
    a factor on I(W) and on 1 − I(W).
``differs``
    the paper's number lies outside that tolerance (or our value is undefined).
``consistent`` / ``not consistent``
    a bound or direction the paper states without a number holds / does not hold; for a
    direction tested over seeds, significant (Holm-adjusted one-sided p < 0.05) in the stated
    direction / in the other one.
``inconclusive``
    our seeds cannot decide: a seed test significant neither way, or a correlation interval
    that holds both the paper's value and 0.
``inconsistent across seeds``
    the per-seed correlations disagree in sign with each other or with the pooled value: the
    pooled number summarises nothing, so it is never judged as agreement.
``not comparable``
    our setup differs from the paper's where the number depends on it (LID: n not within a
    factor 2 of theirs, or another k); the row states both n and k.
``1 seed: not judged``
    the rule needs a spread across seeds and the run has one seed of a seeded quantity.
``stated``
    printed beside ours, not judged (e.g. a sample size).
``not run``
    this run has nothing to compare (the study, setup or data is not part of it); the note
    says why.

The claims page uses ``supported`` / ``not supported`` where the engine says consistent / not
consistent, and the other words as they are.

tolerances             the verdict engine: one judge for every tolerance rule
measurements           the result tables the two rules read (a preview's rows stamped) and
                       every judged quantity, measured once from them (the geometry study's
                       LID, S_inter, STS and I(W) included)
standins               what this run uses where the papers used something else
claims                 results/claims.{csv,md}: each claim, bound and verdict
comparison             the papers' printed numbers as data (config/published_values.csv), and
                       results/paper_comparison.{csv,md}: printed numbers beside ours
"""
