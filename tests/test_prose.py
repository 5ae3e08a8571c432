"""Prose that cannot drift silently: what the module docstrings' first lines and
docs/architecture.md say about which module imports which is checked against the import graph.

A statement about imports takes one of three checkable forms (module names in backticks):
``A`` imports nothing; ``A`` is imported by ``B``, ``C`` … (exactly these import it); ``B``
imports ``A`` (or "``B`` imports it" in a docstring: this module). A sentence that speaks of
importing or sharing otherwise fails: make it checkable or cut it. "Plain Python", "without
torch" or "torch-free" in a first line means importing the module imports no torch. Every module
named exists. The rules of the page's "Layers" section are tests/test_architecture.py's."""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from pathlib import Path

import pytest
from tiny_workflow import imported_modules

from isotropy.committed.import_graph import dotted, file_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "isotropy"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
NAME = r"`{1,2}(?::mod:`)?~?(isotropy(?:\.\w+)*)`{1,2}"
USAGE = re.compile(
    r"\b(imports?(?! graph)|imported|used by|uses them|use them|shared by|read by)\b"
)
TORCH_FREE = re.compile(r"plain Python|without torch|torch-free|no torch")


@functools.cache
def _sources() -> dict[str, Path]:
    return {dotted(p): p for p in sorted(PACKAGE.rglob("*.py"))}


_graph = functools.cache(file_graph)  # module -> the package modules it imports anywhere


def _within(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


def importers(name: str) -> set[str]:
    """The package modules outside ``name`` that import it (or a module inside it)."""
    return {
        module
        for module in _sources()
        if not _within(module, name) and any(_within(t, name) for t in _graph()[module])
    }


def imports_of(name: str) -> set[str]:
    """The package modules outside ``name`` that ``name`` (all its modules) imports."""
    inside = [m for m in _sources() if _within(m, name)]
    return {target for module in inside for target in _graph()[module] if not _within(target, name)}


def loads_torch(module: str, seen: set[str] | None = None) -> bool:
    """Whether importing ``module`` imports torch (its module-level imports, followed through
    the package, parent packages included)."""
    seen = set() if seen is None else seen
    if module in seen:
        return False
    seen.add(module)
    parents = [".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)]
    tree = ast.parse(_source(module))
    direct = imported_modules(tree, module_level_only=True)
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
    """What is false in the page's prose."""
    problems = _names_exist(markdown)
    for sentence, row_module, in_layers in _sentences(markdown):
        found = statement_problems(sentence, row_module)
        if in_layers:  # rules checked by tests/test_architecture.py; forms above still checked
            found = [p for p in found if not p.startswith("not a checkable")]
        problems += found
    return problems


def test_the_architecture_page_is_true_and_every_name_the_docs_and_benchmarks_cite_exists():
    problems = architecture_problems(ARCHITECTURE.read_text(encoding="utf-8"))
    pages = [*sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("benchmarks/*.py"))]
    problems += [f"{p.name}: {n}" for p in pages for n in _names_exist(p.read_text())]
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
            "also by ['isotropy.rajaee_cls.cause', 'isotropy.rajaee_cls.method']",
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
        "`isotropy.paths` imports nothing. `isotropy.statistics` is imported by "
        "`isotropy.committed.coverage`, `isotropy.committed.extensions`, "
        "`isotropy.committed.glue`, `isotropy.committed.main`, `isotropy.committed.rajaee_cls`, "
        "`isotropy.extensions.results`, `isotropy.geometry.analogies`, `isotropy.reporting`, "
        "`isotropy.rajaee_cls.results`, `isotropy.sensitivity`, `isotropy.studies.rajaee_cls`, "
        "`isotropy.summaries` and "
        "`isotropy.verdicts`. `isotropy.workflow` imports `isotropy.paths`."
    )


def test_a_torch_free_claim_is_checked(monkeypatch):
    assert not loads_torch("isotropy.istar.study") and loads_torch("isotropy.finetune.training")
    monkeypatch.setattr(__import__(__name__), "_first_line", lambda path: "Training, plain Python.")
    assert docstring_problems("isotropy.finetune.training") == [
        "isotropy.finetune.training: it says it runs without torch, yet importing it imports torch"
    ]


# ---- names referenced nowhere -----------------------------------------------------------------
# A module-level name of the package (function, class, constant, alias) that no code refers to
# is dead weight a reader still has to understand. "Refers to": a name, an attribute or an
# imported name anywhere in src/, scripts/, tests/ and benchmarks/ (outside the name's own
# definition), or a word of the rules, the Snakefile, pyproject.toml or the Makefile. A name
# registered by a decorator is used by its registry. Names kept on purpose, with the reason:
UNREFERENCED_ON_PURPOSE: dict[str, str] = {}
CODE_DIRS = ("src", "scripts", "tests", "benchmarks")
WORD_FILES = ("rules/*.smk", "Snakefile", "pyproject.toml", "Makefile")


