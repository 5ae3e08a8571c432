"""docs/coverage.md, generated from docs/coverage.csv and from what each row's checks read;
tests/test_coverage.py fails when a check's outcome contradicts its row's status (the statuses
and what holds each up: docs/coverage.md).

A row's ``checks``, separated by `` | ``: a table row ``<file>[column=value; column~text]`` of
a CSV or of a generated page's tables (it reads their ``verdict`` cells, else *computed*, or
*equal* when every number it pins is one the row cites from the paper); a test
``tests/test_x.py::test_name`` naming the row in ``@pytest.mark.covers("<id>", on=…)`` (``on``:
the committed file or ``"mirror"`` it reads; without it, synthetic); a plan ``config.yaml
[+ config/overlay.yaml] > results/…``, which a dry run must plan; the paper's numbers
``config/published_values.csv[…]``, each of which some row must select. A row's ``kind`` is
``formula`` or ``empirical`` (anything measured on data; an empty cell reads empirical).
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from isotropy.committed.record import CommittedRun, Page, page_markers
from isotropy.io import markdown_table
from isotropy.verdicts.tolerances import near_guaranteed

ROOT = Path(__file__).resolve().parents[3]
DATA = Path("docs/coverage.csv")
PAGE, README = Path("docs/coverage.md"), Path("README.md")
PUBLISHED = "config/published_values.csv"
TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
TABLE = re.compile(r"((?:tests/golden|docs|config)/[\w./-]+\.(?:csv|md))(?:\[(.+)\])?")
PLAN = re.compile(r"((?:config\.yaml)(?: \+ config/[\w.-]+\.yaml)*) > (results/\S+)")
# Verdict classes by the words a verdict starts with (after its mark); a verdict the page itself
# calls near-guaranteed, or judged on a stand-in, says neither for nor against.
CLASSES = {
    "against": ("not supported", "not consistent", "differs", "untested: fails"),
    "for": ("supported", "agrees", "consistent"),
    "stand-in": ("stand-in",),
    "not run": ("not run",),
}
# A table of the tiny test run (tests/golden/) is not the paper's scale: what it reads is tagged.
TINY = "tests/golden/"
TESTS = {"test", "test on the paper's data"}
KINDS = ("empirical", "formula")
TINY_VERDICTS = {"tiny: for", "tiny: against", "tiny: undecided"}
# What a status allows its checks to read (kinds or verdict classes) ...
ALLOWED = {
    "reproduced": {"for", "equal", "computed", "tiny: for", *TESTS},
    "not reproduced": {"against", "undecided", "computed", *TESTS},
    "not judged": {"undecided", "near-guaranteed", "computed", "equal", *TESTS, *TINY_VERDICTS},
    "stand-in": {"stand-in", "undecided", "against", "not run", "computed", "test"}
    | {*TINY_VERDICTS, "tiny: stand-in", "tiny: not run"},
    "online or GPU only": {"not run", "tiny: not run", "plan", "test"},
    "no counterpart": set(),
}
STATUSES = tuple(ALLOWED)
# ... and what it needs, by the row's kind (why: docs/coverage.md).
ON_DATA = {"for", "equal", "test on the paper's data"}
NEEDS: dict[str, dict[str, set[str]]] = {
    "reproduced": {"empirical": ON_DATA, "formula": ON_DATA | {"test"}},
    "not reproduced": {
        "empirical": {"against", "test on the paper's data"},
        "formula": {"against", *TESTS},
    },
    "not judged": dict.fromkeys(KINDS, ALLOWED["not judged"]),
    "stand-in": dict.fromkeys(KINDS, {"stated stand-in", "test"}),
    "online or GPU only": dict.fromkeys(KINDS, {"plan"}),
    "no counterpart": dict.fromkeys(KINDS, set()),
}


def rows(root: Path = ROOT) -> pd.DataFrame:
    return pd.read_csv(root / DATA, dtype=str, keep_default_na=False)


def papers(data: pd.DataFrame) -> list[str]:
    """The papers of the rows, in the order they first appear (a new study's paper is a row)."""
    return list(dict.fromkeys(data.loc[~data["id"].str.startswith("ours:"), "paper"]))


def checks_of(row) -> list[str]:
    return [c.strip() for c in row["checks"].split(" | ") if c.strip()]


@functools.cache
def table(file: Path) -> pd.DataFrame:
    """A CSV's rows, or every markdown table of a page as one frame (cells without ``*`` and
    backticks)."""
    if file.suffix != ".md":
        return pd.read_csv(file, dtype=str, keep_default_na=False)
    lines = file.read_text(encoding="utf-8").splitlines()
    frames = []
    for is_table, block in itertools.groupby(lines, key=lambda line: line.startswith("|")):
        rows = [
            [c.strip().strip("*`").strip() for c in r.strip().strip("|").split("|")] for r in block
        ]
        header, body = rows[0], [r for r in rows[1:] if not set("".join(r)) <= set("-: ")]
        if is_table and body:
            frames.append(pd.DataFrame([b for b in body if len(b) == len(header)], columns=header))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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
    word = verdict.strip("*✅❌❔➖ ").casefold()
    if "near-guaranteed" in word:
        return "near-guaranteed"
    if "on a stand-in" in word:
        return "stand-in"
    return next((c for c, starts in CLASSES.items() if word.startswith(starts)), "undecided")


@functools.cache
def _tests(root: Path, file: str) -> dict[str, tuple[ast.FunctionDef, set[str], set[str]]]:
    """Each test of ``file``: its node, the row ids and the ``on=`` its covers marks name."""
    tree = ast.parse((root / file).read_text(encoding="utf-8"))
    found = {}
    for node in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        marks = [m for m in node.decorator_list if isinstance(m, ast.Call)]
        marks = [m for m in marks if ast.unparse(m.func) == "pytest.mark.covers"]
        ids = {str(a.value) for m in marks for a in m.args if isinstance(a, ast.Constant)}
        on = {
            str(k.value.value)
            for m in marks
            for k in m.keywords
            if k.arg == "on" and isinstance(k.value, ast.Constant)
        }
        found[node.name] = (node, ids, on)
    return found


def covers(root: Path, file: str) -> dict[str, set[str]]:
    """The row ids each test of ``file`` names in ``@pytest.mark.covers(…)``."""
    return {name: ids for name, (_, ids, _) in _tests(root, file).items()}


def runs_on(root: Path, file: str, name: str) -> tuple[bool, list[str]]:
    """Whether a test says it ran on the paper's data (``on=`` of its covers mark), and what is
    wrong with that claim."""
    node, _, on = _tests(root, file)[name]
    source = "\n".join(ast.unparse(statement) for statement in node.body)  # not the mark
    problems = []
    for data in on:
        if data == "mirror":
            if "mirror_root" not in (root / file).read_text(encoding="utf-8"):
                problems.append(f"{file}::{name} says on='mirror' without the mirror_root fixture")
        elif not (data.startswith("docs/data/") and (root / data).is_file()):
            problems.append(f"{file}::{name}: on={data!r} is no committed file of docs/data")
        elif Path(data).name.split(".")[0] not in source:
            problems.append(f"{file}::{name} says on={data!r} but never names it")
    return bool(on) and not problems, problems


def _published(root: Path, row) -> list[pd.DataFrame]:
    """The config/published_values.csv rows each of the row's checks of that file selects."""
    return [
        select(root, PUBLISHED, match.group(2))[0]
        for check in checks_of(row)
        if (match := TABLE.fullmatch(check)) and match.group(1) == PUBLISHED
    ]


def _cited(root: Path, row) -> set[str]:
    """The numbers the row cites from the paper."""
    return {v.replace(",", "") for rows in _published(root, row) for v in rows.get("value", [])}


def _equal(conditions: str | None, cited: frozenset[str]) -> bool:
    """Whether a check's conditions pin numbers (``column=number``), all cited from the paper."""
    pinned = [
        match.group(1)
        for condition in (conditions or "").split(";")
        if (match := re.fullmatch(r"\s*[^=~]+=\s*(-?[\d.]+)\s*", condition))
    ]
    return bool(pinned) and set(pinned) <= cited


def outcome(root: Path, item: str, check: str, cited: frozenset[str] = frozenset()):
    """What one check reads (:data:`ALLOWED`'s words), what is wrong with it, and what the page
    says it holds up (empty: nothing)."""
    if match := TEST.fullmatch(check):
        file, name = match.groups()
        if not (root / file).is_file():
            return set(), [f"{file} does not exist"], "a test"
        named = covers(root, file)
        if name not in named:
            return set(), [f"{file} has no test {name}"], "a test"
        if item not in named[name]:
            return set(), [f"{check} does not name {item} in @pytest.mark.covers"], "a test"
        on_data, problems = runs_on(root, file, name)
        read = "test on the paper's data" if on_data else "test"
        return {read}, problems, f"a {read}"
    if match := PLAN.fullmatch(check):
        missing = [f for f in match.group(1).split(" + ") if not (root / f).is_file()]
        return {"plan"}, [f"{f} does not exist" for f in missing], "a dry run's plan"
    if match := TABLE.fullmatch(check):
        file, conditions = match.groups()
        selected, problems = select(root, file, conditions)
        if file == PUBLISHED:
            return set(), problems, ""
        tiny = file.startswith(TINY)
        verdicts = selected["verdict"].dropna() if "verdict" in selected else pd.Series()
        reads = {
            ("tiny: " if tiny else "")
            + ("near-guaranteed" if near_guaranteed(r) else verdict_class(v))
            for r, v in zip(selected.loc[verdicts.index].to_dict("records"), verdicts)
        }  # a passing ρ is near-guaranteed in a data file too, which no page marks
        if verdicts.empty and not selected.empty:
            reads.add("equal" if not tiny and _equal(conditions, cited) else "computed")
        in_column = "stand_in" in selected and (selected["stand_in"] != "").any()
        in_cells = selected.fillna("").apply(lambda c: c.str.contains("stand-in")).any().any()
        if not selected.empty and (in_column or in_cells):
            reads.add("stated stand-in")
        shown = sorted(set(map(_short, verdicts)))
        if not shown:
            said = {"stated stand-in": "states the stand-in", "equal": "equals the paper's"}
            shown = [next((w for r, w in said.items() if r in reads), "computed")]
        name = f"{Path(file).name}{' (tiny run)' if tiny else ''}"
        return reads, problems, f"{name}: {', '.join(shown)}"
    return set(), [f"{check!r} is no check (a table row, a test or a plan)"], ""


def row_problems(row, root: Path = ROOT) -> list[str]:
    """Why a row's checks do not hold it up, or read against its status (empty: they fit)."""
    item, status, kind = row["id"], row["status"], row.get("kind", "") or "empirical"
    if status not in STATUSES:
        return [f"{item}: status {status!r} is none of {STATUSES}"]
    if kind not in KINDS:
        return [f"{item}: kind {kind!r} is none of {KINDS}"]
    problems, reads, cited = [], set(), frozenset(_cited(root, row))
    for check in checks_of(row):
        read, found, _ = outcome(root, item, check, cited)
        problems += [f"{item}: {p}" for p in found]
        reads |= read
        against = read - ALLOWED[status] - {"stated stand-in"}
        if status == "reproduced" and "stated stand-in" in read:
            against.add("a stand-in")
        if against:
            problems.append(f"{item}: {status}, yet {check} reads {sorted(against)}")
    needs = NEEDS[status][kind]
    if needs and not reads & needs:
        problems.append(f"{item}: {status} ({kind}) needs a check reading one of {sorted(needs)}")
    if not row["why"] and status != "reproduced":
        problems.append(f"{item}: {status} says why")
    return problems


def unlisted(published: pd.DataFrame, data: pd.DataFrame, root: Path = ROOT) -> list[str]:
    """The papers' printed numbers (rows of config/published_values.csv) no row selects."""
    chosen = pd.Series(False, index=published.index)
    for _, row in data.iterrows():
        for rows in _published(root, row):
            chosen[rows.index] = True
    return [f"{p['paper']}, {p['source']}" for _, p in published[~chosen].iterrows()]


def _short(verdict: str) -> str:
    """A verdict cell's word, and the qualifier that decides its class."""
    word = re.split(r"\*\*| \(| within", verdict.strip("*✅❌❔➖ "))[0]
    qualifier = next((q for q in ("near-guaranteed", "on a stand-in") if q in verdict), "")
    return f"{word} ({qualifier})" if qualifier else word


def _held_up_by(row, root: Path) -> str:
    cited = frozenset(_cited(root, row))
    counted = Counter(outcome(root, row["id"], check, cited)[2] for check in checks_of(row))
    counted.pop("", None)
    return "; ".join(w if n == 1 else f"{w} ×{n}" for w, n in counted.items()) or "–"


def block(root: Path = ROOT, counts_only: bool = False) -> str:
    """The counts per paper and status, then one table per paper (the reasons stay in
    docs/coverage.csv)."""
    for cached in (table, _tests):  # the pages it reads may have been rewritten
        cached.cache_clear()
    data = rows(root)
    ours = data["id"].str.startswith("ours:")
    counts = pd.crosstab(data["paper"].where(~ours, "ours"), data["status"])
    counts = counts.reindex(index=[*papers(data), "ours"], columns=STATUSES, fill_value=0)
    lines = [markdown_table(counts.assign(items=counts.sum(axis=1)).reset_index()).rstrip()]
    if counts_only:  # the README's first screen: what replicated, per paper
        return lines[0] + "\n"
    for title, part in [(p, data[(data["paper"] == p) & ~ours]) for p in papers(data)] + [
        ("The project's own additions (not items of the papers)", data[ours])
    ]:
        prefixes = set(part["id"].str.split(":").str[0] + ":")
        prefix = prefixes.pop() if len(prefixes) == 1 else ""  # said once, in the header
        header = f"| id{f' (`{prefix}…`)' if prefix else ''} | item | status | held up by |"
        lines += ["", f"## {title}", "", header, "|---|---|---|---|"]
        for _, row in part.iterrows():
            what, short = f"{row['item']}: {row['statement']}", row["id"].removeprefix(prefix)
            lines.append(f"| {short} | {what} | {row['status']} | {_held_up_by(row, root)} |")
    return "\n".join(lines) + "\n"


COVERAGE = CommittedRun(
    name="coverage",
    pages=(
        Page(PAGE, block, page_markers("coverage")),
        Page(README, functools.partial(block, counts_only=True), page_markers("coverage counts")),
    ),
)
