"""What Snakemake asks while it parses: configuration, runs, input functions (no torch)."""

from __future__ import annotations

from isotropy.workflow import config, inputs, targets

__all__ = ["config", "inputs", "targets"]
