"""The README's quick start as typed, through `make`, in a fresh clone of this repository with
the tiny configuration and one seed laid over (`CONFIG=...`) and `ISOTROPY_MIRROR` on a cut-down
mirror: `make run`, `make report`, `make preview`, `make report`; each report, opened in headless
Chromium, shows the claims of the run it reports, and the README's dry run (`make run
SNAKEMAKE_ARGS=-n`) leaves it as it was. `make run` comes first so that one clone covers both
ways the report once failed (the preview's results absent; the other studies never made)."""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import report_pages
import tiny_workflow

from isotropy.statistics import NOT_COMPARABLE
from isotropy.verdicts.tolerances import near_guaranteed

pytestmark = pytest.mark.slow

ROOT = tiny_workflow.ROOT
# The Makefile's own variables: one set in the environment (by `make test`, say) would change
# what the commands do, and a user typing them has none of them.
MAKE_VARIABLES = (
    "MAKEFLAGS",
    "MAKELEVEL",
    "MFLAGS",
    "PYTHON",
    "VENV",
    "BIN",
    "CORES",
    "SNAKEMAKE_ARGS",
    "CONFIG",
    "CONFIG_FILES",
    "TARGET",
    "FIGURE_STUDIES",
    "REPORT",
    "REPORT_TARGET",
    "REPORT_CONFIG_FILES",
    "PYTEST_ARGS",
)


def _clone(dest: Path) -> Path:
    """This checkout as it is (:func:`tiny_workflow.working_copy`), so the test runs the code it
    sits beside; `.venv` links to the running virtual environment, older than its install stamp,
    so `make` installs nothing."""
    tiny_workflow.working_copy(dest)
    venv = Path(sys.prefix)
    stamp = venv / ".installed"
    if not stamp.is_file():
        tiny_workflow.skip_or_fail(
            f"{stamp} not found: run the tests from the venv `make` installs"
        )
    (dest / ".venv").symlink_to(venv)
    before = stamp.stat().st_mtime - 60
    os.utime(dest / "pyproject.toml", (before, before))
    # Never let `make` reinstall into the running environment.
    fresh = subprocess.run(["make", "-q", ".venv/.installed"], cwd=dest, env=_environment(dest))
    assert fresh.returncode == 0, "make would reinstall the virtual environment"
    return dest


def _environment(clone: Path, mirror: Path | None = None) -> dict[str, str]:
    """The user's shell: the offline hubs, ISOTROPY_MIRROR, the clone's own package first."""
    env = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env["PYTHONPATH"] = str(clone / "src")
    if mirror is not None:
        env["ISOTROPY_MIRROR"] = str(mirror)
    return env


def _make(clone: Path, env: dict[str, str], *args: str, after: str = "") -> float:
    """`make ARGS` in the clone, as typed; its wall time in seconds. A failure names the command
    and shows the end of its output."""
    start = time.monotonic()
    result = subprocess.run(
        ["make", *args], cwd=clone, env=env, capture_output=True, text=True, timeout=3000
    )
    typed = "make " + " ".join(args) + (f" after {after}" if after else "")
    assert result.returncode == 0, f"`{typed}` failed:\n{(result.stdout + result.stderr)[-6000:]}"
    return time.monotonic() - start


@pytest.fixture(scope="module")
def quickstart(mirror_root, tmp_path_factory):
    """The two command pairs in one fresh clone; the report and claims after each, and the wall
    time of every command (printed, for docs/testing.md)."""
    base = tmp_path_factory.mktemp("quickstart")
    mirror = tiny_workflow.make_tiny_mirror(mirror_root, base / "mirror")
    clone = _clone(base / "clone")
    env = _environment(clone, mirror)
    # The README's `CONFIG=my.yaml`: the tiny configuration (a file of the clone), and the fewest
    # runs, one seed (the preview's; tiny.yaml has two).
    one_seed = base / "one_seed.yaml"
    one_seed.write_text("main: {seeds: [0]}\n")
    config = f"CONFIG=tests/config/tiny.yaml {one_seed}"
    kept, seconds = {}, {}
    for target, command in (("main_study", "run"), ("preview_study", "preview")):
        seconds[command] = _make(clone, env, command, config)
        seconds[f"report after {command}"] = _make(clone, env, "report", after=f"make {command}")
        if command == "preview":  # issue 83: the README's dry run changes nothing it reports
            last_run = (clone / "logs/last_run.txt").read_text()
            _make(clone, env, "run", "SNAKEMAKE_ARGS=-n", after="make preview")
            assert (clone / "logs/last_run.txt").read_text() == last_run
            seconds["report after the dry run"] = _make(clone, env, "report", after="make run -n")
        if command == "run":  # the report made nothing of the preview
            assert not (clone / "results/preview").exists()
        claims = clone / (
            "results/preview/claims.csv" if command == "preview" else "results/claims.csv"
        )
        kept[target] = (
            shutil.copy2(clone / "report.html", base / f"report_{target}.html"),
            shutil.copy2(claims, base / f"claims_{target}.csv"),
        )
    print("quick start wall times:", {k: f"{v:.0f} s" for k, v in seconds.items()})
    return kept


