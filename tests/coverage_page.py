"""docs/coverage.md, generated from docs/coverage.csv and from the outcome of each row's checks
(issue 66, item 5). ``python tests/coverage_page.py`` rewrites the page; tests/test_coverage.py
fails when a check's outcome contradicts its row's status, when a number the papers print has
no row, and when the page is stale.

A row's ``checks`` (separated by `` | ``) are of four kinds:

- a table row: ``<file>[column=value; column~text]``, the rows of a CSV (``tests/golden/…``,
  ``docs/data/…``) or of a generated page's tables (``docs/….md``) meeting every condition;
  its outcome is their ``verdict`` cells, or *computed* when the table has no verdict;
- a test: ``tests/test_x.py::test_name``, which must name the row in
  ``@pytest.mark.covers("<row id>")``;
- a plan: ``config.yaml [+ config/overlay.yaml] > results/…``, which a dry run must plan
  (the slow test in tests/test_coverage.py);
- the paper's own numbers: ``config/published_values.csv[…]``, which hold nothing up; every
  row of that file must be selected by some row (a printed number without a row fails).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from isotropy.io import generated_block, markers, write_block

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("docs/coverage.csv")
PAGE = Path("docs/coverage.md")
PUBLISHED = "config/published_values.csv"
BEGIN, END = markers("coverage", "python tests/coverage_page.py")
STATUSES = (
    "reproduced",
    "not reproduced",
    "not judged",
    "stand-in",
    "online or GPU only",
    "no counterpart",
)
TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
TABLE = re.compile(r"((?:tests/golden|docs|config)/[\w./-]+\.(?:csv|md))(?:\[(.+)\])?")
PLAN = re.compile(r"((?:config\.yaml)(?: \+ config/[\w.-]+\.yaml)*) > (results/\S+)")
# Verdict words by what they say of the paper's statement (the first that starts a verdict).
CLASSES = (
    ("not supported", "against"),
    ("not consistent", "against"),
    ("differs", "against"),
    ("untested: fails", "against"),
    ("supported", "for"),
    ("agrees", "for"),
    ("consistent", "for"),
    ("stand-in", "stand-in"),
    ("not run", "not run"),
)
# What a status allows its checks to read, and what it needs (kinds or verdict classes).
ALLOWED = {
    "reproduced": {"for", "computed", "test"},
    "not reproduced": {"against", "undecided", "computed", "test"},
    "not judged": {"undecided", "computed", "test"},
    "stand-in": {"stand-in", "undecided", "against", "not run", "computed", "test"},
    "online or GPU only": {"not run", "plan", "test"},
    "no counterpart": set(),
}
NEEDS = {
    "reproduced": {"for", "computed", "test"},
    "not reproduced": {"against", "test"},
    "not judged": {"undecided", "computed"},
    "stand-in": {"stated stand-in", "test"},
    "online or GPU only": {"plan"},
    "no counterpart": set(),
}


def rows(root: Path = ROOT) -> pd.DataFrame:
    return pd.read_csv(root / DATA, dtype=str, keep_default_na=False)


def papers(data: pd.DataFrame) -> list[str]:
    """The papers of the rows, in the order they first appear (a new study's paper is a row)."""
    return list(dict.fromkeys(data.loc[~data["id"].str.startswith("ours:"), "paper"]))


def checks_of(row) -> list[str]:
    return [c.strip() for c in row["checks"].split(" | ") if c.strip()]


@functools.cache
def _page_tables(file: Path) -> pd.DataFrame:
    """Every markdown table of a page, as one frame (cells without ``*`` and backticks)."""
    frames, header, body = [], None, []
    for line in [*file.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip().strip("*`").strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not set("".join(cells)) <= set("-: "):
                body.append(cells)
            continue
        if header and body:
            frames.append(pd.DataFrame([b for b in body if len(b) == len(header)], columns=header))
        header, body = None, []
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@functools.cache
def table(file: Path) -> pd.DataFrame:
    if file.suffix == ".md":
        return _page_tables(file)
    return pd.read_csv(file, dtype=str, keep_default_na=False)


def select(root: Path, file: str, conditions: str | None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``file`` meeting ``column=value; column~text``, and what is wrong with them."""
    if not (root / file).is_file():
        return pd.DataFrame(), [f"{file} does not exist"]
    frame, problems = table(root / file), []
    keep = pd.Series(True, index=frame.index)
    for condition in filter(None, (c.strip() for c in (conditions or "").split(";"))):
        match = re.fullmatch(r"(.+?)\s*([=~])\s*(.+)", condition)
        if not match or match.group(1) not in frame.columns:
            problems.append(f"{file}: {condition!r} names no column of the table")
            continue
        column, how, value = match.groups()
        cells = frame[column].fillna("")
        keep &= (cells == value) if how == "=" else cells.str.contains(value, regex=False)
    if not problems and not keep.any():
        problems.append(f"no row of {file} meets [{conditions}]")
    return frame[keep], problems


def verdict_class(verdict: str) -> str:
    word = verdict.strip("* ").casefold()
    return next((c for start, c in CLASSES if word.startswith(start)), "undecided")


def _states_a_stand_in(selected: pd.DataFrame) -> bool:
    named = "stand_in" in selected and (selected["stand_in"] != "").any()
    cells = selected.fillna("").apply(lambda c: c.str.contains("stand-in"))
    return bool(named or cells.any().any())


@functools.cache
def covers(root: Path, file: str) -> dict[str, set[str]]:
    """The row ids each test of ``file`` names in ``@pytest.mark.covers(…)``."""
    named: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse((root / file).read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            named[node.name] = {
                arg.value
                for mark in node.decorator_list
                if isinstance(mark, ast.Call) and ast.unparse(mark.func) == "pytest.mark.covers"
                for arg in mark.args
                if isinstance(arg, ast.Constant)
            }
    return named


def outcome(root: Path, item: str, check: str) -> tuple[str, set[str], list[str]]:
    """The kind of one check, what it reads (verdict classes, ``computed``, ``stated
    stand-in``, ``test``, ``plan``) and what is wrong with it."""
    if match := TEST.fullmatch(check):
        file, name = match.groups()
        if not (root / file).is_file():
            return "test", set(), [f"{file} does not exist"]
        named = covers(root, file)
        if name not in named:
            return "test", set(), [f"{file} has no test {name}"]
        if item not in named[name]:
            return "test", set(), [f"{check} does not name {item} in @pytest.mark.covers"]
        return "test", {"test"}, []
    if match := PLAN.fullmatch(check):
        missing = [f for f in match.group(1).split(" + ") if not (root / f).is_file()]
        return "plan", {"plan"}, [f"{f} does not exist" for f in missing]
    if match := TABLE.fullmatch(check):
        file, conditions = match.groups()
        selected, problems = select(root, file, conditions)
        if file == PUBLISHED:
            return "paper", set(), problems
        verdicts = selected["verdict"].dropna() if "verdict" in selected else pd.Series()
        reads = set(map(verdict_class, verdicts))
        reads |= {"computed"} if verdicts.empty and not selected.empty else set()
        if not selected.empty and _states_a_stand_in(selected):
            reads.add("stated stand-in")
        return "table", reads, problems
    return "unknown", set(), [f"{check!r} is no check (a table row, a test or a plan)"]


def row_problems(row, root: Path = ROOT) -> list[str]:
    """Why a row's checks do not hold it up, or read against its status (empty: they fit)."""
    item, status = row["id"], row["status"]
    if status not in STATUSES:
        return [f"{item}: status {status!r} is none of {STATUSES}"]
    problems, reads = [], set()
    for check in checks_of(row):
        kind, read, found = outcome(root, item, check)
        problems += [f"{item}: {p}" for p in found]
        reads |= read
        against = read - ALLOWED[status] - {"stated stand-in"}
        if status == "reproduced" and "stated stand-in" in read:
            against.add("a stand-in")
        if against:
            problems.append(f"{item}: {status}, yet {check} reads {sorted(against)}")
    if NEEDS[status] and not reads & NEEDS[status]:
        problems.append(f"{item}: {status} needs a check reading one of {sorted(NEEDS[status])}")
    if not row["why"] and status != "reproduced":
        problems.append(f"{item}: {status} says why")
    return problems


def unlisted(published: pd.DataFrame, data: pd.DataFrame, root: Path = ROOT) -> list[str]:
    """The papers' printed numbers (rows of config/published_values.csv) no row selects."""
    chosen = pd.Series(False, index=published.index)
    for _, row in data.iterrows():
        for check in checks_of(row):
            match = TABLE.fullmatch(check)
            if match and match.group(1) == PUBLISHED:
                chosen[select(root, PUBLISHED, match.group(2))[0].index] = True
    return [f"{p['paper']}, {p['source']}" for _, p in published[~chosen].iterrows()]


def _held_up_by(row, root: Path) -> str:
    words = []
    for check in checks_of(row):
        kind, reads, _ = outcome(root, row["id"], check)
        if kind == "table":
            selected, _ = select(root, *TABLE.fullmatch(check).groups())
            verdicts = sorted(set(selected.get("verdict", pd.Series()).dropna()))
            if not verdicts:
                verdicts = ["states the stand-in" if "stated stand-in" in reads else "computed"]
            words.append(f"{Path(check.split('[')[0]).name}: {', '.join(verdicts)}")
        elif kind in ("test", "plan"):
            words.append({"test": "a test", "plan": "a dry run's plan"}[kind])
    counted = Counter(words)
    return "; ".join(w if n == 1 else f"{w} ×{n}" for w, n in counted.items()) or "–"


def block(root: Path = ROOT) -> str:
    data = rows(root)
    ours = data["id"].str.startswith("ours:")
    counts = pd.crosstab(data["paper"].where(~ours, "ours"), data["status"])
    counts = counts.reindex(index=[*papers(data), "ours"], columns=STATUSES, fill_value=0)
    lines = ["| paper | " + " | ".join(STATUSES) + " | items |", "|---" * (len(STATUSES) + 2) + "|"]
    for paper, numbers in counts.iterrows():
        lines.append(f"| {paper} | " + " | ".join(map(str, numbers)) + f" | {numbers.sum()} |")
    for title, part in [(p, data[(data["paper"] == p) & ~ours]) for p in papers(data)] + [
        ("The project's own additions (not items of the papers)", data[ours])
    ]:
        lines += ["", f"## {title}", "", "| id | item | status | held up by | why |"]
        lines.append("|---|---|---|---|---|")
        for _, row in part.iterrows():
            what = f"{row['item']}: {row['statement']}"
            cells = (row["id"], what, row["status"], _held_up_by(row, root), row["why"])
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def stale(text: str, root: Path = ROOT) -> bool:
    """Whether a page's generated part is not what the file and the checks' outcomes render."""
    return generated_block(text, BEGIN, END) != block(root)


if __name__ == "__main__":
    write_block(ROOT / PAGE, block(), BEGIN, END)
    print(f"wrote {PAGE}", file=sys.stderr)
