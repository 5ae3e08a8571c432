"""Debian's Chromium, headless, for the tests that open the report: skipped where missing, except
under CI (CI=true), where .ci/run installs it and a missing browser fails the test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import tiny_workflow

NAMES = ("chromium", "chromium-browser", "google-chrome")
# Flags that work on a root CI machine without a display, a GPU or a network.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def require() -> str:
    """The browser's path (:func:`tiny_workflow.skip_or_fail` without one)."""
    browser = next((path for path in map(shutil.which, NAMES) if path), None)
    if browser is None:
        names = ", ".join(NAMES)
        tiny_workflow.skip_or_fail(f"no headless browser ({names}): apt-get install chromium")
    return browser


def run(
    page: Path, profile: Path, *args: str, size: str = "1400,1000"
) -> subprocess.CompletedProcess:
    """Chromium on ``page`` with a fresh profile folder and ``args`` (--dump-dom, --screenshot=...),
    its scripts given 15 s of virtual time to render."""
    command = [require(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={size}"]
    command += ["--virtual-time-budget=15000", *args, page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)
