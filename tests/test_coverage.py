"""docs/coverage.md is checked, row by row (issue 61, item 4): every row names the check that
holds it up, and the check must exist and fit the row's status.

- *reproduced*: a golden-table row (``tests/golden/results/….csv[column=value; …]``) that
  test_golden_tables compares, or a test (``tests/test_x.py::test_name``) that fails when the
  number or statement is wrong; a golden row that states a stand-in does not hold it up.
- *stand-in*: the table cell that names the substitute (``[column~text]``, with the text also
  in the row's "why"), or a test of the substitute.
- *online or GPU only*: the configuration that plans it (``config.yaml [+ overlay] >
  results/…``), tested by a dry run.
- *no counterpart*: nothing named, and a reason.

Besides: every ``results/`` file a row says produces it is a target of ``rule all`` or of a
study's own target rule, every other
named file is in the repository, and the stated counts are the table's.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import tiny_workflow
import yaml

from isotropy import paths, studies
from isotropy.workflow import targets
from isotropy.workflow.config import with_sources

ROOT = Path(__file__).resolve().parents[1]
COVERAGE = ROOT / "docs" / "coverage.md"
STATUSES = ("reproduced", "stand-in", "online or GPU only", "no counterpart")
TEST_CHECK = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
GOLDEN_CHECK = re.compile(r"(tests/golden/results/[\w./-]+\.csv)(?:\[(.+)\])?")
PLAN_CHECK = re.compile(r"((?:config\.yaml)(?: \+ config/[\w.-]+\.yaml)*) > (results/\S+)")


@dataclass(frozen=True)
class Row:
    number: str
    paper: str
    item: str
    produced_by: str
    status: str
    checks: tuple[str, ...]
    why: str


def rows_of(text: str) -> list[Row]:
    """The table rows of a coverage page: ``| # | paper | item | produced by | status | check |
    why |``, the checks each in backticks."""
    found = []
    for line in text.splitlines():
        if re.match(r"\| \d+ \|", line):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            assert len(cells) == 7, f"row {cells[0]} has {len(cells)} cells, not 7: {line}"
            number, paper, item, produced, status, check, why = cells
            checks = tuple(re.findall(r"`([^`]+)`", check))
            found.append(Row(number, paper, item, produced, status, checks, why))
    return found


def _rows() -> list[Row]:
    return rows_of(COVERAGE.read_text(encoding="utf-8"))


@functools.cache
def _test_names(file: str) -> frozenset[str]:
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    return frozenset(
        node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.ClassDef)
    )


@functools.cache
def _golden(file: str) -> pd.DataFrame:
    return pd.read_csv(ROOT / file, dtype=str, keep_default_na=False)


def _golden_rows(file: str, conditions: str | None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of a golden table that meet ``column=value; column~text`` (all of them), and
    the problems of the conditions themselves."""
    table, problems = _golden(file), []
    keep = pd.Series(True, index=table.index)
    for condition in filter(None, (c.strip() for c in (conditions or "").split(";"))):
        match = re.fullmatch(r"([\w ]+?)\s*([=~])\s*(.+)", condition)
        if not match or match.group(1) not in table.columns:
            problems.append(f"{file}: condition {condition!r} names no column of the table")
            continue
        column, how, value = match.groups()
        cells = table[column]
        keep &= (cells == value) if how == "=" else cells.str.contains(value, regex=False)
    return table[keep], problems


def _states_a_stand_in(selected: pd.DataFrame) -> bool:
    cells = selected.drop(columns=[c for c in selected.columns if c == "stand_in"])
    named = "stand_in" in selected.columns and (selected["stand_in"] != "").any()
    return bool(named or cells.apply(lambda c: c.str.contains("stand-in")).any().any())


def _check_problems(row: Row, check: str) -> tuple[str, list[str]]:
    """The kind of one named check (test, golden, plan) and what is wrong with it."""
    if match := TEST_CHECK.fullmatch(check):
        file, name = match.groups()
        if not (ROOT / file).is_file():
            return "test", [f"{file} does not exist"]
        if name not in _test_names(file):
            return "test", [f"{file} has no test {name}"]
        return "test", []
    if match := GOLDEN_CHECK.fullmatch(check):
        file, conditions = match.groups()
        if not (ROOT / file).is_file():
            return "golden", [f"{file} does not exist"]
        selected, problems = _golden_rows(file, conditions)
        if not problems and selected.empty:
            problems.append(f"no row of {file} meets [{conditions}]")
        if row.status == "reproduced" and not selected.empty and _states_a_stand_in(selected):
            problems.append(f"{check} states a stand-in: the row is not reproduced")
        for text in re.findall(r"~\s*([^;]+)", conditions or ""):
            if text.strip().casefold() not in row.why.casefold():
                problems.append(f"the table's {text.strip()!r} is not named in the row's why")
        return ("stating" if "~" in (conditions or "") else "golden"), problems
    if match := PLAN_CHECK.fullmatch(check):
        missing = [f for f in match.group(1).split(" + ") if not (ROOT / f).is_file()]
        return "plan", [f"{f} does not exist" for f in missing]
    return "unknown", [f"{check!r} is no check (a test, a golden row or a planning config)"]


