"""Commit messages that read as history: a subject of at most 72 characters saying what changed,
then a blank line and a body saying why, for every commit that is more than a one-line fix.

Three ways to run it (issue 62, item 7):

    python .ci/commit_msg.py                 every commit since the recorded baseline (make lint)
    python .ci/commit_msg.py MESSAGE_FILE    one message, as git's commit-msg hook runs it
    python .ci/commit_msg.py --install       install it as this clone's commit-msg hook

The history before the baseline (.ci/commit-msg-baseline) cannot be rewritten, so it is not
checked. Merge commits are git's own wording and are skipped.
"""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE_FILE = ROOT / ".ci" / "commit-msg-baseline"
MAX_SUBJECT = 72
# A commit this small may be one line: one file and at most this many changed lines.
TRIVIAL_LINES = 10
HOOK = '#!/bin/sh\nexec "{python}" "{script}" "$1"\n'


def problems(message: str, files: int, lines: int) -> list[str]:
    """What is wrong with ``message`` for a commit changing ``files`` files and ``lines`` lines
    (added plus deleted); empty when nothing is."""
    text = [line.rstrip() for line in message.splitlines() if not line.startswith("#")]
    while text and not text[-1]:
        text.pop()
    if not text or not text[0].strip():
        return ["the subject (first line) is empty"]
    found = []
    if len(text[0]) > MAX_SUBJECT:
        found.append(
            f"subject is {len(text[0])} characters (at most {MAX_SUBJECT}): put the detail in the"
            " body"
        )
    if len(text) > 1 and text[1]:
        found.append("the second line must be blank (it separates the subject from the body)")
    body = [line for line in text[2:] if line.strip()]
    if not body and (files > 1 or lines > TRIVIAL_LINES):
        found.append(
            f"no body, for a change of {files} file(s) and {lines} line(s): say why in a body "
            f"(only a one-file change of at most {TRIVIAL_LINES} lines may go without)"
        )
    return found


def _git(*args: str, cwd: Path | None = ROOT) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _size(numstat: str) -> tuple[int, int]:
    """(files, added + deleted lines) from ``git ... --numstat`` (binary files count 1 line)."""
    rows = [line.split("\t") for line in numstat.splitlines() if line.strip()]
    return len(rows), sum(int(a) + int(d) if a != "-" else 1 for a, d, *_ in rows)


def check_range(baseline: str) -> list[str]:
    """The problems of every non-merge commit after ``baseline`` up to HEAD, each prefixed with
    its short hash."""
    if subprocess.run(["git", "cat-file", "-e", f"{baseline}^{{commit}}"], cwd=ROOT).returncode:
        raise SystemExit(
            f"baseline commit {baseline} ({BASELINE_FILE.name}) is not in this clone's history "
            "(a shallow clone? git fetch --unshallow)"
        )
    found = []
    for commit in _git("rev-list", "--no-merges", f"{baseline}..HEAD").split():
        message = _git("log", "-1", "--format=%B", commit)
        files, lines = _size(_git("show", "--numstat", "--format=", commit))
        found += [f"{commit[:10]}: {p}" for p in problems(message, files, lines)]
    return found


def install() -> Path:
    """Write the commit-msg hook of this clone (shared by its worktrees) and return its path."""
    hooks = Path(_git("rev-parse", "--git-path", "hooks").strip())
    hook = (hooks if hooks.is_absolute() else ROOT / hooks) / "commit-msg"
    if hook.exists() and "commit_msg.py" not in hook.read_text(errors="replace"):
        raise SystemExit(f"{hook} exists and is not this check: merge them by hand")
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(HOOK.format(python=sys.executable, script=Path(__file__).resolve()))
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return hook


def main(argv: list[str]) -> int:
    if argv == ["--install"]:
        print(f"installed {install()}")
        return 0
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        raise SystemExit("usage: commit_msg.py [MESSAGE_FILE | --install]")
    if argv:  # the commit-msg hook: what is staged where git runs it (a worktree shares the hook)
        files, lines = _size(_git("diff", "--cached", "--numstat", cwd=None))
        found = problems(Path(argv[0]).read_text(encoding="utf-8"), files, lines)
    else:
        found = check_range(BASELINE_FILE.read_text(encoding="utf-8").split()[0])
    for problem in found:
        print(f"commit message: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
