"""The workflow's code style and Snakemake's own best-practice checks: both must be clean.

Runs the same commands as CI and a developer would (`make lint`):
    ruff check .          (rules in pyproject.toml, [tool.ruff])
    ruff format --check . (the formatter, same line length)
    snakefmt --check Snakefile rules/
    snakemake --lint
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
        f"ruff check failed (run `ruff check --fix .` for the fixable ones, see pyproject.toml [tool.ruff]):\n"
        f"{result.stdout[-6000:]}{result.stderr[-2000:]}"
    )


def test_ruff_format_is_clean():
    result = _run([str(BIN / "ruff"), "format", "--check", "--no-cache", "."])
    assert result.returncode == 0, (
        f"ruff format --check failed (run `ruff format .` to fix):\n{result.stdout[-6000:]}{result.stderr[-2000:]}"
    )


def test_snakefmt_check_is_clean():
    targets = ["Snakefile", "rules"]
    result = _run([str(BIN / "snakefmt"), "--check", *targets])
    if result.returncode != 0:
        diff = _run([str(BIN / "snakefmt"), "--diff", *targets]).stdout
        raise AssertionError(
            f"snakefmt --check failed (run `snakefmt Snakefile rules/` to fix):\n{result.stderr[-3000:]}\n{diff[-6000:]}"
        )


def test_snakemake_lint_is_clean():
    result = _run([str(BIN / "snakemake"), "--lint"])
    output = result.stdout + result.stderr
    # Snakemake prints "Lints for snakefile ..." / "Lints for rule ..." blocks and exits 1.
    assert result.returncode == 0 and "Lints for" not in output, (
        f"snakemake --lint:\n{output[-6000:]}"
    )
