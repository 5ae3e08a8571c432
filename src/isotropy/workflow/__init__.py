"""What Snakemake asks while it parses: configuration, targets and input functions. The
workflow layer: it imports the science and data packages, never the
other way round (tests/test_architecture.py).

- :mod:`~isotropy.workflow.config`: :func:`~isotropy.workflow.config.load_config` (the one
  loader of the Snakefile, ``isotropy.estimate`` and the audit), schema validation and every
  cross-check, each problem in one sentence;
- :mod:`~isotropy.workflow.targets`: each study's runs, settings and final files;
- :mod:`~isotropy.workflow.inputs`: the input functions the rules call, and what the claims,
  the paper comparison and the report read.

The studies' records (:mod:`isotropy.studies`) sit above this layer: they import it, it
never imports them. ``from isotropy import workflow`` (rules/common.smk, the rules' one import)
gives these modules as attributes, and beside them the data-layer modules whose functions rules
call directly, each with the configuration first; nothing study-specific.
"""

from __future__ import annotations

from isotropy import models, paths, readers, sources, standins, trust
from isotropy.workflow import config, inputs, targets

__all__ = [
    "config",
    "inputs",
    "models",
    "paths",
    "readers",
    "sources",
    "standins",
    "targets",
    "trust",
]
