"""Verdicts: the papers' claims and printed numbers judged on this run's results.

published              the papers' printed numbers as data (config/published_values.csv)
tolerances             the verdict engine: one judge for every tolerance rule
measurements           every judged quantity, measured once from the result tables
geometry_measurements  the same for the geometry study (LID, S_inter, STS, I(W))
standins               what this run uses where the papers used something else
claims                 results/claims.{csv,md}: each claim, bound and verdict
comparison             results/paper_comparison.{csv,md}: printed numbers beside ours
workflow               the rules' inputs, configuration subset and table loading
"""
