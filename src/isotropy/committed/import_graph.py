"""The package graph of docs/architecture.md: which package of ``isotropy`` (a top-level
subpackage or module) imports which, deferred imports too, each on its floor (:data:`FLOORS`)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1]

# Floors, lowest first: a package imports only its own floor or lower ones. Floor 0, the shared
# foundation every layer may import:
FOUNDATION: tuple[str, ...] = ("compute", "configuration", "costs", "intake", "io", "logs")
FOUNDATION += ("models", "paths", "provenance", "resume", "statistics", "trust")


def study_packages(package: Path = PACKAGE) -> tuple[str, ...]:
    """The packages named as a study's record (``isotropy/istar/`` beside
    ``isotropy/studies/istar.py``), so that a new study's package needs no line here."""
    records = (package / "studies").glob("*.py")
    return tuple(sorted(r.stem for r in records if (package / r.stem / "__init__.py").is_file()))


SCIENCE = ("metrics", "transforms", "optimize", "finetune", "traces", "summaries", "sensitivity")
LAYERS = (  # by floor, lowest first
    FOUNDATION,
    ("sources", "readers", "embeddings", "standins"),  # the data layer: it imports no study
    (*SCIENCE, *study_packages(), "<study>"),  # the science, the studies' own packages too
    ("plots", "reporting"),  # figures of what the science computed
    ("verdicts",),  # the verdicts on it, which the science never imports
    ("workflow",),  # what Snakemake asks while it parses
    ("studies", "estimate", "audit", "committed"),  # the study records over it, the tools
)
FLOORS = {name: floor for floor, names in enumerate(LAYERS) for name in names}


def dotted(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in it, deferred imports too (grimp,
    the graph behind import-linter; ``package`` must be importable)."""
    graph = grimp.build_graph(package.name, cache_dir=None)
    return {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}


def package_of(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def package_graph(files: Mapping[str, set[str]], node: Mapping = {}) -> dict[str, set[str]]:
    """package -> the other packages its modules import (a package in ``node`` by its node)."""
    graph: dict[str, set[str]] = {}
    for module, targets in files.items():
        name, *imported = (node.get(p, p) for p in map(package_of, (module, *targets)))
        graph.setdefault(name, set()).update(imported)
    return {p: targets - {p} for p, targets in graph.items()}


def floor(name: str) -> int:
    return FLOORS.get(package_of(name) if name.startswith("isotropy.") else name, 0)


def graph_block(package: Path = PACKAGE) -> str:
    """docs/architecture.md's package graph, by floor: ``floor package -> what it imports``;
    every study's package is one node, ``<study>``, which a new study leaves as it is."""
    node = dict.fromkeys(study_packages(package), "<study>")
    merged, lines = package_graph(file_graph(package), node), []
    for name in sorted(set(merged) - {"isotropy"}, key=lambda p: (floor(p), p)):
        head = f"{floor(name)} {name:<13} -> "
        text = ", ".join(sorted(merged[name])) or "-"
        lines += textwrap.wrap(text, 100, initial_indent=head, subsequent_indent=" " * len(head))
    return "```\n" + "\n".join(lines) + "\n```\n"