STATUS_NEEDS = {
    "reproduced": ({"test", "golden"}, "a test or a golden row that is not a stand-in"),
    "stand-in": ({"stating", "test"}, "the table cell that states the substitute, or a test"),
    "online or GPU only": ({"plan"}, "the configuration that plans it"),
}


def row_problems(row: Row) -> list[str]:
    """Why a coverage row's named checks do not hold it up (empty: they do)."""
    if row.status not in STATUSES:
        return [f"row {row.number}: status {row.status!r} is none of {STATUSES}"]
    if row.status == "no counterpart":
        ok = not row.checks and row.produced_by == "—" and row.why
        return [] if ok else [f"row {row.number}: no counterpart names nothing and says why"]
    kinds, problems = set(), []
    for check in row.checks:
        kind, found = _check_problems(row, check)
        kinds.add(kind)
        problems += [f"row {row.number}: {p}" for p in found]
    needed, what = STATUS_NEEDS[row.status]
    if not kinds & needed:
        problems.append(f"row {row.number}: {row.status} needs {what}; it names {row.checks}")
    if row.status == "reproduced" and "plan" in kinds:
        problems.append(f"row {row.number}: reproduced, yet it names a configuration to plan it")
    stand_in_tests = [c for c in row.checks if "stand_in" in c.partition("::")[2]]
    if row.status == "reproduced" and stand_in_tests:
        problems.append(f"row {row.number}: reproduced, yet held up by {stand_in_tests}")
    return problems


def test_every_row_is_held_up_by_a_check_that_exists_and_fits_its_status():
    problems = [p for row in _rows() for p in row_problems(row)]
    assert not problems, "\n".join(problems)


PLANTED = [
    # the old rows 7-8: the r of the POS setup "reproduced", but the table says it is a stand-in
    (
        "| 90 | Mickus 2024 | §3.2 Pearson r, POS | `results/main/correlations.csv` | reproduced "
        "| `tests/golden/results/paper_comparison.csv[quantity=pearson_r; setup=word2vec/pos]` "
        "| |",
        "states a stand-in",
    ),
    # the old row 60: a test that does not exist
    (
        "| 90 | Rajaei 2020 | enhancement | `results/geometry/sts.csv` | reproduced "
        "| `tests/test_geometry.py::test_matches_the_authors_code` | |",
        "has no test test_matches_the_authors_code",
    ),
    # a stand-in whose substitute the table does not state
    (
        "| 90 | Cai 2021 | S_inter | `results/geometry/cosine_by_layer.csv` | stand-in "
        "| `tests/golden/results/paper_comparison.csv[quantity=s_inter_adjusted_max; "
        "stand_in~for PTB]` | for PTB |",
        "no row of tests/golden/results/paper_comparison.csv meets",
    ),
    # a stand-in whose why does not name the substitute the table names
    (
        "| 90 | Cai 2021 | S_inter | `results/geometry/cosine_by_layer.csv` | stand-in "
        "| `tests/golden/results/paper_comparison.csv[quantity=s_inter_adjusted_max; "
        "stand_in~for WikiText-2]` | a smaller model |",
        "is not named in the row's why",
    ),
    # online or GPU only without the configuration that plans it
    (
        "| 90 | I-STAR poster | Figure 5 | `results/istar/figure5.png` | online or GPU only "
        "| `tests/test_istar_plots.py::test_figures_are_written` | BERT |",
        "online or GPU only needs the configuration that plans it",
    ),
    # reproduced by naming a planning configuration only
    (
        "| 90 | I-STAR poster | Figure 5 | `results/istar/figure5.png` | reproduced "
        "| `config.yaml > results/istar/figure5.png` | |",
        "reproduced needs a test or a golden row",
    ),
    (
        "| 90 | Cai 2021 | ELMo | — | no counterpart | `tests/test_geometry.py::x` | none |",
        "no counterpart names nothing and says why",
    ),
    (
        "| 90 | Mickus 2024 | Table 1 | `results/main/table1.csv` | reproduced "
        "| `tests/golden/results/main/table1.csv[dataset=imdb]` | |",
        "no row of tests/golden/results/main/table1.csv meets [dataset=imdb]",
    ),
]


@pytest.mark.parametrize(("line", "expected"), PLANTED)
def test_a_planted_row_whose_check_does_not_hold_it_up_fails(line, expected):
    (row,) = rows_of(line)
    problems = row_problems(row)
    assert any(expected in p for p in problems), problems


def test_a_row_that_its_checks_hold_up_passes():
    (row,) = rows_of(
        "| 90 | Mickus 2024 | Table 1, POS | `results/main/table1.csv` | stand-in "
        "| `tests/golden/results/main/table1.csv[dataset=pos; vectors~stand-in for word2vec]` "
        "| GloVe 50-d (stand-in for word2vec 300-d) |"
    )
    assert row_problems(row) == []


