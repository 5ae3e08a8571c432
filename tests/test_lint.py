"""The workflow's code style and Snakemake's own best-practice checks: both must be clean.

Runs the same commands as CI and a developer would (`make lint`):
    ruff check .          (rules in pyproject.toml, [tool.ruff])
    ruff format --check . (the formatter, same line length)
    snakefmt --check Snakefile rules/
    mypy                  (the type checker; settings in pyproject.toml, [tool.mypy])
    snakemake --lint
and checks that the pre-commit hooks (.pre-commit-config.yaml) run those same commands.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(args: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", HF_HUB_OFFLINE="1"
    )
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_ruff_check_is_clean():
    result = _run([str(BIN / "ruff"), "check", "--no-cache", "."])
    assert result.returncode == 0, (
        "ruff check failed (run `ruff check --fix .` for the fixable ones, see pyproject.toml "
        "[tool.ruff]):\n"
        f"{result.stdout[-6000:]}{result.stderr[-2000:]}"
    )


def test_ruff_format_is_clean():
    result = _run([str(BIN / "ruff"), "format", "--check", "--no-cache", "."])
    assert result.returncode == 0, (
        "ruff format --check failed (run `ruff format .` to "
        f"fix):\n{result.stdout[-6000:]}{result.stderr[-2000:]}"
    )


def test_snakefmt_check_is_clean():
    targets = ["Snakefile", "rules"]
    result = _run([str(BIN / "snakefmt"), "--check", *targets])
    if result.returncode != 0:
        diff = _run([str(BIN / "snakefmt"), "--diff", *targets]).stdout
        raise AssertionError(
            "snakefmt --check failed (run `snakefmt Snakefile rules/` to "
            f"fix):\n{result.stderr[-3000:]}\n{diff[-6000:]}"
        )


def test_snakemake_lint_is_clean():
    result = _run([str(BIN / "snakemake"), "--lint"])
    output = result.stdout + result.stderr
    # Snakemake prints "Lints for snakefile ..." / "Lints for rule ..." blocks and exits 1.
    assert result.returncode == 0 and "Lints for" not in output, (
        f"snakemake --lint:\n{output[-6000:]}"
    )


def test_mypy_is_clean():
    result = _run([str(BIN / "mypy")], timeout=900)
    assert result.returncode == 0, (
        "mypy failed (settings in pyproject.toml "
        f"[tool.mypy]):\n{result.stdout[-6000:]}{result.stderr[-2000:]}"
    )


def _lint_commands_of_make() -> list[list[str]]:
    """The lint target's commands, tools by name, make's variables dropped."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", text, re.M)
    assert recipe, "Makefile has no lint target"
    commands = []
    for line in recipe.group(1).splitlines():
        words = [w for w in shlex.split(line.strip()) if not w.startswith("$(CONFIG")]
        commands.append([words[0].removeprefix("$(BIN)/"), *words[1:]])
    return commands


def test_pre_commit_runs_the_same_checks_as_make_lint():
    hooks = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = [shlex.split(hook["entry"]) for repo in hooks["repos"] for hook in repo["hooks"]]
    from_hooks = [[words[0].removeprefix(".venv/bin/"), *words[1:]] for words in entries]
    assert sorted(from_hooks) == sorted(_lint_commands_of_make())
