"""Figures: one function per figure, each reading stored results only (never retraining).

Submodules by study: ``main`` (Figures 2-4 and the sensitivity study), ``istar`` (Figures 5-7
and the I-STAR estimator's figures), ``geometry``, ``rajaee_cls``, ``extensions`` (one figure
per question of the extension study); ``checks``: the helpers they share and the one saver
(:func:`isotropy.plots.checks.save_figure`), which runs the checks the tests register.
"""
