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
never imports them. What a run does when it starts (``onstart``) is the estimate's:
:func:`isotropy.estimate.started`.

``from isotropy import workflow`` (rules/common.smk) gives these as attributes, and beside them
the data-layer modules whose functions rules call directly, each with the configuration first:
:mod:`isotropy.paths` (every path between rules and every result, spelled once),
:mod:`isotropy.readers` (a data set's downloads and options), :mod:`isotropy.sources` (a
download's params), :mod:`isotropy.models` (a split model's wheels) and
:mod:`isotropy.standins` (what a run uses in place of the paper's data and vectors),
:mod:`isotropy.trust` (a results folder is data, never code: Snakemake's records there checked
before Snakemake reads them, its script jobs never importing from there).
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
