"""Subprocesses as the tests run them: output captured as text, under a time limit, and (with
:func:`run_ok`) a failure that shows the tail of what the command said."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

TAIL = 3000  # characters of a failed command's output a test failure shows


def run_captured(
    command: Sequence[str], *, timeout: float = 600, **kwargs
) -> subprocess.CompletedProcess:
    """``command`` run to its end with stdout and stderr captured as text (``kwargs``: cwd, env)."""
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)


def run_ok(
    command: Sequence[str], *, timeout: float = 600, **kwargs
) -> subprocess.CompletedProcess:
    """:func:`run_captured`, asserting the command succeeded (its stderr and stdout tails the
    message)."""
    result = run_captured(command, timeout=timeout, **kwargs)
    assert result.returncode == 0, result.stderr[-TAIL:] + result.stdout[-TAIL:]
    return result
