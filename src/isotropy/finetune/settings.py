"""The regularisers of a fine-tuning run and λ as paths show it. Plain Python, no torch (the
workflow and the estimates import it while they parse); the run's settings are the configuration's
model, :class:`isotropy.configuration.finetune.TrainingSettings`.
"""

from __future__ import annotations

import math

# The penalties of the training loss; "none", the baseline, adds none and takes λ = 0.
REGULARISERS = ("none", "istar", "cosreg")


def format_lambda(lam: float) -> str:
    """λ as it appears in paths: ``-5``, ``0.5``, ``0``."""
    text = f"{float(lam):g}"
    return "0" if text == "-0" else text


def check_run(regulariser: str, lam: float) -> None:
    """A known regulariser with a finite λ (0 for the baseline)."""
    if regulariser not in REGULARISERS:
        raise ValueError(f"unknown regulariser {regulariser!r}; expected one of {REGULARISERS}")
    if regulariser == "none" and lam != 0:
        raise ValueError(f"regulariser {regulariser!r} takes λ = 0, got {lam}")
    if not math.isfinite(lam):
        raise ValueError(f"λ must be finite, got {lam}")
