"""Pages generated from the code rather than from a run: the package graph of
docs/architecture.md, the configuration's key reference (docs/configuration.md) and its JSON
schema. Each is a :class:`~isotropy.committed.record.CommittedRun` without a checksum record,
written and checked by the one command with the runs' pages."""

from __future__ import annotations

from pathlib import Path

from isotropy.committed import import_graph as graph
from isotropy.committed.record import CommittedRun, Page, page_markers
from isotropy.configuration import reference

ARCHITECTURE = CommittedRun(
    name="architecture",
    records=(),
    pages=(
        Page(
            Path("docs/architecture.md"),
            lambda root: graph.graph_block(graph.package_graph(graph.file_graph())),
            page_markers("package graph"),
        ),
    ),
)
CONFIGURATION = CommittedRun(
    name="configuration",
    records=(),
    pages=(
        Page(
            Path("docs/configuration.md"),
            lambda root: reference.reference(),
            page_markers("key reference"),
        ),
        Page(Path("schemas/config.schema.yaml"), lambda root: reference.json_schema()),
    ),
)
