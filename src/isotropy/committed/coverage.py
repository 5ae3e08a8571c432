"""docs/coverage.md from docs/coverage.csv and what its rows' checks read (the rule: the page):
what a verdict stands on from its run's record (:func:`~isotropy.committed.record.run_facts`),
never the row; a formula from an identity on committed data, never a test."""

from __future__ import annotations

import csv
import functools
import io
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isotropy import intake
from isotropy import statistics as st
from isotropy.committed.record import Checksums, CommittedRun, Page, page_markers, run_facts
from isotropy.io import checked_record
from isotropy.verdicts.comparison import declared_protocols, read_published
from isotropy.verdicts.declarations import parse_protocol
from isotropy.verdicts.tolerances import NEAR_GUARANTEED, ON_STAND_IN, near_guaranteed

ROOT = Path(__file__).resolve().parents[3]
DATA = Path("docs/coverage.csv")
PAGE = Path("docs/coverage.md")
OURS = "The project's own additions (not items of the papers)"  # the title of the "ours:" rows
COLUMNS = "id paper item statement status checks produced_by why kind setups".split()
PUBLISHED = "config/published_values.csv"
IDENTITY = re.compile(r"identity:(.+)")  # a formula computed on POINTS against its reference
POINTS, POINTS_RECORD = "docs/data/identity_points.npz", "docs/data/identities_record.json"
TABLE = re.compile(r"((?:tests/golden|docs|config)/[\w./-]+\.(?:csv|md|json))(?:\[(.+)\])?")
PLAN = re.compile(r"((?:config\.yaml)(?: \+ config/[\w.-]+\.yaml)*) > (results/\S+)")
CAP, TINY = 8 << 20, "tests/golden/"  # bytes read of a file; the tiny test run (never at scale)
# Each study's protocol as its published rows declare it: below it a run is not the item's
# scale; seeds replicate a claim and are no part of it, but of the record check.
PROTOCOL = {
    s: {k: int(v) for k, v in parse_protocol(p).items()} for s, _, p in declared_protocols()
}
RUN = {"main": {**PROTOCOL["main"], "seeds": 5}, "glue": PROTOCOL["glue"]}
ITEMS = {  # each study's data sets' items as its paper prints them (Table 1, Table 2)
    (s, d.removeprefix("*/")): int(v.replace(",", ""))
    for s, d, v in read_published().query("quantity == 'items'")[["study", "setup", "value"]].values
}
CLASSES = {  # a verdict's class by the words it starts with (after its mark; else undecided)
    "against": (st.NOT_SUPPORTED, st.NOT_CONSISTENT, st.DIFFERS, st.UNTESTED_FAILS),
    "for": (st.SUPPORTED, st.AGREES, st.CONSISTENT),
    "stand-in": ("stand-in",),
}
# Each status: what its checks may read, and what it needs one of (reproduced: computed in
# :func:`row_problems`; a formula only by identities; ``tiny``: a table of :data:`TINY`).
ANY = {"undecided", "computed", "stand-in", "tiny"}
RULES = {
    "reproduced": ({"for", "equal", "computed"}, {"for", "equal"}),
    "not reproduced": ({"against", "undecided", "computed"}, {"against"}),
    "not judged": (ANY | {"for", "equal", "near-guaranteed", "below scale"}, set()),
    "stand-in": (ANY | {"against", "for"}, {"stand-in"}),
    "online or GPU only": ({"tiny", "plan"}, {"plan"}),
    "no counterpart": (set(), set()),
}
STATUSES, KINDS = tuple(RULES), ("empirical", "formula")
TAGS = {"stand-in": ON_STAND_IN, "below scale": "below the scale", "equal": "equals the paper's"}
TAGS["near-guaranteed"] = NEAR_GUARANTEED  # TAGS: a read's words on the page
SETUP = ("setup", "setup (ours)", "encoder", "model", "dataset", "task")  # a table row's setup


def rows(root: Path = ROOT) -> pd.DataFrame:
    """docs/coverage.csv, or ValueError naming its file, row and column in one line."""
    found: list[list[str]] = []
    try:
        found.extend(csv.reader(io.StringIO(intake.read_text(root, str(DATA), CAP)), strict=True))
    except csv.Error as error:
        raise ValueError(f"{DATA}, row {len(found) + 1}: not CSV ({error})") from None
    header = found[0] if found else []
    if missing := [c for c in COLUMNS if c not in header]:
        raise ValueError(f"{DATA}, row 1 (the header): no column {', '.join(missing)}")
    for number, line in enumerate(found[1:], start=2):
        if len(line) != len(header):
            where = f"{DATA}, row {number}, column {min(len(line), len(header)) + 1}"
            raise ValueError(f"{where}: {len(line)} cells, the header has {len(header)}")
    return pd.DataFrame(found[1:], columns=header, dtype=str)


