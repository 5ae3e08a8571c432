"""The per-rule conda environments (envs/*.yaml): pinned as pyproject.toml pins, named by every
rule, complete for the scripts they run (what each script imports, through the isotropy code it
reaches), and their post-deploy script run for real in a throwaway virtual environment. conda
itself cannot be installed here: nothing is solved or created."""

from __future__ import annotations

import ast
import importlib.metadata as md
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from tiny_workflow import imported_modules, rule_bodies, run_captured, unconditional

ROOT = Path(__file__).resolve().parents[1]
ENVS = ROOT / "envs"
FAMILIES = ("data", "torch", "plots")

# conda-forge names that differ from the PyPI distribution they package.
CONDA_TO_PYPI = {"pytorch": "torch", "matplotlib-base": "matplotlib", "seaborn-base": "seaborn"}
# conda packages with no PyPI pin to agree with: the interpreter, pip, the CUDA runtime.
CONDA_ONLY = {"python", "pip", "cuda-version"}
# Modules the scripts may import without their environment installing them: Snakemake puts
# its own package on the script's sys.path, and the post-deploy script installs isotropy.
PROVIDED = {"snakemake", "isotropy"}

CONDA_SPEC = re.compile(
    r"^(?P<name>[A-Za-z0-9_.\-]+)(?:\s*(?P<op>==|=)\s*(?P<version>[^=\s]+)(?:=(?P<build>\S+))?)?$"
)


def pyproject_pins() -> dict[str, str]:
    """Exact pins of pyproject.toml (all groups), by canonical distribution name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for group in project.get("optional-dependencies", {}).values():
        requirements.extend(group)
    pins = {}
    for text in requirements:
        req = Requirement(text)
        (spec,) = req.specifier  # every dependency is pinned with exactly one ==
        assert spec.operator == "==", f"pyproject.toml: {text} is not an exact pin"
        pins[canonicalize_name(req.name)] = spec.version
    return pins


def load_env(family: str) -> dict:
    return yaml.safe_load((ENVS / f"{family}.yaml").read_text())


def env_packages(env: dict) -> tuple[dict[str, tuple[str, str | None]], list[str]]:
    """({conda name: (version, build)}, [pip requirement strings]) of one environment file."""
    conda, pip = {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.extend(dep["pip"])
            continue
        match = CONDA_SPEC.match(dep.strip())
        assert match, f"cannot parse conda dependency {dep!r}"
        conda[match["name"].lower()] = (match["version"], match["build"])
    return conda, pip


def env_distributions(family: str) -> set[str]:
    """Canonical PyPI names of the distributions an environment file installs directly."""
    conda, pip = env_packages(load_env(family))
    names = {canonicalize_name(CONDA_TO_PYPI.get(n, n)) for n in conda if n not in CONDA_ONLY}
    names |= {canonicalize_name(Requirement(p).name) for p in pip}
    return names


def with_dependencies(names: set[str]) -> set[str]:
    """``names`` plus everything they require (unconditional requirements, recursively), read
    from the metadata of the distributions installed here (the same pinned versions)."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return seen


# --- the rules ------------------------------------------------------------------------------


def parse_rules() -> dict[str, dict]:
    """Every rule of rules/*.smk: {name: {file, conda, script, action}} from its directives, each
    value on the directive's line or the next (snakefmt style)."""
    directive = re.compile(r"^    (conda|script|shell|run|notebook|wrapper):\s*(\S.*)$", re.M)
    rules = {}
    for name, (file, body) in rule_bodies().items():
        found = {key: value.strip("\"',") for key, value in directive.findall(body)}
        rules[name] = dict(file=file, conda=found.get("conda"), script=found.get("script"))
        rules[name]["action"] = bool(found)
    return rules


RULES = parse_rules()
RULES_WITH_ACTION = sorted(name for name, rule in RULES.items() if rule["action"])


def test_one_conda_forge_environment_file_per_family_and_torch_built_for_cuda():
    assert sorted(p.stem for p in ENVS.glob("*.yaml")) == sorted(FAMILIES)
    for family in FAMILIES:
        env = load_env(family)
        assert env["channels"][0] == "conda-forge", f"{family}: conda-forge must come first"
        assert "defaults" not in env["channels"], f"{family}: the defaults channel is not used"
    conda, _ = env_packages(load_env("torch"))
    assert conda["pytorch"][1] == "cuda*", "envs/torch.yaml must select a CUDA build of pytorch"
    assert conda["cuda-version"][0]


