"""Figures: one function per figure, each reading stored results only (never retraining); one
module per study, and ``checks``, the shared helpers and the one saver
(:func:`isotropy.plots.checks.save_figure`)."""
