"""The package's shape, as issue 25 set it: small modules, short functions, one workflow layer.

A newcomer finds a concern by its module name and reads any function on one screen. These checks
read the source (ast), so they hold for code added later too.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "isotropy"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
# Functions allowed to be longer, each with its reason.
LONG_FUNCTIONS = {
    "isotropy.istar.training.finetune": (
        "the training loop reads top to bottom as the authors' released script does (epochs, "
        "steps, penalty, checkpoint); split into helpers it would pass a dozen loop variables around"
    ),
}


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def _dotted(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def _functions(tree, prefix):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}.{node.name}", node
            yield from _functions(node, f"{prefix}.{node.name}")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}.{node.name}")


def test_no_module_is_longer_than_the_limit():
    long = {
        _dotted(p): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split by concern): {long}"


def test_no_function_is_longer_than_the_limit_but_the_stated_ones():
    long = {}
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, node in _functions(tree, _dotted(path)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES and name not in LONG_FUNCTIONS:
                long[name] = length
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_every_stated_long_function_still_exists():
    # A stale exception would let a new long function of the same name in unnoticed.
    names = set()
    for path in _modules():
        names |= {name for name, _ in _functions(ast.parse(path.read_text()), _dotted(path))}
    assert set(LONG_FUNCTIONS) <= names


def test_the_workflow_imports_one_package_module():
    imports = []
    for file in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]:
        for line in file.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*(from isotropy\b|import isotropy\b)", line):
                imports.append((file.name, line.strip()))
    assert len(imports) == 1 and imports[0][0] == "common.smk", imports


def _code_strings(path: Path):
    """String constants of a Python file, docstrings left out (prose may name a path)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    parts = set()  # the constant pieces of an f-string, yielded as the whole f-string instead
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts |= {id(v) for v in node.values}
            yield (
                node.lineno,
                "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values),
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and id(node) not in parts:
                yield node.lineno, node.value


RESULT_PATH = re.compile(r"(?<![\w/])results/[\w{}./-]+")


def test_every_result_path_is_spelled_in_workflow_paths_only():
    allowed = PACKAGE / "workflow" / "paths.py"
    found = []
    python = [p for p in _modules() if p != allowed] + sorted((ROOT / "scripts").glob("*.py"))
    for path in python:
        for lineno, value in _code_strings(path):
            # Messages may name a path in prose; a path the code opens or writes may not.
            if RESULT_PATH.fullmatch(value.strip()):
                found.append(f"{path.relative_to(ROOT)}:{lineno}: {value}")
    for file in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]:
        for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"[\"']" + RESULT_PATH.pattern, code):
                found.append(f"{file.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not found, "result paths spelled outside isotropy.workflow.paths:\n" + "\n".join(found)
