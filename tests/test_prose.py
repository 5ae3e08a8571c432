"""Prose that cannot drift silently (issue 62, item 6): what the module docstrings' first lines
and docs/architecture.md say about which module uses which is checked against the import graph.

A statement about imports must take one of three checkable forms (module names in backticks):

- ``A`` imports nothing                 A imports no module of the package (outside itself);
- ``A`` is imported by ``B``, ``C`` …   exactly these import A: every importer lies in one of
                                        them, and each of them holds an importer;
- ``B`` imports ``A`` (or ``B`` imports it, in a docstring: this module).

A sentence that speaks of importing or sharing without one of these forms fails, so it is either
made checkable or cut. "Plain Python", "without torch" or "torch-free" in a first line is checked
as: torch is imported nowhere in what the module imports at import time. Every module a first
line or the page names exists. The page's section "Layers and the rules that keep them" states
rules that tests/test_architecture.py checks by reading the source; the statements there are
checked when they take a form above, and not required to.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "isotropy"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
NAME = r"`{1,2}(?::mod:`)?~?(isotropy(?:\.\w+)*)`{1,2}"
USAGE = re.compile(
    r"\b(imports?(?! graph)|imported|used by|uses them|use them|shared by|read by)\b"
)
TORCH_FREE = re.compile(r"plain Python|without torch|torch-free|no torch")


def _dotted(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


@functools.cache
def _sources() -> dict[str, Path]:
    return {_dotted(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _imports(module: str, top_level_only: bool = False) -> frozenset[str]:
    """What ``module`` imports: package modules (``from a import b`` names ``a.b`` when that is
    a module) and third-party top-level names, anywhere in it or at module level only."""
    tree = ast.parse(_sources()[module].read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in _sources() else node.module)
    return frozenset(found)


def _within(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


def importers(name: str) -> set[str]:
    """The package modules outside ``name`` that import it (or a module inside it)."""
    return {
        module
        for module in _sources()
        if not _within(module, name) and any(_within(t, name) for t in _imports(module))
    }


def imports_of(name: str) -> set[str]:
    """The package modules outside ``name`` that ``name`` (all its modules) imports."""
    inside = [m for m in _sources() if _within(m, name)]
    return {
        target
        for module in inside
        for target in _imports(module)
        if target in _sources() and not _within(target, name)
    }


def loads_torch(module: str, seen: set[str] | None = None) -> bool:
    """Whether importing ``module`` imports torch (its module-level imports, followed through
    the package, parent packages included)."""
    seen = set() if seen is None else seen
    if module in seen:
        return False
    seen.add(module)
    parents = [".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)]
    direct = _imports(module, top_level_only=True)
    if any(t.split(".")[0] in ("torch", "transformers", "sentence_transformers") for t in direct):
        return True
    following = [t for t in direct if t in _sources()] + [p for p in parents if p in _sources()]
    return any(loads_torch(t, seen) for t in following)


def statement_problems(text: str, subject: str | None) -> list[str]:
    """What is false or uncheckable in one sentence about modules; ``subject`` is the module
    the sentence is about when it names none before "imported by" (a docstring's module, a
    table row's first module)."""
    problems, checked = [], False
    for name in re.findall(NAME + r",? which imports nothing|" + NAME + r" imports nothing", text):
        module = next(n for n in name if n)
        checked = True
        if found := imports_of(module):
            problems.append(f"{module} imports nothing, yet it imports {sorted(found)}")
    for match in re.finditer(r"imported by ((?:" + NAME + r"(?:,?\s+and\s+|,\s+|))+)", text):
        before = re.findall(NAME, text[: match.start()])
        module = before[-1] if before else subject
        named = re.findall(NAME, match.group(1))
        checked = True
        if module is None:
            problems.append(f"{text!r}: imported by whom? it names no module before")
            continue
        actual = importers(module)
        stray = sorted(m for m in actual if not any(_within(m, n) for n in named))
        idle = [n for n in named if not any(_within(m, n) for m in actual)]
        if stray or idle:
            problems.append(
                f"{module} is said to be imported by {named}: also by {stray}, not by {idle}"
            )
    for match in re.finditer(NAME + r" imports (?:it\b|" + NAME + ")", text):
        user, used = match.group(1), match.group(2) or subject
        checked = True
        if used is None or not any(_within(t, used) for t in imports_of(user) | {user}):
            problems.append(f"{user} is said to import {used}; it does not")
    if USAGE.search(text) and not checked:
        problems.append(f"not a checkable statement about imports (make it one, or cut it): {text}")
    return problems


def _first_line(path: Path) -> str:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    return (docstring or "").strip().splitlines()[0] if docstring else ""


def _names_exist(text: str) -> list[str]:
    missing = []
    for name in re.findall(NAME, text):
        module, _, attribute = name.rpartition(".")
        if name in _sources() or (
            module in _sources()
            and re.search(rf"^(def|class) {attribute}\b|^{attribute}\b", _source(module), re.M)
        ):
            continue
        missing.append(f"{name} is no module (or name of one) of the package")
    return missing


def _source(module: str) -> str:
    return _sources()[module].read_text(encoding="utf-8")


def docstring_problems(module: str) -> list[str]:
    line = _first_line(_sources()[module])
    problems = _names_exist(line)
    if USAGE.search(line):
        problems += statement_problems(line, module)
    if TORCH_FREE.search(line) and loads_torch(module):
        problems.append("it says it runs without torch, yet importing it imports torch")
    return [f"{module}: {p}" for p in problems]


def test_every_module_docstring_first_line_is_true_of_the_import_graph():
    problems = [p for module in sorted(_sources()) for p in docstring_problems(module)]
    assert not problems, "\n".join(problems)


def _blocks(markdown: str):
    """(paragraph or table row, its section): a paragraph's or a bullet's lines joined."""
    section, block = "", []
    for line in [*markdown.splitlines(), ""]:
        starts = line.startswith(("#", "|", "- ", "```")) or not line.strip()
        if block and starts:
            yield " ".join(block), section
            block = []
        if line.startswith("## "):
            section = line
        if line.startswith("|"):
            yield line, section
        elif line.strip() and not line.startswith("#"):
            block.append(line.strip())


def _sentences(markdown: str):
    """(sentence, the module its table row is about, whether it is one of the Layers section's
    rules: its text, not its table of modules)."""
    for block, section in _blocks(markdown):
        row_module = None
        if block.startswith("| `isotropy"):
            row_module = re.findall(NAME, block.split("|")[1])[0]
        for sentence in re.split(r"(?<=[.;:])\s+|\|", block):
            if sentence.strip():
                rule = section.startswith("## Layers") and not block.startswith("|")
                yield sentence, row_module, rule


def architecture_problems(markdown: str) -> list[str]:
    problems = _names_exist(markdown)
    for sentence, row_module, in_layers in _sentences(markdown):
        found = statement_problems(sentence, row_module)
        if in_layers:  # rules checked by tests/test_architecture.py; forms above still checked
            found = [p for p in found if not p.startswith("not a checkable")]
        problems += found
    return problems


def test_every_statement_of_the_architecture_page_about_imports_is_true():
    problems = architecture_problems(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # docs/architecture.md:74 before: the transforms' "one study that uses them"
        (
            "the transforms are in `isotropy.geometry.sts`, the one study that uses them",
            "not a checkable statement",
        ),
        (
            "the transforms are in `isotropy.transforms`, imported by `isotropy.geometry`",
            "also by ['isotropy.rajaee_cls.method']",
        ),
        ("`isotropy.paths` is imported by `isotropy.plots`", "not by ['isotropy.plots']"),
        ("`isotropy.workflow` imports nothing", "isotropy.workflow imports nothing, yet"),
        ("`isotropy.paths` imports `isotropy.io`", "isotropy.paths is said to import isotropy.io"),
        ("see `isotropy.no_such_module`", "isotropy.no_such_module is no module"),
    ],
)
def test_a_planted_false_statement_fails(text, expected):
    problems = architecture_problems(text)
    assert any(expected in p for p in problems), problems


def test_true_statements_pass():
    assert not architecture_problems(
        "`isotropy.paths` imports nothing. `isotropy.published` is imported by "
        "`isotropy.summaries` and `isotropy.verdicts`. `isotropy.workflow` imports "
        "`isotropy.paths`."
    )


def test_a_torch_free_claim_is_checked(monkeypatch):
    assert not loads_torch("isotropy.istar.study") and loads_torch("isotropy.finetune.training")
    monkeypatch.setattr(__import__(__name__), "_first_line", lambda path: "Training, plain Python.")
    assert docstring_problems("isotropy.finetune.training") == [
        "isotropy.finetune.training: it says it runs without torch, yet importing it imports torch"
    ]
