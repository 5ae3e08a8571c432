"""The README is a newcomer's guide: its quick start works offline, its commands exist, its links
lead somewhere; the module table in docs/architecture.md is the map of the package; the README,
config.yaml and docs/ stay within the sizes a newcomer reads (issue 71), the package and the
tests within their line budgets (issue 81)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_workflow import mirror_folder

from isotropy.committed.import_graph import study_packages

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REPOSITORY_FOLDERS = r"\.ci|benchmarks|config|docs|envs|profiles|rules|scripts|src|tests"
# Sizes in bytes (issue 71): a README of a few screens, one line per setting (the data sources'
# pins live in config/sources.yaml, isotropy.workflow.config.SOURCES_CONFIG), a changelog that
# lists changes for users (measurements belong in docs/ or the commit bodies), docs a newcomer
# can read.
BUDGETS = {
    "README.md": 12_000,
    "CHANGELOG.md": 20_000,
    "config.yaml": 15_000,
    "docs/*.md": 150_000,
}


def test_module_table_matches_the_package():
    package = ROOT / "src" / "isotropy"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    # a study's package is `isotropy.<study>`, named as its record (as in the package graph)
    modules |= {p.parent.name for p in package.glob("*/__init__.py")} - {*study_packages()}
    rows = [
        line
        for line in (ROOT / "docs/architecture.md").read_text().splitlines()
        if line.startswith("| `isotropy.")
    ]
    named = {name for row in rows for name in re.findall(r"`isotropy\.(\w+)`", row.split("|")[1])}
    assert named == modules, (
        f"docs/architecture.md module table: missing {sorted(modules - named)}, not in the package "
        f"{sorted(named - modules)}"
    )
    assert "(docs/architecture.md)" in README.read_text()


def test_quick_start_sets_the_mirror_before_its_first_command():
    """Offline, a first command run before the mirror is set fails after a minute."""
    text = README.read_text()
    quick_start = text[text.index("## Quick start") :]
    first_block = re.search(r"```bash\n(.*?)```", quick_start, re.S).group(1)
    lines = [line.split("#")[0].strip() for line in first_block.splitlines()]
    assert lines[0].startswith("export ISOTROPY_MIRROR="), first_block
    assert "make preview" in lines and "make report" in lines


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a Markdown page's headings."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def broken_links(pages: list[Path], collected: str = "", root: Path = ROOT) -> list[str]:
    """Every relative link of ``pages`` whose file, or #anchor in a Markdown file, is missing (code
    blocks left out), each `::name` or `-k "A or B"` alternative in no ``collected`` test id, and
    each other repository path in backticks that ``root`` lacks (not results/ nor logs/)."""
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for name in re.findall(rf"`((?:{REPOSITORY_FOLDERS})/[^`\s<:]*)`", text):
            if not any(p.exists() for p in (root.glob(name) if "*" in name else [root / name])):
                broken.append(f"{page.name}: {name} is no file")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path = (page.parent / target).resolve() if target else page
            if not path.exists():
                broken.append(f"{page.name}: link to {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.name}: {target}#{anchor}")
        for path, k, name in re.findall(r"`(tests/\w+\.py)(?: -k (\"[^\"]+\"|\S+)|::(\w+))`", text):
            tests = re.findall(rf"^{re.escape(path)}::(.+)", collected, re.M)
            for alt in (name or k.strip('"')).split(" or "):
                if not any(all(w in t for w in alt.split(" and ")) for t in tests):
                    broken.append(f"{page.name}: {path} -k {alt} names no test")
    return broken


def test_links_lead_to_files_and_headings_and_test_selectors_to_tests():
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    named = set(re.findall(r"`(tests/\w+\.py)(?: -k|::)", "".join(p.read_text() for p in pages)))
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", *sorted(named)]
    broken = broken_links(pages, subprocess.check_output(command, cwd=ROOT, text=True, timeout=600))
    assert not broken, "\n".join(broken)


def test_a_planted_broken_link_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\n## Two words\n\n[b](b.md#x) [me](#two-words)\n")
    (tmp_path / "b.md").write_text(
        "# B\n\n## X\n\n[a](a.md#two-words) [c](c.md)\n```\n[d](d.md)\n```\n"
    )
    assert broken_links([tmp_path / "a.md", tmp_path / "b.md"]) == ["b.md: link to c.md"]
    (tmp_path / "a.md").write_text("[b](b.md#y)\n")
    assert broken_links([tmp_path / "a.md"]) == ["a.md: b.md#y"]
    (tmp_path / "a.md").write_text(
        '`tests/a.py -k "b and c or gone and b"` `tests/a.py::test_gone`\n'
    )
    broken = broken_links([tmp_path / "a.md"], "tests/a.py::test_b[c]\ntests/a.py::test_d\n")
    assert broken == [f"a.md: tests/a.py -k {k} names no test" for k in ("gone and b", "test_gone")]
    (tmp_path / "a.md").write_text("`a.md` `tests/<name>.py` `results/x.csv` `src/*.py` `docs/`")
    broken = broken_links([tmp_path / "a.md"], root=tmp_path)
    assert broken == [f"a.md: {name} is no file" for name in ("src/*.py", "docs/")]


@pytest.mark.parametrize("files", BUDGETS)
def test_the_readme_config_yaml_changelog_and_docs_stay_within_their_budgets(files):
    sizes = {page.name: len(page.read_bytes()) for page in sorted(ROOT.glob(files))}
    total, budget = sum(sizes.values()), BUDGETS[files]
    biggest = ", ".join(f"{n} {s}" for n, s in sorted(sizes.items(), key=lambda x: -x[1])[:5])
    assert sizes and total <= budget, f"{files}: {total} bytes > {budget} (largest: {biggest})"


# Lines of the .py files below each folder (issue 81): shorter by deleting and merging.
LINE_BUDGETS = [("src/isotropy/sources", 900), ("tests", 22_000)]
# Until the package's 20,000 is met, a ratchet: a cut lowers it; code added raises it in its own
# commit, saying why.
LINE_BUDGETS += [("src/isotropy", 21_937)]
# Issue 93: the judging code, verdicts/ + committed/, at most 4,300 together (4,282 now)
LINE_BUDGETS += [("src/isotropy/verdicts", 2_422), ("src/isotropy/committed", 1_860)]
OVER = pytest.mark.xfail(strict=True, reason="issue 81: about 22,600; what is left is features")


@pytest.mark.parametrize(
    ("folder", "budget"), [*LINE_BUDGETS, pytest.param("src/isotropy", 20_000, marks=OVER)]
)
def test_the_package_and_the_tests_stay_within_their_line_budgets(folder, budget):
    lines = sum(path.read_bytes().count(b"\n") for path in (ROOT / folder).rglob("*.py"))
    assert lines <= budget, f"{folder}: {lines} lines > {budget}"


def test_the_guide_stays_short_and_inside_the_repository():
    text = README.read_text()
    # A user's guide of a few hundred lines; measurements and internals live in docs/.
    assert len(text.splitlines()) < 400
    for page in [README, *(ROOT / "docs").glob("*.md")]:
        assert "papers.md" not in page.read_text(), f"{page.name} points outside the repository"


def readme_commands(text: str) -> list[str]:
    """Every command the README prints: each line of its bash blocks (comments cut) and each
    `make ...` in its text, in order, each once."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    lines = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return list(dict.fromkeys(c for c in lines + re.findall(r"`(make [^`]+)`", prose) if c))


def header_commands(text: str) -> list[str]:
    """The `snakemake ...` commands (each after any `NAME=value`) of a file's `#` comment lines,
    a line ending in a backslash joined to the next as the shell joins it."""
    comments = "\n".join(line.lstrip("#") for line in text.splitlines() if line.startswith("#"))
    lines = comments.replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if re.match(r"\s*(\w+=\S* +)*snakemake ", line)]


def unrunnable(commands: list[str], snakemake: bool = False) -> list[str]:
    """The commands that fail as printed, each with why: `make ...` under `make -n` (make's own
    dry run: the recipe is planned, its checks run, nothing is made), with ``snakemake`` each
    `snakemake ...` with `-n` added, from the repository root in a shell where the README's
    `export` and `source .venv/bin/activate` were typed; a `NAME=value` before a command is its
    own environment, as in the shell (the test's mirror for any ISOTROPY_MIRROR)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    failed = []
    for command in commands:
        words = shlex.split(command)
        exported = words[0] == "export"
        here = env if exported else dict(env)
        while words[exported:] and re.fullmatch(r"\w+=.*", words[exported]):
            name, _, value = words.pop(exported).partition("=")
            here[name] = str(mirror_folder()) if name == "ISOTROPY_MIRROR" else value
        if exported:
            continue
        if words == ["source", ".venv/bin/activate"]:
            env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
            continue
        if words[0] == "make":
            ran = ["make", "-n", *words[1:]]
        elif words[0] == "snakemake" and snakemake:
            ran = [*words, "-n"]
        elif words[0] == "snakemake":
            continue
        else:
            failed.append(f"{command}: not a command this test knows how to try")
            continue
        done = subprocess.run(ran, cwd=ROOT, env=here, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            failed.append(f"{command}: {(done.stdout + done.stderr).strip()[-500:]}")
    return failed


def test_every_make_command_of_the_readme_runs_as_printed():
    """Issue 83: a newcomer types what the README prints. Its `make` commands under make's own
    dry run; the venv's activation said before the first bare `snakemake`."""
    text = README.read_text()
    commands = readme_commands(text)
    assert {"make preview", "make report", "make help", "make run SNAKEMAKE_ARGS=-n"} <= {*commands}
    counts = (ROOT / "docs/coverage.md").read_text().split("\n## ")[0]  # per paper, linked
    papers = re.findall(r"^\| ([^|]+?) \| \d", counts, re.M)
    assert len(papers) == 5 and all(f"**{name}**" in text.split("\n\n")[1] for name in papers)
    first = min(i for i, c in enumerate(commands) if c.startswith("snakemake"))
    assert "source .venv/bin/activate" in commands[:first], commands
    assert unrunnable(commands) == []
    # Issue 95: a run (not report, audit, figures) after its estimate, then what it made and next
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    for words in map(shlex.split, commands):
        assert words[0] != "snakemake" or words[1:3] == ["--profile", "slurm"], words
        if words[0] == "make":
            run = ["make", "-n", *words[1:]]
            out = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True).stdout
            plan = [x for x in out.replace("\\\n", " ").splitlines() if x[:5] != "make:"]
            runs = [i for i, x in enumerate(plan) if "/snakemake --cores" in x]
            cheap = re.compile("--cores 1 |--allowed-rules")
            first = ("estimate" in " ".join(plan[:i]) or cheap.search(plan[i]) for i in runs)
            said = f"echo 'make {words[1]}: [^;]+; next: .+'"
            assert all(first) and (not runs or re.fullmatch(said, plan[-1])), plan
            # typed after the quick start's preview: an overlay's run replaces it, never refused
            assert "--finished refuse" not in out or not re.search(r"\bCONFIG=", " ".join(words))


@pytest.mark.slow
def test_every_snakemake_command_of_the_readme_and_of_the_overlays_headers_dry_runs():
    """Also each config/*.yaml overlay's header command: a target typed after `--configfile` is
    read as one more config file, and the planted header that does so is named."""
    headers = [path.read_text() for path in sorted((ROOT / "config").glob("*.yaml"))]
    overlays = [command for text in headers for command in header_commands(text)]
    assert len(overlays) >= 10, overlays
    planted = header_commands("#  snakemake --configfile config.yaml \\\n#  main_study")
    commands = [*readme_commands(README.read_text()), *overlays, *planted]
    failed = unrunnable(commands, snakemake=True)
    assert len(failed) == 1 and "No such file or directory: 'main_study'" in failed[0], failed


def test_a_command_that_cannot_run_as_printed_is_named():
    text = (
        "Type `make help`, then `make no-such-target`.\n\n```bash\n"
        "export ISOTROPY_MIRROR=/path/to/mirror   # offline\nfrobnicate --all\n```\n"
    )
    commands = readme_commands(text)
    assert commands == [
        "export ISOTROPY_MIRROR=/path/to/mirror",
        "frobnicate --all",
        "make help",
        "make no-such-target",
    ]
    failed = unrunnable(commands)
    assert [f.split(":")[0] for f in failed] == ["frobnicate --all", "make no-such-target"]
    assert "No rule to make target" in failed[1]


def test_make_help_lists_every_target_the_readme_names():
    shown = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    listed = set(re.findall(r"^  make ([\w-]+) ", shown.stdout, re.M))
    named = set(re.findall(r"`make ([\w-]+)", README.read_text()))
    assert shown.returncode == 0 and named <= listed, sorted(named - listed)
