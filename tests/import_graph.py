"""The import graph of ``src/isotropy`` at the grain of files and of packages.

Every ``import`` statement counts, those deferred into functions included (a deferred import
that closes a cycle only hides it). A package is a top-level subpackage or module of
``isotropy`` (``isotropy.verdicts``, ``isotropy.costs``). Run it to print

- the package graph, one line per package with what it imports;
- arrows from a lower floor to a higher one (:data:`FLOORS`), at both grains;
- the package-level cycles (strongly connected components of more than one package);
- studies importing studies (:data:`STUDIES`), at both grains.

``python tests/import_graph.py`` prints them (``--write``: the package graph into
docs/architecture.md, too); tests/test_architecture.py asserts them.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from isotropy.io import markers, write_block

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "isotropy"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
BEGIN, END = markers("package graph", ".venv/bin/python tests/import_graph.py --write")

# Floors, lowest first: a package imports only its own floor or lower ones. Floor 0, the shared
# foundation every layer may import:
FOUNDATION = (
    "compute",
    "configuration",
    "costs",
    "intake",
    "io",
    "logs",
    "models",
    "paths",
    "provenance",
    "resume",
    "statistics",
    "trust",
)


def study_packages(package: Path = PACKAGE) -> tuple[str, ...]:
    """The studies' own science packages, found by name: a package of ``isotropy`` named as a
    study's record (``isotropy/istar/`` beside ``isotropy/studies/istar.py``), so a new study's
    package needs no line here."""
    records = (package / "studies").glob("*.py")
    return tuple(sorted(r.stem for r in records if (package / r.stem / "__init__.py").is_file()))


FLOORS: dict[str, int] = {
    **dict.fromkeys(FOUNDATION, 0),
    # the data layer: raw sources, tables, vectors (it imports no study)
    **dict.fromkeys(("sources", "readers", "embeddings", "standins"), 1),
    # the science: metrics, optimisation, fine-tuning and the studies' own packages
    **dict.fromkeys(
        ("metrics", "transforms", "optimize", "finetune", "traces", "summaries", "sensitivity"), 2
    ),
    **dict.fromkeys(study_packages(), 2),
    # figures of what the science computed
    **dict.fromkeys(("plots", "reporting"), 3),
    # the verdicts on it: they import the science, never the reverse (what both need, such as
    # intervals over seeds, lives in a neutral module: isotropy.statistics)
    "verdicts": 4,
    # what Snakemake asks while it parses
    "workflow": 5,
    # the study records over it (each study's targets, estimate, verdict inputs), the tools
    **dict.fromkeys(("studies", "estimate", "audit", "committed"), 6),
}

# Each study's own packages. What two studies share lives in a neutral package both import:
# fine-tuning, the isotropy-enhancing transforms, metrics, statistics, and the main study's
# optimisation and traces, which the extension study re-runs. The main study's own packages are
# its summaries and the sensitivity analysis; the records (isotropy.studies) are not a study.
STUDIES: dict[str, tuple[str, ...]] = {
    "main": ("summaries", "sensitivity"),
    **{name: (name,) for name in study_packages()},
}


def dotted(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in it (``from a import b`` names
    ``a.b`` when that is a module; ``from . import x`` resolved)."""
    files = {dotted(p, package): p for p in sorted(package.rglob("*.py"))}
    graph = {}
    for module, path in files.items():
        base = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    up = base.split(".")[: len(base.split(".")) - node.level + 1]
                    source = ".".join(up + ([source] if source else []))
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    found.add(sub if sub in files else source)
        graph[module] = {t for t in found if t in files and t != module}
    return graph


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(files: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """package -> the other packages its modules import."""
    graph: dict[str, set[str]] = {}
    for module, targets in files.items():
        own = package_of(module)
        graph.setdefault(own, set()).update(package_of(t) for t in targets)
    return {p: targets - {p} for p, targets in graph.items()}


def floor(name: str) -> int:
    return FLOORS.get(package_of(name) if name.startswith("isotropy.") else name, 0)


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


def graph_lines(packages: Mapping[str, Iterable[str]]) -> list[str]:
    """The package graph, one package a line (wrapped at 100 characters), by floor: ``floor
    package -> what it imports``."""
    lines = []
    for name in sorted(set(packages) - {"isotropy"}, key=lambda p: (floor(p), p)):
        head = f"{floor(name)} {name:<13} -> "
        lines += textwrap.wrap(
            ", ".join(sorted(packages[name])) or "-",
            width=100,
            initial_indent=head,
            subsequent_indent=" " * len(head),
        )
    return lines


def graph_block(packages: Mapping[str, Iterable[str]]) -> str:
    """docs/architecture.md's package graph (between :data:`BEGIN` and :data:`END`)."""
    return "```\n" + "\n".join(graph_lines(packages)) + "\n```\n"


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
    if sys.argv[1:] == ["--write"]:
        write_block(ARCHITECTURE, graph_block(package_graph(file_graph())), BEGIN, END)
    sys.stdout.write(report() + "\n")
