"""The import graph of ``src/isotropy`` at the grain of files and of packages.

Every ``import`` statement counts, those deferred into functions included (a deferred import
that closes a cycle only hides it). A package is a top-level subpackage or module of
``isotropy`` (``isotropy.verdicts``, ``isotropy.costs``). Run it to print

- the package graph, one line per package with what it imports;
- arrows from a lower floor to a higher one (:data:`FLOORS`), at both grains;
- the package-level cycles (strongly connected components of more than one package);
- studies importing studies (:data:`STUDIES`), at both grains.

``python tests/import_graph.py`` prints them; tests/test_architecture.py asserts them. The graph
itself, its floors and docs/architecture.md's drawing of it are
:mod:`isotropy.committed.import_graph`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from isotropy.committed.import_graph import (
    PACKAGE,
    file_graph,
    floor,
    graph_lines,
    package_graph,
    package_of,
    study_packages,
)

# Each study's own packages. What two studies share lives in a neutral package both import:
# fine-tuning, the isotropy-enhancing transforms, metrics, statistics, and the main study's
# optimisation and traces, which the extension study re-runs. The main study's own packages are
# its summaries and the sensitivity analysis; the records (isotropy.studies) are not a study.
STUDIES: dict[str, tuple[str, ...]] = {
    "main": ("summaries", "sensitivity"),
    **{name: (name,) for name in study_packages()},
}


def upward(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """``a (floor) -> b (floor)`` for every arrow from a lower floor to a higher one."""
    return [
        f"{a} ({floor(a)}) -> {b} ({floor(b)})"
        for a in sorted(graph)
        for b in sorted(graph[a])
        if floor(a) < floor(b)
    ]


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted."""
    nodes = sorted(set(graph).union(*map(set, graph.values())))
    index = {node: i for i, node in enumerate(nodes)}
    arrows = [(index[a], index[b]) for a in graph for b in graph[a]]
    rows, columns = zip(*arrows) if arrows else ((), ())
    matrix = csr_matrix((np.ones(len(arrows)), (rows, columns)), shape=(len(nodes),) * 2)
    _, labels = connected_components(matrix, directed=True, connection="strong")
    components: dict[int, list[str]] = {}
    for node, label in zip(nodes, labels):
        components.setdefault(label, []).append(node)
    return sorted(c for c in components.values() if len(c) > 1)


def study_of(name: str) -> str | None:
    package = package_of(name) if name.startswith("isotropy.") else name
    return next((s for s, own in STUDIES.items() if package in own), None)


def cross_study(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """``a (study) -> b (other study)`` for every arrow between two studies' code."""
    return [
        f"{a} ({study}) -> {b} ({other})"
        for a in sorted(graph)
        if (study := study_of(a)) is not None
        for b in sorted(graph[a])
        if (other := study_of(b)) not in (None, study)
    ]


def report(package: Path = PACKAGE) -> str:
    files = file_graph(package)
    packages = package_graph(files)
    lines = ["package graph (floor package -> what it imports):"]
    lines += [f"  {line}" for line in graph_lines(packages)]
    for grain, graph in (("package", packages), ("file", files)):
        up, across = upward(graph), cross_study(graph)
        lines.append(f"{grain} graph: {len(up)} arrows from a lower floor to a higher one")
        lines += [f"  {arrow}" for arrow in up]
        lines.append(f"{grain} graph: {len(across)} arrows from a study to another")
        lines += [f"  {arrow}" for arrow in across]
    loops = cycles(packages)
    lines.append(f"package cycles: {len(loops)}")
    lines += [f"  {' '.join(loop)}" for loop in loops]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(report() + "\n")