def _plans(rows: list[Row]) -> dict[tuple[str, ...], list[str]]:
    """The results files each configuration is said to plan, by configuration."""
    planned: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for row in rows:
        for check in row.checks:
            if match := PLAN_CHECK.fullmatch(check):
                planned[tuple(match.group(1).split(" + "))].append(match.group(2))
    return planned


def planned_outputs(workdir: Path, configs: tuple[str, ...], files: list[str]) -> set[str]:
    """The outputs of every job a dry run of ``files`` plans with ``configs`` (no mirror: the
    original sources, as a user with network has them)."""
    result = tiny_workflow.run_snakemake(
        workdir, [ROOT / c for c in configs], None, "--dry-run", *sorted(set(files))
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' + '.join(configs)} cannot plan {files}:\n{output[-3000:]}"
    lines = re.findall(r"^\s+output: (.+)$", output, flags=re.M)
    return {name.strip() for line in lines for name in line.split(",")}


@pytest.mark.slow
def test_every_online_or_gpu_row_is_planned_by_the_configuration_it_names(tmp_path):
    plans = _plans([row for row in _rows() if row.status == "online or GPU only"])
    assert plans
    for number, (configs, files) in enumerate(sorted(plans.items())):
        outputs = planned_outputs(tmp_path / str(number), configs, files)
        assert not set(files) - outputs, (configs, sorted(set(files) - outputs))


@pytest.mark.slow
def test_a_planted_online_row_that_names_the_wrong_configuration_fails_its_dry_run(tmp_path):
    # the slides' BERT runs on WiC without their overlay: config.yaml alone plans MiniLM on RTE
    (row,) = rows_of(
        "| 90 | Rajaei 2020 | fine-tuning with BERT | `results/rajaee_cls/runs.csv` "
        "| online or GPU only "
        "| `config.yaml > results/rajaee_cls/bert/wic/cluster/seed0/metrics.json` | BERT |"
    )
    assert row_problems(row) == []  # the configuration exists: only the dry run can tell
    ((configs, files),) = _plans([row]).items()
    with pytest.raises(AssertionError, match="cannot plan"):
        planned_outputs(tmp_path, configs, files)


def _rule_inputs(text: str, header: str, names: dict) -> set[str]:
    """The inputs of the rule that starts with ``header``, each line evaluated with ``names``;
    a line naming a value the rule file computes at parse time (``ISTAR``) is left out."""
    block = text[text.index(header) :].split("input:", 1)[1]
    made: set[str] = set()
    for line in block.splitlines()[1:]:
        if not line.startswith("        "):
            break
        try:
            value = eval(line.strip().rstrip(","), dict(names))
        except NameError:
            continue
        made |= {value} if isinstance(value, str) else set(value)
    return made


def _workflow_targets() -> set[str]:
    """The inputs of the Snakefile's ``rule all`` and of every study's own target rule
    (``rule <name>_study``), evaluated with ``config.yaml`` (so a target added to or dropped
    from them counts here too)."""
    config = with_sources(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8")))
    names = {"targets": targets, "paths": paths, "config": config, "studies": studies}
    made = _rule_inputs((ROOT / "Snakefile").read_text(encoding="utf-8"), "rule all:", names)
    assert made, "rule all lists no input"
    for file in sorted((ROOT / "rules").glob("*.smk")):
        text = file.read_text(encoding="utf-8")
        for header in re.findall(r"^rule \w+_study:", text, flags=re.M):
            made |= _rule_inputs(text, header, names)
    return made


def test_every_named_file_is_a_target_or_in_the_repository():
    made = _workflow_targets()
    missing = []
    for row in _rows():
        for name in re.findall(r"`([^`]+)`", row.produced_by):
            if name.startswith("results/"):
                # an online row's files are planned by its named configuration (dry run above)
                if name not in made and row.status != "online or GPU only":
                    missing.append(f"row {row.number}: {name} is no target of a study")
            elif not (ROOT / name).exists():
                missing.append(f"row {row.number}: {name} is not in the repository")
    assert not missing, "\n".join(missing)


def test_statuses_and_counts():
    rows = _rows()
    assert [int(r.number) for r in rows] == list(range(1, len(rows) + 1))
    counts = Counter(r.status for r in rows)
    assert set(counts) <= set(STATUSES), counts
    for row in rows:  # what is made names what makes it
        assert row.status == "no counterpart" or "`" in row.produced_by, row
    stated = re.search(
        r"Counts: reproduced (\d+), stand-in (\d+), online or GPU only (\d+), no counterpart (\d+) "
        r"\(of (\d+) items\)",
        COVERAGE.read_text(encoding="utf-8"),
    )
    assert stated, "docs/coverage.md must state its counts"
    assert [int(v) for v in stated.groups()] == [counts[s] for s in STATUSES] + [len(rows)]
