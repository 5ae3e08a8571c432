"""What Snakemake asks while it parses: configuration, targets, input functions and paths.

- :mod:`~isotropy.workflow.config`: :func:`~isotropy.workflow.config.load_config` (the one
  loader of the Snakefile, ``isotropy.estimate`` and the audit), schema validation and every
  cross-check, each problem in one sentence;
- :mod:`~isotropy.workflow.targets`: each study's runs, settings and final files;
- :mod:`~isotropy.workflow.inputs`: the input functions the rules call;
- :mod:`~isotropy.workflow.verdict_inputs`: what the claims, the paper comparison and the report
  read;
- :mod:`~isotropy.workflow.paths`: every path between rules and every result, spelled once,
  with ``logs()`` and ``benchmarks()``;
- :mod:`~isotropy.workflow.run`: what a run does when it starts (``onstart``): its effective
  configuration recorded, the whole run's progress printed after every job.

``from isotropy import workflow`` (rules/common.smk) gives all six as attributes. They are
imported when first named, not here: science modules read :mod:`~isotropy.workflow.paths` (the
download layout), and importing the parse-time checks with it would import those science
modules back, an import cycle.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["config", "inputs", "paths", "run", "targets", "verdict_inputs"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
