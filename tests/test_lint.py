"""The lint step (`make lint`: ruff, ruff format, snakefmt, mypy over the package and over
benchmarks/, snakemake --lint and .ci/commit_msg.py) runs in CI before the tests and in the
pre-commit hooks, so a slow tool (mypy) stays out of pytest; and the commit-message checker."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tiny_workflow import load_script

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_lint_step_before_the_tests():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.strip() for line in run if line.strip().startswith("make ")]
    assert steps == ["make lint", "make test"], steps


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


# ---- commit messages (issue 62, item 7) -------------------------------------------------------
CHECKER = ROOT / ".ci" / "commit_msg.py"


@pytest.mark.parametrize(
    ("message", "files", "lines", "expected"),
    [
        ("Fix a typo in the README", 1, 2, []),
        ("A" * 72 + "\n\nWhy.", 3, 90, []),
        ("A" * 73 + "\n\nWhy.", 1, 1, ["subject is 73 characters"]),
        ("Subject\nno blank line", 1, 1, ["the second line must be blank"]),
        ("Move the costs into config/costs.csv", 2, 5, ["no body, for a change of 2 file"]),
        ("Rewrite the loop", 1, 11, ["no body, for a change of 1 file(s) and 11"]),
        ("Rewrite the loop\n\n# a comment git drops\n", 1, 40, ["no body"]),
        ("\n\nBody only", 1, 1, ["the subject (first line) is empty"]),
    ],
)
def test_commit_message_problems(message, files, lines, expected):
    found = load_script(".ci/commit_msg.py").problems(message, files, lines)
    assert len(found) == len(expected), found
    for problem, start in zip(found, expected):
        assert problem.startswith(start), (problem, start)


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(git, cwd=repo, capture_output=True, text=True)


def test_the_check_reads_commits_after_the_baseline_and_installs_as_a_hook(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / ".ci" / "commit_msg.py").write_text(CHECKER.read_text())
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "An old commit whose subject is far too long " + "x" * 40)
    baseline = _git(repo, "rev-parse", "HEAD").stdout.strip()
    (repo / ".ci" / "commit-msg-baseline").write_text(baseline + "\n# the baseline\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "Record the baseline")
    check = [sys.executable, ".ci/commit_msg.py"]
    assert subprocess.run(check, cwd=repo).returncode == 0  # the old commit is not checked
    (repo / "b.txt").write_text("b\n" * 30)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "Add b")
    result = subprocess.run(check, cwd=repo, capture_output=True, text=True)
    assert result.returncode == 1 and "no body, for a change of 1 file(s) and 30" in result.stderr
    _git(repo, "commit", "-q", "--amend", "-m", "Add b\n\nThirty lines the test needs.")
    assert subprocess.run(check, cwd=repo).returncode == 0

    assert subprocess.run([*check, "--install"], cwd=repo).returncode == 0
    (repo / "c.txt").write_text("c\n")
    _git(repo, "add", ".")
    refused = _git(repo, "commit", "-q", "-m", "C" * 80)
    assert refused.returncode != 0 and "subject is 80 characters" in refused.stderr
    assert _git(repo, "commit", "-q", "-m", "Add c").returncode == 0
