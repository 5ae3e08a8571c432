"""The package's shape: modules that keep their private names to themselves, short functions,
one workflow layer, imports that point down the floors (FLOORS) with no cycle and no study
importing another, at the grain of files and of packages, deferred imports included. The checks
read the source (ast), so they hold for code added later too."""

import ast
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from isotropy import statistics
from isotropy.committed.import_graph import (
    FLOORS,
    FOUNDATION,
    dotted,
    file_graph,
    floor,
    package_graph,
    package_of,
    study_packages,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "isotropy"
MAX_FUNCTION_LINES = 60
# Functions allowed to be longer, each with its reason.
LONG_FUNCTIONS = {
    "isotropy.finetune.training.finetune": (
        "the training loop reads top to bottom as the authors' released script does (epochs, "
        "steps, penalty, checkpoint); split into helpers it would pass a dozen loop variables "
        "around"
    ),
}


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


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
    long, names = {}, set()
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, node in _functions(tree, dotted(path)):
            names.add(name)
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES and name not in LONG_FUNCTIONS:
                long[name] = length
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
    # A stale exception would let a new long function of the same name in unnoticed.
    assert set(LONG_FUNCTIONS) <= names, sorted(set(LONG_FUNCTIONS) - names)


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


# The verdict names (statistics' upper-case strings, its trend source apart: no verdict) and the
# strings equal to one that are no verdict, each with its reason.
VERDICT_NAMES = {v for k, v in vars(statistics).items() if k.isupper() and isinstance(v, str)}
VERDICT_NAMES -= {statistics.TREND_SOURCE}
NOT_VERDICTS = {("rajaee_cls/results.py", "not run"): "what an interval over no seed says"}


def _verdict_literals(files: list[Path], root: Path = PACKAGE) -> list[str]:
    """``path:lineno: name`` of each string constant equal to a verdict name, but NOT_VERDICTS."""
    return [
        f"{_relative(path, root)}:{lineno}: {value}"
        for path in files
        for lineno, value in _code_strings(path)
        if value in VERDICT_NAMES and (_relative(path, root), value) not in NOT_VERDICTS
    ]


def test_every_verdict_name_is_spelled_in_isotropy_statistics_only(tmp_path):
    (planted := tmp_path / "planted.py").write_text('V = "consistent", f"{1} agrees", "agrees."\n')
    assert _verdict_literals([planted], tmp_path) == ["planted.py:1: consistent"]
    found = _verdict_literals([p for p in _modules() if p != PACKAGE / "statistics.py"])
    assert not found, "verdict names spelled outside isotropy.statistics:\n" + "\n".join(found)
    assert all(v in {s for _, s in _code_strings(PACKAGE / f)} for f, v in NOT_VERDICTS), "stale"


# ---- the import graph: no cycle, no arrow up a floor, no study importing another ---------------
# Each study's own packages. What two studies share lives in a neutral package both import; the
# main study's own packages are its summaries and the sensitivity analysis.
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


def test_the_package_has_no_import_cycle():
    """No cycle between modules or between packages (seven packages once looped while no pair of
    files did). A submodule importing its own package's ``__init__`` is none: Python runs the
    ``__init__`` first."""
    files = file_graph()
    graph = {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in files.items()}
    loops = cycles(graph) + cycles(package_graph(files))
    assert not loops, "import cycles:\n" + "\n".join(" ".join(loop) for loop in loops)


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
    """Rules call the package directly: no function in common.smk, no delegate in between."""
    common = (ROOT / "rules" / "common.smk").read_text(encoding="utf-8")
    assert not re.findall(r"^def \w+", common, flags=re.M), "common.smk defines functions again"
    found = []
    for path in sorted((PACKAGE / "workflow").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += list(_delegates(tree, dotted(path)))
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
    twice = {dotted(p): found for p in _modules() if (found := _rebound(ast.parse(p.read_text())))}
    assert not twice, f"names bound twice at module level: {twice}"


def test_the_rebinding_check_finds_a_second_binding():
    tree = ast.parse("COLUMNS = ['a']\ndef f():\n    return COLUMNS\nCOLUMNS = ['b']\n")
    assert _rebound(tree) == ["COLUMNS"]


def test_a_main_guard_is_its_modules_last_statement():
    """Code after ``if __name__ == "__main__":`` is not defined yet when the module runs as a
    script: a merge that appends one module to another can put it there."""
    late = []
    for path in _modules():
        body = ast.parse(path.read_text()).body[:-1]
        guards = [n for n in body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
        late += [dotted(path)] * len(guards)
    assert not late, f"statements after the main guard in {late}"


# ---- no exemptions from the formatter, the line limit and the type checker --------------------
MAX_LINE = 100
FORMATTER_PRAGMA = re.compile(r"#\s*fmt:\s*(skip|off)\b")
BARE_IGNORE = re.compile(r"#\s*type:\s*ignore(?!\[)|#\s*mypy:\s*ignore-errors")


def _code_files() -> list[Path]:
    """Every file the formatters own: the package, scripts, tests, benchmarks and the rules."""
    folders = ("src/isotropy", "scripts", "tests", "benchmarks")
    python = sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))
    return python + [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]


def _relative(path: Path, root: Path = ROOT) -> str:
    return path.relative_to(root).as_posix()


def _lines_where(files: list[Path], root: Path, found, note=lambda line: "") -> list[str]:
    """``path:lineno`` (and ``note(line)``) of every line of ``files`` where ``found(line)``."""
    return [
        f"{_relative(path, root)}:{lineno}{note(line)}"
        for path in files
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if found(line)
    ]


def _formatter_pragmas(files: list[Path], root: Path = ROOT) -> list[str]:
    return _lines_where(files, root, FORMATTER_PRAGMA.search)


def _long_lines(files: list[Path], root: Path = ROOT, limit: int = MAX_LINE) -> list[str]:
    return _lines_where(
        files, root, lambda line: len(line) > limit, lambda line: f" ({len(line)} characters)"
    )


def _mypy_exemptions(pyproject: dict, files: list[Path], root: Path = ROOT) -> list[str]:
    """An ``ignore_errors`` override's modules, and each ``# mypy: ignore-errors`` line or
    ``# type: ignore`` without an error code (which hides every error of its line)."""
    found = []
    for override in pyproject.get("tool", {}).get("mypy", {}).get("overrides", []):
        if override.get("ignore_errors"):
            modules = override["module"]
            found += [modules] if isinstance(modules, str) else modules
    return found + _lines_where(files, root, BARE_IGNORE.search)


def test_ruff_format_owns_every_line():
    found = _formatter_pragmas(_code_files())
    assert not found, "formatter pragmas (shorten with named intermediates):\n" + "\n".join(found)


def test_the_pragma_check_finds_a_planted_pragma(tmp_path):
    pragma = "# fmt" + ": skip"  # spelled in two pieces so that this file holds none
    (planted := tmp_path / "planted.py").write_text(f"x = 1\nTABLE = [1,2,3]  {pragma}\n")
    (rule := tmp_path / "planted.smk").write_text("# fmt" + ": off\nrule a:\n    input: 'x'\n")
    (clean := tmp_path / "clean.py").write_text("x = 1  # the format is not skipped here\n")
    found = _formatter_pragmas([planted, rule, clean], tmp_path)
    assert found == ["planted.py:2", "planted.smk:1"]


def test_no_line_is_over_the_limit():
    found = _long_lines(_code_files())
    assert not found, f"lines over {MAX_LINE} characters:\n" + "\n".join(found)


def test_the_line_check_finds_a_planted_long_line(tmp_path):
    (planted := tmp_path / "planted.py").write_text(f'x = 1\ny = "{"a" * 95}"\n{"z" * 100}\n')
    assert _long_lines([planted], tmp_path) == ["planted.py:2 (101 characters)"]


def test_mypy_checks_every_module():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = _mypy_exemptions(pyproject, sorted(PACKAGE.rglob("*.py")))
    assert not found, "modules or lines mypy does not check:\n" + "\n".join(found)


def test_the_mypy_check_finds_planted_exemptions(tmp_path):
    (package := tmp_path / "src" / "isotropy").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (whole := package / "whole.py").write_text("# mypy" + ": ignore-errors\nx: int = 'a'\n")
    (bare := package / "bare.py").write_text("x: int = 'a'  # type" + ": ignore\n")
    (coded := package / "coded.py").write_text("x: int = 'a'  # type" + ": ignore[assignment]\n")
    pyproject = tomllib.loads(
        '[[tool.mypy.overrides]]\nmodule = ["isotropy.coded"]\nignore_errors = true\n'
        '[[tool.mypy.overrides]]\nmodule = "isotropy.whole"\ndisallow_untyped_defs = true\n'
    )
    found = _mypy_exemptions(pyproject, [bare, coded, whole], tmp_path)
    assert found == ["isotropy.coded", "src/isotropy/bare.py:1", "src/isotropy/whole.py:1"]


def test_no_import_goes_from_a_lower_floor_to_a_higher_one():
    files = file_graph()
    wrong = upward(package_graph(files)) + upward(files)
    assert not wrong, "imports up a floor (FLOORS):\n" + "\n".join(wrong)


def test_every_package_has_a_floor():
    """A new package is placed on a floor on purpose (FLOORS), not by default."""
    named = set(FLOORS) | set(FOUNDATION)
    packages = set(package_graph(file_graph())) - {"isotropy"}
    assert packages <= named, f"packages on no floor: {sorted(packages - named)}"


def _planted_package(tmp_path: Path) -> Path:
    """A planted offender: two packages and a module of a third, no pair of files in a loop, the
    packages in one (``b.late`` imports ``a`` in a function, ``a`` imports ``b.early``)."""
    root = tmp_path / "planted"
    for folder in (root, root / "a", root / "b"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (root / "a" / "core.py").write_text("from planted.b import early\n")
    (root / "b" / "early.py").write_text("VALUE = 1\n")
    (root / "b" / "late.py").write_text("def f():\n    from planted.a import core\n")
    (root / "c.py").write_text("from planted.b import late\n")
    return root


def test_the_package_checks_find_a_planted_cycle(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(tmp_path)  # importable, as the package is
    files = file_graph(_planted_package(tmp_path))
    assert files["planted.b.late"] == {"planted.a.core"}  # the deferred import is seen
    assert cycles(files) == []  # no two files loop
    assert cycles(package_graph(files)) == [["a", "b"]]


def test_no_study_imports_another_study():
    wrong = cross_study(file_graph())
    assert not wrong, "a study importing another (move what they share out):\n" + "\n".join(wrong)


def test_the_layer_and_study_checks_find_planted_imports():
    """Planted offenders: the data layer importing a study and the verdicts, a science module
    importing the verdicts, a study importing another study's module (and, allowed, the neutral
    fine-tuning)."""
    files = {
        "isotropy.readers.planted": {"isotropy.istar.study", "isotropy.verdicts.tolerances"},
        "isotropy.summaries.planted": {"isotropy.verdicts.tolerances"},
        "isotropy.istar.planted": {"isotropy.finetune.training", "isotropy.geometry.sts"},
    }
    assert upward(files) == [
        "isotropy.readers.planted (1) -> isotropy.istar.study (2)",
        "isotropy.readers.planted (1) -> isotropy.verdicts.tolerances (4)",
        "isotropy.summaries.planted (2) -> isotropy.verdicts.tolerances (4)",
    ]
    assert cross_study(files) == [
        "isotropy.istar.planted (istar) -> isotropy.geometry.sts (geometry)"
    ]