def _claims_shown(dom: str) -> set[tuple[str, str, str]]:
    """(verdict, claim, setup) of every row of the rendered overview's claims table (class
    overview-claims), from its cells' texts."""
    table = re.search(r'<table[^>]*class="[^"]*overview-claims[^"]*"[^>]*>(.*?)</table>', dom, re.S)
    assert table, "no claims table on the overview"
    cells = re.compile(r"<t[dh](?:\s[^>]*)?>(.*?)</t[dh]>", re.S)
    header, *rows = [
        [
            " ".join(html.unescape(re.sub(r"<[^>]+>", "", cell)).split())
            for cell in cells.findall(row)
        ]
        for row in re.findall(r"<tr(?:\s[^>]*)?>(.*?)</tr>", table[1], re.S)
    ]
    return {
        (r["verdict"], r["claim"], r["setup"]) for r in (dict(zip(header, row)) for row in rows)
    }


# Issues 79, 93: a claim its null supports is near-guaranteed; the overview says so.
NOT_COUNTED = " (near-guaranteed: not counted)"


def _tried_claims(path: Path) -> set[tuple[str, str, str]]:
    """(verdict, claim, setup) of every claim the run judged (the overview leaves out 'not run'),
    a near-guaranteed claim as the overview must mark it."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {
        (
            r["verdict"] + NOT_COUNTED * near_guaranteed(r),
            " ".join(r["statement"].split()),
            r["setup"],
        )
        for r in rows
        if r["verdict"] != "not run"
    }


def test_report_after_make_run_shows_the_main_study_and_its_claims(quickstart, tmp_path):
    report, claims = quickstart["main_study"]
    dom = report_pages.open_in_browser(report.read_text(encoding="utf-8"), tmp_path)
    assert "Target: main_study (make run)" in dom and "Studies: main. Seeds: main 0." in dom
    assert "PREVIEW" not in dom
    expected = _tried_claims(claims)
    # the tiny run is below the main study's protocol: the claims' gate is exercised
    assert any(v == NOT_COMPARABLE for v, _, _ in expected)
    assert _claims_shown(dom) == expected and {s for _, _, s in expected} >= {
        "miniLM/polarity",
        "miniLM/snli",
        "word2vec/pos",
        "word2vec/supersense",
    }


def test_report_after_make_preview_shows_the_preview_and_its_claims(quickstart, tmp_path):
    """The preview's page (claims and comparison marked PREVIEW) and only its results, though
    `make run` left the main study's beside them."""
    report, claims = quickstart["preview_study"]
    text = report.read_text(encoding="utf-8")
    desc = report_pages.first_page(text)
    assert desc.index("This run (PREVIEW)") < desc.index("Claims check (PREVIEW)")
    assert desc.index("Claims check (PREVIEW)") < desc.index("Paper comparison (PREVIEW)")
    assert "PREVIEW (make preview)" in desc and "Target: preview_study (make preview)" in desc
    assert "silhouette rises" in desc
    assert '<span class="file">results/preview/claims.csv</span>' in desc
    captions = report_pages.captions(text)
    assert "results/preview/claims.csv" in captions and "results/main/table1.csv" not in captions
    dom = report_pages.open_in_browser(text, tmp_path, "report_first_page_preview.png")
    # Issue 83: the first screen says what replicated, beside the committed protocol run.
    assert dom.index("Summary (PREVIEW)") < dom.index("Our numbers against the papers'")
    committed = (ROOT / "docs/data/main_verdicts.csv").read_text(encoding="utf-8")
    made_by = next(csv.DictReader(committed.splitlines()))["run"]  # its commit and settings
    assert "the committed protocol run" in dom and made_by in dom
    assert dom.index("This run (PREVIEW)") < dom.index("Claims check (PREVIEW)")
    assert "Target: main_study" not in dom
    assert 'overview-claims"' in dom and 'overview-comparison"' in dom
    shown = _claims_shown(dom)
    assert shown == _tried_claims(claims) and len(shown) >= 4
