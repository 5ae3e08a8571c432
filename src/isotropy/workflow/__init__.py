"""What Snakemake asks while it parses: the configuration, the optimisation studies' runs and
the rules' input functions (plain Python, no torch)."""

from __future__ import annotations

from isotropy.workflow import config, inputs, targets

__all__ = ["config", "inputs", "targets"]
