"""docs/coverage.md: every file it names exists (a results/ file as a target of the workflow's
configuration, any other in the repository), its statuses are the four defined ones, and its
stated counts are the table's."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml

from isotropy import paths
from isotropy.workflow import targets

ROOT = Path(__file__).resolve().parents[1]
COVERAGE = ROOT / "docs" / "coverage.md"
STATUSES = ("reproduced", "stand-in", "online or GPU only", "no counterpart")


def _rows() -> list[list[str]]:
    lines = COVERAGE.read_text(encoding="utf-8").splitlines()
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in lines
        if re.match(r"\| \d+ \|", line)
    ]


def _workflow_targets() -> set[str]:
    """The inputs of the Snakefile's ``rule all``, each of its lines evaluated with
    ``config.yaml`` (so a target added to or dropped from rule all counts here too)."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    snakefile = (ROOT / "Snakefile").read_text(encoding="utf-8")
    block = snakefile[snakefile.index("rule all:") :].split("input:", 1)[1]
    made: set[str] = set()
    for line in block.splitlines()[1:]:
        if not line.startswith("        "):
            break
        value = eval(
            line.strip().rstrip(","), {"targets": targets, "paths": paths, "config": config}
        )
        made |= {value} if isinstance(value, str) else set(value)
    assert made, "rule all lists no input"
    return made


def test_every_named_file_is_a_target_or_in_the_repository():
    made = _workflow_targets()
    missing = []
    for row in _rows():
        for name in re.findall(r"`([^`]+)`", row[3]):
            if name.startswith("results/"):
                if name not in made:
                    missing.append(f"row {row[0]}: {name} is no target of the workflow")
            elif not (ROOT / name).exists():
                missing.append(f"row {row[0]}: {name} is not in the repository")
    assert not missing, "\n".join(missing)


def test_statuses_and_counts():
    rows = _rows()
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    counts = Counter(r[4] for r in rows)
    assert set(counts) <= set(STATUSES), counts
    for row in rows:  # what is not made says why; what is made names what makes it
        if row[4] == "no counterpart":
            assert row[3] == "—" and row[5], row
        else:
            assert "`" in row[3], row
    stated = re.search(
        r"Counts: reproduced (\d+), stand-in (\d+), online or GPU only (\d+), no counterpart (\d+) "
        r"\(of (\d+) items\)",
        COVERAGE.read_text(encoding="utf-8"),
    )
    assert stated, "docs/coverage.md must state its counts"
    assert [int(v) for v in stated.groups()] == [counts[s] for s in STATUSES] + [len(rows)]
    assert counts["no counterpart"] < 41