@pytest.mark.parametrize("family", FAMILIES)
def test_environment_versions_equal_pyproject_pins(family):
    pins = pyproject_pins()
    conda, pip = env_packages(load_env(family))
    requires_python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "requires-python"
    ]
    python = conda["python"][0]
    assert python and Requirement(f"x{requires_python}").specifier.contains(python + ".0"), (
        f"{family}: python={python} is outside requires-python {requires_python}"
    )
    for name, (version, _build) in conda.items():
        if name == "pip":
            continue
        assert version, f"{family}: {name} has no pinned version"
        if name in CONDA_ONLY:
            continue
        pypi = canonicalize_name(CONDA_TO_PYPI.get(name, name))
        assert pypi in pins, f"{family}: {name} is not a pinned dependency in pyproject.toml"
        assert version == pins[pypi], (
            f"{family}: {name}={version} but pyproject.toml pins {pypi}=={pins[pypi]}"
        )
    for text in pip:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        (spec,) = req.specifier
        assert spec.operator == "==", f"{family}: pip entry {text} is not an exact pin"
        assert pins.get(name) == spec.version, (
            f"{family}: pip {text} but pyproject.toml pins {name}=={pins.get(name)}"
        )


def test_rules_found():
    # Guards the reader below: the workflow has rules in every family.
    assert len(RULES_WITH_ACTION) >= 5, f"found only {RULES_WITH_ACTION} in rules/*.smk"


@pytest.mark.parametrize("rule", RULES_WITH_ACTION)
def test_every_rule_names_an_existing_family_environment(rule):
    conda = RULES[rule]["conda"]
    assert conda, f"rule {rule} ({RULES[rule]['file']}) has no conda: directive"
    path = (ROOT / "rules" / conda).resolve()
    assert path.parent == ENVS and path.stem in FAMILIES and path.is_file(), (
        f"rule {rule} names {conda}; expected ../envs/<{'|'.join(FAMILIES)}>.yaml"
    )


# --- what the scripts import ---------------------------------------------------------------


