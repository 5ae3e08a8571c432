"""Committed runs (docs/extending.md, "A committed run"), one :class:`.record.CommittedRun` each,
then the pages rendered from the code; their command: ``python -m isotropy.committed``."""

from __future__ import annotations

from pathlib import Path

from isotropy.committed import coverage, extensions, glue, istar_gpu, main, rajaee_cls, sensitivity
from isotropy.committed import import_graph as graph
from isotropy.committed.record import CommittedRun, Page, page_markers
from isotropy.configuration import reference

# The runs of no files: docs/<name>.md's block ``what`` rendered from the code itself.
ARCHITECTURE, CONFIGURATION = (
    CommittedRun(name, (Page(Path(f"docs/{name}.md"), parts, page_markers(what)),))
    for name, parts, what in (
        ("architecture", lambda _: [graph.graph_block()], "package graph"),
        ("configuration", lambda _: [reference.reference()], "key reference"),
    )
)
# The coverage page last: it reads the others.
REGISTRY = tuple(
    module.COMMITTED for module in (main, glue, extensions, sensitivity, rajaee_cls, istar_gpu)
) + (rajaee_cls.COMMITTED_GPU, ARCHITECTURE, CONFIGURATION, coverage.COVERAGE)
BY_NAME = {run.name: run for run in REGISTRY}
