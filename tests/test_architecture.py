"""The package's shape (issues 25 and 37): modules by meaning that keep their private names to
themselves, short functions, layers that point one way, one workflow layer.

A newcomer finds a concern by its module name and reads any function on one screen. These checks
read the source (ast), so they hold for code added later too.
"""

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "isotropy"
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


def test_no_module_imports_another_modules_private_names():
    """A leading underscore means "this module's own": a name another module needs is public
    (no ``from isotropy.x import _name``, no ``x._name`` on an imported isotropy module), in
    the package and in the scripts."""
    found = []
    for path in [*_modules(), *sorted((ROOT / "scripts").glob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("isotropy"):
                for alias in node.names:
                    imported.add(alias.asname or alias.name)
                    if _private(alias.name):
                        found.append(
                            f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{alias.name}"
                        )
            elif isinstance(node, ast.Import):
                imported |= {
                    a.asname or a.name.split(".")[0]
                    for a in node.names
                    if a.name.startswith("isotropy")
                }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not found, "private names used outside their module:\n" + "\n".join(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


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


def test_every_result_path_is_spelled_in_isotropy_paths_only():
    allowed = PACKAGE / "paths.py"
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
    assert not found, "result paths spelled outside isotropy.paths:\n" + "\n".join(found)


# ---- import direction and cycles --------------------------------------------------------------
# The workflow layer (isotropy.workflow) and the front ends over it (the estimate, the run's
# progress lines, the audit, the debugger) import the science and data packages; those never
# import them back.
WORKFLOW_SIDE = ("isotropy.workflow", "isotropy.estimate", "isotropy.audit", "isotropy.debug")  # fmt: skip


@functools.cache
def _module_names() -> frozenset[str]:
    return frozenset(_dotted(p) for p in _modules())


def _imports(path: Path, top_level_only: bool) -> set[str]:
    """The isotropy modules a file imports (``from a import b`` names ``a.b`` when that is a
    module), at module level only or anywhere in it."""
    known = _module_names()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("isotropy")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("isotropy"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found & known


def _on_workflow_side(module: str) -> bool:
    return any(module == side or module.startswith(side + ".") for side in WORKFLOW_SIDE)


def test_science_and_data_never_import_the_workflow_layer():
    wrong = [
        f"{_dotted(path)} imports {target}"
        for path in _modules()
        if not _on_workflow_side(_dotted(path))
        for target in sorted(_imports(path, top_level_only=False))
        if _on_workflow_side(target)
    ]
    assert not wrong, "imports against the layers' direction:\n" + "\n".join(wrong)


def test_the_package_has_no_import_cycle():
    """Imports between the package's modules, at module level or deferred into a function (a
    deferred import that closes a cycle only hides it), form no cycle. A submodule importing
    its own package's ``__init__`` is not one: Python runs the ``__init__`` first."""
    graph = {_dotted(p): _imports(p, top_level_only=False) for p in _modules()}
    for module, targets in graph.items():
        # A submodule importing from its own package's __init__ re-exports leans on the
        # __init__ having run; count that edge as the re-exported module itself only.
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    cycles, state = [], {}

    def visit(module: str, stack: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                cycles.append(" -> ".join(stack[stack.index(target) :] + [target]))
            elif target not in state:
                visit(target, stack + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _delegates(tree, prefix):
    """Functions whose whole body (docstring aside) returns one call of another function with
    their own arguments, reordered or not: a layer that only passes through."""
    for name, node in _functions(tree, prefix):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if len(body) != 1 or not isinstance(body[0], ast.Return):
            continue
        call = body[0].value
        if not isinstance(call, ast.Call):
            continue
        own = {a.arg for a in node.args.args + node.args.kwonlyargs}
        passed = [*call.args, *(k.value for k in call.keywords)]
        if passed and all(
            isinstance(a, ast.Name)
            and a.id in own
            or isinstance(a, ast.Attribute)
            and isinstance(a.value, ast.Name)
            and a.value.id in own
            for a in passed
        ):
            yield name


def test_no_pass_through_layer_between_the_rules_and_the_package():
    """Issue 37: 14 one-line wrappers in common.smk over 12 one-line delegates in
    workflow/inputs.py, most only swapping the argument order. Rules call the package directly."""
    common = (ROOT / "rules" / "common.smk").read_text(encoding="utf-8")
    assert not re.findall(r"^def \w+", common, flags=re.M), "common.smk defines functions again"
    found = []
    for path in sorted((PACKAGE / "workflow").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += list(_delegates(tree, _dotted(path)))
    assert found == [], found


def test_the_delegate_check_finds_a_delegate():
    tree = ast.parse(
        "def dataset_inputs(config, dataset):\n"
        '    """The downloads."""\n'
        "    return readers.dataset_inputs(dataset, config)\n"
        "def sentence_encoder(config, wildcards):\n"
        "    return spec(config, wildcards.encoder)\n"
        "def real(config, name):\n"
        "    return outputs(source(config, name))[0]\n"
    )
    assert list(_delegates(tree, "m")) == ["m.dataset_inputs", "m.sentence_encoder"]


def _rebound(tree) -> list[str]:
    """Module-level names bound twice (a def, class or assignment after another of the same
    name): the second silently replaces the first, which merging two modules can cause."""
    seen: set[str] = set()
    twice = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
        else:
            continue
        twice += [n for n in names if n in seen and n != "__all__"]
        seen.update(names)
    return twice


def test_no_module_binds_a_top_level_name_twice():
    twice = {_dotted(p): found for p in _modules() if (found := _rebound(ast.parse(p.read_text())))}
    assert not twice, f"names bound twice at module level: {twice}"


def test_the_rebinding_check_finds_a_second_binding():
    tree = ast.parse("COLUMNS = ['a']\ndef f():\n    return COLUMNS\nCOLUMNS = ['b']\n")
    assert _rebound(tree) == ["COLUMNS"]


def test_a_main_guard_is_its_modules_last_statement():
    """Code after ``if __name__ == "__main__":`` is not defined yet when the module runs as a
    script (``python -m``): a merge that appends one module to another can put it there."""
    late = []
    for path in _modules():
        body = ast.parse(path.read_text()).body
        guards = [
            i
            for i, n in enumerate(body)
            if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)
        ]
        late += [_dotted(path) for i in guards if i != len(body) - 1]
    assert not late, f"statements after the main guard in {late}"
