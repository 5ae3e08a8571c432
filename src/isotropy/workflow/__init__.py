"""What Snakemake asks while it parses: the configuration (:mod:`~isotropy.workflow.config`,
the one loader, its schema and cross-checks), the direct-optimisation studies' runs
(:mod:`~isotropy.workflow.targets`) and the rules' input functions
(:mod:`~isotropy.workflow.inputs`). It imports the science and data packages, never the other
way round; the studies' records (:mod:`isotropy.studies`) sit above it.
"""

from __future__ import annotations

from isotropy.workflow import config, inputs, targets

__all__ = ["config", "inputs", "targets"]