def _isotropy_module_file(name: str) -> Path | None:
    parts = name.split(".")
    base = ROOT / "src" / Path(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


class _Module:
    """What one isotropy module needs: on import, and per top-level function or class."""

    def __init__(self, name: str, path: Path):
        self.name = name
        tree = ast.parse(path.read_text())
        self.on_import = imported_modules(tree, module_level_only=True)
        # Local names bound to isotropy modules or to their members, from any import.
        self.aliases: dict[str, tuple[str, str | None]] = {}
        for node in unconditional(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("isotropy."):
                        self.aliases[a.asname or a.name] = (a.name, None)
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.split(".")[0] == "isotropy"
            ):
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    target = (sub, None) if _isotropy_module_file(sub) else (node.module, a.name)
                    self.aliases[a.asname or a.name] = target
        definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        self.defs: dict[str, ast.AST] = {n.name: n for n in tree.body if isinstance(n, definitions)}
        # What runs on import, function and class bodies excepted.
        self.top_level_code = ast.Module(
            body=[n for n in tree.body if not isinstance(n, definitions)], type_ignores=[]
        )

    def uses(self, node: ast.AST) -> set[tuple[str, str | None]]:
        """(module, member) pairs a piece of code refers to: own top-level definitions, and
        isotropy modules or members reached through the module's aliases."""
        found: set[tuple[str, str | None]] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                if sub.id in self.defs:
                    found.add((self.name, sub.id))
                elif sub.id in self.aliases:
                    found.add(self.aliases[sub.id])
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                module, member = self.aliases.get(sub.value.id, (None, "?"))
                if module is not None and member is None:
                    found.add((module, sub.attr))
        return found


def third_partyimported_modules(script: Path) -> set[str]:
    """Top-level third-party modules a script needs to run: everything the script imports,
    what the isotropy modules it loads import on import, and the imports inside the isotropy
    functions and classes it reaches (following calls from function to function)."""
    modules: dict[str, _Module] = {}

    def module(name: str) -> _Module | None:
        if name not in modules:
            path = _isotropy_module_file(name)
            modules[name] = _Module(name, path) if path else None
        return modules[name]

    script_tree = ast.parse(script.read_text())
    script_module = _Module("__script__", script)
    raw = imported_modules(script_tree, module_level_only=False)
    todo = list(script_module.uses(script_tree)) + [
        (n, None) for n in raw if n.startswith("isotropy")
    ]
    seen: set[tuple[str, str | None]] = set()
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        name, member = item
        mod = module(name)
        if mod is None:
            continue
        parts = name.split(".")
        for k in range(1, len(parts)):  # importing a.b.c runs a and a.b first
            todo.append((".".join(parts[:k]), None))
        if member is None:
            raw |= mod.on_import
            todo.extend(mod.uses(mod.top_level_code))
        elif member in mod.defs:
            todo.append((name, None))
            raw |= imported_modules(mod.defs[member], module_level_only=False)
            todo.extend(mod.uses(mod.defs[member]))
        elif member in mod.aliases:  # re-exported name
            todo.append(mod.aliases[member])
    needed = {n.split(".")[0] for n in raw}
    provided = PROVIDED | {"__future__", "__main__"}
    return {top for top in needed if top not in sys.stdlib_module_names} - provided


SCRIPT_RULES = sorted(
    name for name in RULES_WITH_ACTION if RULES[name]["script"] and RULES[name]["conda"]
)


@pytest.mark.parametrize("rule", SCRIPT_RULES)
def test_environment_provides_what_the_rule_scriptimported_modules(rule):
    script = (ROOT / "rules" / RULES[rule]["script"]).resolve()
    assert script.is_file(), f"rule {rule}: script {script} not found"
    family = Path(RULES[rule]["conda"]).stem
    available = with_dependencies(env_distributions(family))
    module_to_dists = md.packages_distributions()
    missing = []
    for module in sorted(third_partyimported_modules(script)):
        dists = {canonicalize_name(d) for d in module_to_dists.get(module, [])}
        assert dists, (
            f"rule {rule}: {script.name} imports {module}, which no installed distribution provides"
        )
        if not dists & available:
            missing.append(f"{module} (from {', '.join(sorted(dists))})")
    assert not missing, (
        f"rule {rule} runs {script.name} in envs/{family}.yaml, which lacks: {', '.join(missing)}"
    )


# --- the post-deploy script, for real ------------------------------------------------------


def test_post_deploy_scripts_are_one_script():
    """Every family's post-deploy script is the one the slow test below runs (a symlink to it),
    not a copy that may drift."""
    tested = (ENVS / "torch.post-deploy.sh").resolve(strict=True)
    assert os.access(tested, os.X_OK), f"{tested} is not executable"
    for family in FAMILIES:
        script = ENVS / f"{family}.post-deploy.sh"
        assert script.resolve(strict=True) == tested, (
            f"{script.name} is not envs/torch.post-deploy.sh: make it a symlink to that script "
            f"(ln -sf torch.post-deploy.sh envs/{family}.post-deploy.sh) so every environment runs "
            "the tested one"
        )


@pytest.mark.slow
def test_post_deploy_installs_the_project_package(tmp_path):
    """Snakemake runs envs/<family>.post-deploy.sh inside the new environment from the
    working directory; here a bare virtual environment stands in for the conda one."""
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    env = dict(
        PATH=f"{bin_dir}:/usr/bin:/bin", HOME=str(tmp_path), PIP_DISABLE_PIP_VERSION_CHECK="1"
    )
    post_deploy = ["bash", str(ENVS / "torch.post-deploy.sh")]
    result = run_captured(post_deploy, cwd=ROOT, env=env, timeout=300)
    if (
        result.returncode != 0
        and "Could not find a version that satisfies the requirement setuptools" in result.stderr
    ):
        pytest.skip("PyPI unreachable: pip cannot fetch the build backend (setuptools)")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    # No dependencies were installed: the environment file pins those, not pip.
    code = "import isotropy, isotropy.io, sys; print(isotropy.__file__)"
    check = run_captured([str(bin_dir / "python"), "-c", code], cwd=tmp_path, env=env, timeout=60)
    assert check.returncode == 0, check.stderr
    assert (
        Path(check.stdout.strip()).resolve()
        == (ROOT / "src" / "isotropy" / "__init__.py").resolve()
    )
    freeze = run_captured(
        [str(bin_dir / "python"), "-m", "pip", "list", "--format=freeze"], env=env, timeout=60
    ).stdout
    assert "torch" not in freeze and "numpy" not in freeze, freeze

    # Run from elsewhere without ISOTROPY_REPO, the script refuses with a clear message.
    wrong = run_captured(post_deploy, cwd=tmp_path, env=env, timeout=60)
    assert wrong.returncode == 1 and "set ISOTROPY_REPO" in wrong.stderr