def checks_of(row) -> list[str]:
    return [c.strip() for c in row["checks"].split(" | ") if c.strip()]


@functools.cache
def table(root: Path, file: str) -> pd.DataFrame:
    """A CSV's rows, or the tables a committed page shows as one frame, from the code that
    renders them (:meth:`~isotropy.committed.record.Page.tables`; cells without ``*`` and `)."""
    if not file.endswith(".md"):
        text = intake.read_text(root, file, CAP)
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    from isotropy.committed import REGISTRY  # the registry holds this module's run

    pages = [p for run in REGISTRY for p in run.pages if str(p.path) == file]
    frames = [f.astype(str) for p in pages for f in p.tables(root)]
    if not frames:
        raise ValueError(f"{file} is no committed page that shows tables")
    shown = pd.concat(frames, ignore_index=True).fillna("")
    return shown.map(lambda cell: cell.strip().strip("*`").strip())


def select(root: Path, file: str, conditions: str | None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``file`` meeting ``column=value; column~text``, and what is wrong with them."""
    frame, problems = table(root, file), []  # ValueError (pandas' too): outcome's
    keep = pd.Series(True, index=frame.index)
    for condition in filter(None, (c.strip() for c in (conditions or "").split(";"))):
        match = re.fullmatch(r"(.+?)\s*([=~])\s*(.+)", condition)
        if not match or match.group(1) not in frame.columns:
            problems.append(f"{file}: {condition!r} names no column of the table")
            continue
        column, how, value = match.groups()
        cells = frame[column]
        keep &= (cells == value) if how == "=" else cells.str.contains(value, regex=False)
    if not problems and not keep.any():
        problems.append(f"no row of {file} meets [{conditions}]")
    return frame[keep], problems


@functools.cache
def record_of(root: Path, file: str) -> str | None:
    """The committed record of a docs/ table: its page's run's, or the one listing the file."""
    from isotropy.committed import REGISTRY  # the registry holds this module's run

    for run in (r for r in REGISTRY if r.records and any(str(p.path) == file for p in r.pages)):
        return str(run.records[0].path)
    for path in sorted((root / "docs/data").glob("*.json")):
        named = intake.read_json(root, f"docs/data/{path.name}")
        if file in named.get("files_sha256", {}) or named.get("file") == file:
            return f"docs/data/{path.name}"
    return None


def below_scale(known: dict[str, Any], protocol=PROTOCOL, setup: str | None = None) -> str:
    """How a run's settings fall short of its study's protocol, and its recorded items (of any
    data set, or of ``setup``'s) of the paper's ('' when they do not)."""
    settings = {**known["settings"], "seeds": len(known["settings"].get("seeds", []))}
    wanted = protocol.get(known["study"], {}).items()
    short = [f"{k} {settings.get(k)}, the paper's {v}" for k, v in wanted if settings.get(k) != v]
    for ran, n in known["items"].items():  # of a table row's setup: its own data set's
        data = ran.split("/")[-1]
        if n < ITEMS.get((known["study"], data), 0) and (setup is None or data in setup.split("/")):
            short.append(f"{ran} {n:,} items, the paper's {ITEMS[known['study'], data]:,}")
    return ", ".join(short)


def on_paper(known: dict[str, Any], setup: str) -> bool:
    """Whether a setup (``encoder/data…``) ran the paper's model on the paper's data."""
    parts, encoder_of = set(re.split(r"[/ ,]+", setup)), known["encoder_of"]
    encoders = parts & {*encoder_of.values(), *known["papers"]}
    encoders |= {encoder_of[p] for p in parts if p in encoder_of}
    labels = any(f"{p}_labels" in known["stand_ins"] for p in parts)
    return bool(encoders) and encoders <= known["papers"] and not labels


def _cited(root: Path, row) -> pd.DataFrame:
    """The config/published_values.csv rows the row's checks of that file select (their index)."""
    found = [TABLE.fullmatch(check) for check in checks_of(row)]
    chosen = [select(root, PUBLISHED, m.group(2))[0] for m in found if m and m[1] == PUBLISHED]
    return pd.concat(chosen) if chosen else pd.DataFrame(columns=["setup", "value", "quantity"])


def _equal(conditions: str | None, cited: pd.DataFrame) -> bool:
    """Whether each ``column=number`` a check pins is the paper's number for it in a named setup."""
    pairs = [[s.strip() for s in c.split("=", 1)] for c in (conditions or "").split(";")]
    pinned = [p for p in pairs if len(p) == 2 and re.fullmatch(r"-?[\d.]+", p[1])]
    setups = cited["setup"].str.removeprefix("*/").isin({p[-1] for p in pairs})
    values, quantity = cited["value"].str.replace(",", ""), cited["quantity"]
    return bool(pinned) and all(
        (setups & (values == v) & quantity.str.startswith(k.rstrip("s"))).any() for k, v in pinned
    )


def outcome(root: Path, check: str, row):
    """What one check of ``row`` reads (:data:`RULES`' words), the setups each claim reads *for*
    or *equal* in, what is wrong with it, and what the page says it holds up (empty: nothing); a
    record holds up only the protocol the row's statement states."""
    try:  # a file missing, a record that is no JSON object, a configuration without a section
        if match := IDENTITY.fullmatch(check):
            return _identity(root, match.group(1))
        if match := PLAN.fullmatch(check):
            missing = [f for f in match.group(1).split(" + ") if not (root / f).is_file()]
            return {"plan"}, {}, [f"{f} does not exist" for f in missing], "a dry run's plan"
        if not (match := TABLE.fullmatch(check)):
            return set(), {}, [f"{check!r} is no table, record, identity or plan"], ""
        file, conditions = match.groups()
        if file.endswith(".json"):  # a record: its run at the paper's protocol, in these words
            known = run_facts(root, file)
            short, wanted = below_scale(known, RUN), RUN.get(known["study"], {}).items()
            words = ("every update" if k == "metric_stride" else f"{v:,} {k}" for k, v in wanted)
            read = ("below scale" if short else "equal") if known["papers"] else "stand-in"
            stated = read == "equal" and all(w in row["statement"] for w in words)
            said = f"{Path(file).name}: {short or 'at the paper’s protocol'}"
            return {read}, {file: {"run"}} if stated else {}, [], said
        selected, problems = select(root, file, conditions)
        if file == PUBLISHED or problems:
            return set(), {}, problems, ""
        return _table_reads(root, file, conditions, selected, row)
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as error:
        return set(), {}, [f"{check}: {str(error).splitlines()[0]}"[:300]], ""


@functools.cache
def _identity(root: Path, name: str):
    """:func:`outcome` of identity ``name`` on the committed array (:data:`POINTS`)."""
    from isotropy.metrics import references  # loads the reference packages

    checked_record(root, POINTS_RECORD)
    with np.load(io.BytesIO(intake.read_inside(root, POINTS, CAP)), allow_pickle=False) as found:
        x, y = found["points"].astype(np.float64), found["positive"].astype(bool)
    (holds, independent), tolerance = references.identity(name, x, y), references.TOLERANCE
    read, setup = ("for" if holds else "against") if independent else "computed", "miniLM/polarity"
    if read == "for" and not on_paper(run_facts(root, POINTS_RECORD), setup):  # the record's
        read = "stand-in"
    said = f"{'holds' if holds else 'fails'} within {tolerance:g}" if independent else "ours"
    claims = {f"identity {name}": {setup}} if read == "for" else {}
    return {read}, claims, [], f"identity {name}: {said}"


def _table_reads(root: Path, file: str, conditions, selected: pd.DataFrame, row):
    """:func:`outcome` of the selected rows of a table: what each reads, and the label."""
    tiny, reads, shown, claims = file.startswith(TINY), set(), set(), dict[str, set[str]]()
    known = None if tiny or not (record := record_of(root, file)) else run_facts(root, record)
    equal = _equal(conditions, _cited(root, row))
    for cells in selected.to_dict("records"):
        verdict, setup = cells.get("verdict"), "/".join(cells[c] for c in SETUP if cells.get(c))
        word = (verdict or "").strip("*✅❌❔➖ ")  # its class by the words it starts with
        read = next((c for c, s in CLASSES.items() if word.casefold().startswith(s)), "undecided")
        if not verdict:
            read = "equal" if equal else "computed"  # the check's pinned numbers, per table
        elif "near-guaranteed" in word.casefold() or near_guaranteed(cells):  # page or cells say
            read = "near-guaranteed"
        # What was run (stand-in, tiny run, below scale) names the read before near-guaranteed.
        said = cells.get("stand_in") or "stand-in" in " ".join(map(str, cells.values()))
        if said or (known and (not known["papers"] or setup and not on_paper(known, setup))):
            read = "stand-in"  # the cells say so, or the record's models (of the setup)
        elif tiny or known is None or not setup:  # nothing known of the run or the setup
            read = "tiny" if tiny else {"equal": "computed", "for": "undecided"}.get(read, read)
            read = "undecided" if read == "against" else read
        elif known and below_scale(known, setup=setup) and read not in ("undecided", "computed"):
            read = "below scale"
        reads.add(read)
        if verdict:  # the verdict, and what the record says of it
            word, tag = re.split(r"\*\*| \(| within", word)[0], "" if tiny else TAGS.get(read, "")
            tagged = tag.split(":")[0] in word or "stand-in" in word
            shown.add(word if tagged else f"{word} ({tag})")
        if read in ("for", "equal"):
            key = cells.get("claim") or cells.get("statistic") or cells.get("quantity") or file
            claims.setdefault(key, set()).add(setup)
    said = next((TAGS[r] for r in ("stand-in", "equal") if r in reads), "computed")
    name = f"{Path(file).name}{' (tiny run)' if tiny else ''}"
    return reads, claims, [], f"{name}: {', '.join(sorted(shown) or [said])}"


def row_problems(row, root: Path = ROOT) -> list[str]:
    """Why a row's checks do not hold it up or read against its status; *reproduced*: every claim
    it names counted, on the paper's model and data at its scale, in every setup it states."""
    item, status, kind = row["id"], row["status"], row.get("kind", "") or "empirical"
    if status not in STATUSES or kind not in KINDS:
        return [f"{item}: status {status!r} or kind {kind!r} is none of {STATUSES + KINDS}"]
    (may, needs), found, reads, named = RULES[status], [], set(), dict[str, set[str]]()
    for check in checks_of(row):
        read, claims, problems, _ = outcome(root, check, row)
        found += problems + [f"{status}, yet {check} reads {sorted(r)}" for r in [read - may] if r]
        reads |= read
        for claim in (c for c in claims if c.startswith("identity ") == (kind == "formula")):
            named.setdefault(claim, set()).update(claims[claim])
    wanted = int(row.get("setups") or 1)  # setups the statement covers (empty: one)
    short = {c: len(s) for c, s in named.items() if len(s) < wanted}
    unmet = [f"{c} holds in {n} setup(s), the statement covers {wanted}" for c, n in short.items()]
    lacks = "no identity holds on data" if kind == "formula" else "no check reads for it"
    unmet += [f"{lacks} on the paper's model and data at its scale"] * (not named)
    if needs and not reads & needs:
        found.append(f"{status} ({kind}) needs a check reading one of {sorted(needs)}")
    if status == "reproduced":
        found += [f"reproduced, yet {reason}" for reason in unmet]
    elif not unmet and reads <= RULES["reproduced"][0]:
        found.append(f"{status}, yet its checks reproduce it")
    found += [f"{status} says why"] * (not row["why"] and status != "reproduced")
    return [f"{item}: {p}" for p in found]


def unlisted(published: pd.DataFrame, data: pd.DataFrame, root: Path = ROOT) -> list[str]:
    """The papers' printed numbers (rows of config/published_values.csv) no row selects."""
    chosen = {i for _, row in data.iterrows() for i in _cited(root, row).index}
    return [f"{p['paper']}, {p['source']}" for i, p in published.iterrows() if i not in chosen]


def cell(text: str) -> str:
    """``text`` in one Markdown table cell: one line, no comment opened (``|``: the writer's)."""
    return " ".join(str(text).split()).replace("<!--", "&lt;!--")


def _held_up_by(row, root: Path) -> str:
    counted = Counter(outcome(root, check, row)[3] for check in checks_of(row))
    return cell("; ".join(w if n == 1 else f"{w} ×{n}" for w, n in counted.items() if w) or "–")


def parts(root: Path = ROOT) -> list[Any]:
    """The counts per paper and status, then one table per paper (reasons: docs/coverage.csv)."""
    for cached in (table, record_of, run_facts, _identity):  # their files may have been rewritten
        cached.cache_clear()
    raw = rows(root)
    data = raw.map(cell)
    group = data["paper"].mask(data["id"].str.startswith("ours:"), "ours")
    papers = [*dict.fromkeys(data.loc[group != "ours", "paper"]), "ours"]  # as they appear
    counts = pd.crosstab(group, data["status"]).reindex(papers, columns=STATUSES, fill_value=0)
    found: list[Any] = [counts.assign(items=counts.sum(axis=1)).reset_index()]
    for paper in found[0]["paper"]:
        part = data[group == paper]
        prefixes = set(part["id"].str.split(":").str[0] + ":")
        prefix = prefixes.pop() if len(prefixes) == 1 else ""  # said once, in the header
        shown = {f"id{f' (`{prefix}…`)' if prefix else ''}": part["id"].str.removeprefix(prefix)}
        shown |= {"item": part["item"] + ": " + part["statement"], "status": part["status"]}
        shown["held up by"] = [_held_up_by(raw.loc[index], root) for index in part.index]
        found += [f"## {OURS if paper == 'ours' else paper}\n", pd.DataFrame(shown)]
    return found


COVERAGE = CommittedRun(
    name="coverage",
    records=(Checksums(Path(POINTS_RECORD), (Path(POINTS),)),),
    pages=(Page(PAGE, parts, page_markers("coverage")),),
)
