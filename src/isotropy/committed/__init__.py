"""Committed runs: a finished run's files copied beside the docs with a record of their
checksums, and the pages rendered from them, one record each
(:class:`~isotropy.committed.record.CommittedRun`).

``python -m isotropy.committed check`` says which committed file fails its checksum and which
page is stale; ``write`` renders every page again from the committed files; ``copy NAME SOURCE…``
copies a finished run in, then renders its pages (docs/extending.md, "A committed run").
tests/test_committed.py runs the check for every record here.

The tools' floor: a committed run's page may read the studies' records, the verdicts and the
science; nothing imports this package.
"""

from __future__ import annotations

from isotropy.committed import (
    coverage,
    extensions,
    glue,
    istar_gpu,
    main,
    pages,
    rajaee_cls,
    sensitivity,
)

# Every committed run, in the order the command goes through them, then the pages of the code;
# the coverage page last, since it reads the others.
REGISTRY = tuple(
    module.COMMITTED for module in (main, glue, extensions, sensitivity, rajaee_cls, istar_gpu)
) + (rajaee_cls.COMMITTED_GPU, pages.ARCHITECTURE, pages.CONFIGURATION, coverage.COVERAGE)
BY_NAME = {run.name: run for run in REGISTRY}