def _defined(tree: ast.Module):
    """(name, its defining statement) for every module-level binding but dunders."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not node.decorator_list and not node.name.startswith("__"):
                yield node.name, node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and not name.id.startswith("__"):
                        yield name.id, node


def _references(tree: ast.AST) -> Counter:
    """The names, attributes and imported names in ``tree``."""
    found: Counter = Counter()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            found[node.id] += 1
        elif isinstance(node, ast.Attribute):
            found[node.attr] += 1
        elif isinstance(node, ast.alias):
            found[node.name.rpartition(".")[2]] += 1
        stack.extend(ast.iter_child_nodes(node))
    return found


def unreferenced_names(root: Path = ROOT) -> list[str]:
    """``module.name`` for every module-level name of the package referred to nowhere."""
    trees = {
        path: ast.parse(path.read_text(encoding="utf-8"))
        for folder in CODE_DIRS
        for path in sorted((root / folder).rglob("*.py"))
    }
    everywhere: Counter = Counter()
    for tree in trees.values():
        everywhere.update(_references(tree))
    for pattern in WORD_FILES:
        for path in sorted(root.glob(pattern)):
            text = re.sub(r"#[^\n]*", "", path.read_text(encoding="utf-8"))
            everywhere.update(re.findall(r"[A-Za-z_]\w*", text))
    package = root / "src" / "isotropy"
    found = []
    for path, tree in trees.items():
        if not path.is_relative_to(package):
            continue
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        for name, node in _defined(tree):
            # its own definition (a recursive call, the assigned name itself) does not count
            if everywhere[name] == _references(node)[name]:
                found.append(f"{module.removesuffix('.__init__')}.{name}")
    return found


def test_every_name_of_the_package_is_referenced_somewhere():
    found = [name for name in unreferenced_names() if name not in UNREFERENCED_ON_PURPOSE]
    assert not found, "names referenced nowhere (remove them, or say why they stay):\n" + "\n".join(
        found
    )


def test_every_name_kept_on_purpose_is_still_unreferenced():
    # A kept name that is now used, or gone, leaves the list: a stale entry would excuse the
    # next unused name of that spelling.
    assert set(UNREFERENCED_ON_PURPOSE) <= set(unreferenced_names())


def test_a_planted_unused_name_is_found(tmp_path):
    for folder in (*CODE_DIRS, "rules"):
        (tmp_path / folder).mkdir()
    package = tmp_path / "src" / "isotropy"
    package.mkdir()
    (package / "paths.py").write_text(
        "RESULTS = 'results'\n"
        "orthogonal_file = str  # a leftover alias\n\n\n"
        "def run_file(name):\n    return run_file(name) if not name else RESULTS + name\n"
    )
    (tmp_path / "scripts" / "tabulate.py").write_text(
        "from isotropy import paths\n\npaths.run_file\n"
    )
    assert unreferenced_names(tmp_path) == ["isotropy.paths.orthogonal_file"]
    (tmp_path / "Snakefile").write_text("rule x:\n    output: orthogonal_file('a')  # once\n")
    assert unreferenced_names(tmp_path) == []
    (tmp_path / "scripts" / "tabulate.py").write_text("# paths.run_file\n")
    assert unreferenced_names(tmp_path) == ["isotropy.paths.run_file"]


# ---- pages the code cites exist -------------------------------------------------------------
CITED_PAGE = re.compile(r"(?<![\w/.-])((?:docs/)?[\w-]+\.md)\b")


def missing_pages(root: Path = ROOT) -> list[str]:
    """Markdown pages the package, the scripts and the rules cite that the repository lacks; a
    bare name is a page of docs/ or the root, or a file a rule writes (named in isotropy.paths)."""
    written = set(re.findall(r"[\w-]+\.md", (root / "src/isotropy/paths.py").read_text()))
    files = [
        *sorted((root / "src").rglob("*.py")),
        *sorted((root / "scripts").glob("*.py")),
        *sorted((root / "rules").glob("*.smk")),
        root / "Snakefile",
    ]
    missing = []
    for path in files:
        for page in CITED_PAGE.findall(path.read_text(encoding="utf-8")):
            places = [root / page] if "/" in page else [root / "docs" / page, root / page]
            if not any(p.is_file() for p in places) and page not in written:
                missing.append(f"{path.relative_to(root)}: {page}")
    return sorted(set(missing))


def test_every_page_the_code_cites_exists():
    # papers.md, the science brief, lives outside the repository (issue 62, item 6)
    assert not missing_pages(), "\n".join(missing_pages())


def test_a_cited_page_that_is_absent_is_found(tmp_path):
    for folder in ("src/isotropy", "scripts", "rules", "docs"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "src/isotropy/paths.py").write_text("CLAIMS = 'results/claims.md'\n")
    (tmp_path / "docs/methods.md").write_text("# Methods\n")
    (tmp_path / "Snakefile").write_text("# see docs/methods.md and methods.md; writes claims.md\n")
    (tmp_path / "rules/geometry.smk").write_text("# Geometry study (papers.md section 4)\n")
    assert missing_pages(tmp_path) == ["rules/geometry.smk: papers.md"]
