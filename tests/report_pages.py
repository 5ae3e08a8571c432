"""A Snakemake report read from its HTML (the captions of its results, its first page) and as
headless Chromium renders it; shared by tests/test_report.py and tests/test_quickstart.py."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import headless_browser
import tiny_workflow

# ISOTROPY_UPDATE_SCREENSHOTS=1: the browser tests copy their screenshots of the first page to
# docs/ (committed; docs/testing.md).
SCREENSHOTS = tiny_workflow.ROOT / "docs"


def captions(text: str) -> dict[str, str]:
    """Result path → caption as plain text, from the report's embedded results table."""
    found = {}
    for match in re.finditer(
        r'"(results/[^"]+)": \{"name": "[^"]*", "filename": "[^"]*", "labels": [^,]*, "size": '
        r'"[^"]*", "caption": "((?:[^"\\]|\\.)*)"',
        text,
    ):
        caption = json.loads(f'"{match.group(2)}"')
        found[match.group(1)] = html.unescape(re.sub(r"<[^>]+>", "", caption))
    return found


def first_page(text: str) -> str:
    """The workflow description: the report's first page, the overview inserted."""
    match = re.search(r"var workflow_desc = (\".*?\");\s*\n", text)
    assert match, "no workflow description in the report"
    return json.loads(match.group(1))


def open_in_browser(text: str, folder: Path, screenshot: str | None = None) -> str:
    """The report rendered by headless Chromium (its scripts run): the DOM. With ``screenshot``
    (a file name), a screenshot of its first page too, copied to docs/ when asked."""
    headless_browser.require()
    page = folder / "report.html"
    page.write_text(text, encoding="utf-8")
    dom = headless_browser.run(page, folder / "profile", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    if screenshot is not None:
        shot = folder / screenshot
        made = headless_browser.run(
            page, folder / "profile2", f"--screenshot={shot}", size="1400,900"
        )
        assert made.returncode == 0 and shot.stat().st_size > 10_000, made.stderr[-2000:]
        if os.environ.get("ISOTROPY_UPDATE_SCREENSHOTS"):
            SCREENSHOTS.mkdir(exist_ok=True)
            shutil.copyfile(shot, SCREENSHOTS / screenshot)
    return dom.stdout
