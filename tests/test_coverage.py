"""docs/coverage.csv's rows (isotropy.committed.coverage): a check whose outcome contradicts its
row's status fails here, and so does a number the papers print with no row."""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
import tiny_workflow
from IsoScore.IsoScore import IsoScore

from isotropy import metrics as M
from isotropy import paths, studies
from isotropy.committed import coverage as C
from isotropy.io import markdown_table
from isotropy.metrics import references as R
from isotropy.workflow import targets
from isotropy.workflow.config import load_config

ROOT = C.ROOT
MS, G, NR = "docs/main-study.md", "docs/data/glue_claims.csv", "not reproduced"
GOLD, P, T2 = "tests/golden/results/", "miniLM/polarity", "docs/data/glue_table2.csv"
AT = {"updates": 250, "metric_stride": 1}  # appendix A's protocol
TABLE1, PUB = "docs/data/main_table1.csv", "config/published_values.csv"
NONE, STAND = "no check reads for it on the paper's model and data", "reads ['stand-in']"
NO_ID, NO_TEST = "no identity holds on data", "is no table, record, identity or plan"
GLOVE_TREND = f"{MS}[claim~isoscore_falls; setup=word2vec/pos]"
APPB = "test_appendix_b_bound_holds_on_random_and_real_clouds_and_is_tight_at_collapse"


def _row(**cells) -> pd.Series:
    base = dict(id="mickus:planted", paper="Mickus 2024", item="§3.2", statement="x")
    base |= dict(status="reproduced", produced_by="", why="planted", kind="empirical", setups="")
    return pd.Series({**base, **cells})


def test_every_row_is_held_up_by_checks_whose_outcome_fits_its_status():
    data = C.rows()
    assert data["id"].is_unique, data["id"][data["id"].duplicated()].tolist()
    problems = [p for _, row in data.iterrows() for p in C.row_problems(row)]
    assert not problems, "\n".join(problems)


PLANTED = [
    # the tiny test run's claims (here one that reads not supported) are never the paper's scale
    (dict(checks=f"{GOLD}claims.csv[claim=spearman_strongly_negative; setup={P}]"), "['tiny']"),
    (dict(checks=f"{GOLD}claims.csv[claim=pearson_negative; setup={P}]"), "['tiny']"),
    (dict(checks=f"{GOLD}paper_comparison.csv[quantity=pearson_r; setup=word2vec/pos]"), STAND),
    # the protocol run's r that agrees, called not reproduced, or (an extension) not judged
    (dict(status=NR, checks=f"{MS}[setup (ours)={P}; paper row~Pearson r]"), "['for']"),
    (dict(status="not judged", checks="docs/extensions.md[claim=deep_output_anisotropic]"), "yet"),
    # online or GPU only with a number the tiny run judged, and no plan
    (dict(status="online or GPU only", checks=f"{GOLD}claims.csv[claim=pearson_negative]"), "plan"),
    # a stand-in whose table states no substitute and no test
    (dict(status="stand-in", checks=f"{GOLD}geometry/cosine_by_layer.csv[layer=0]"), "needs"),
    # a table without a verdict reads computed, which holds up nothing
    (dict(checks="docs/data/main_table1.csv[dataset=polarity]"), NONE),
    # nor does a pinned number the row does not cite from the paper (here the SNLI row count)
    (dict(checks="docs/data/main_table1.csv[dataset=snli; rows=12982]"), NONE),
    # a verdict its page calls near-guaranteed, or a passing ρ no page marks, is no evidence
    (dict(checks=f"{MS}[setup (ours)={P}; paper row~Spearman]"), "reads ['near-guaranteed']"),
    (dict(checks=f"{G}[claim=spearman_strongly_negative]"), "reads ['near-guaranteed']"),
    # what was run is read first: a stand-in's near-guaranteed claim reads stand-in
    (dict(checks="docs/istar-gpu.md[setup~λ=-1; claim=negative_lambda_lowers_isoscore]"), STAND),
    # issue 93's eight ways around the rule, each read through the records:
    # 1. a stand-in whose cells never say so (the GloVe trend rows), known from the run's record
    (dict(checks=GLOVE_TREND), STAND),
    # 2. a test says what data it ran on (its marker) and may assert nothing: no test counts
    (dict(checks="tests/test_headline.py::test_the_committed_run_is_at_the_papers_protocol"), NONE),
    (dict(status="stand-in", checks="tests/test_rajaee_cls.py::test_tables_and_figure"), "ne"),
    # and a run's record holds up only a statement of its protocol (the base's is Pearson's)
    (dict(checks="docs/data/main_run.json"), NONE),
    # 3. an empirical item called a formula: a synthetic test, or a verdict, holds up none
    (dict(kind="formula", checks="tests/test_optimize.py::test_metric_stride_and_sampling"), NO_ID),
    (dict(kind="formula", checks=f"{MS}[setup (ours)={P}; paper row~Pearson r]"), NO_ID),
    # and an identity holds up no empirical item
    (dict(checks="identity:isoscore"), NONE),
    # 4. one cell holding up a statement over more setups, or a statistic alone of two
    (dict(setups="24", checks=f"{G}[claim=silhouette_rises]"), "holds in 10 setup(s)"),
    (dict(checks=f"{G}[claim=pearson_negative] | {G}[claim=spearman_strongly_negative]"), "near"),
    # 6. a test of our own reading holds up a formula (appendix B's bound), even against it
    (dict(kind="formula", checks=f"tests/test_objectives.py::{APPB}"), NO_ID),
    (dict(status=NR, kind="formula", checks=f"tests/test_objectives.py::{APPB}"), NO_TEST),
    # 7. not reproduced on a stand-in's verdict (the GloVe analogies, no model pinned)
    (dict(status=NR, checks="docs/data/analogies.csv[transform=whitened]"), "['ag"),
    (dict(status=NR, checks=GLOVE_TREND), STAND),
    # 8. a pinned number equal to another of the row's numbers (polarity's rows = its items)
    (dict(checks=f"{TABLE1}[dataset=polarity; rows=10662] | {PUB}[source~Table 1, row pol]"), NONE),
    (dict(kind="law"), "kind 'law' is none of"),
    (dict(status="no counterpart", checks="identity:x"), "identity 'x' is none of"),
    (dict(checks=f"{TABLE1}[dataset=polarity; items=10663]"), "no row of"),
]


@pytest.mark.parametrize(("cells", "expected"), PLANTED)
def test_a_planted_row_whose_check_contradicts_its_status_fails(cells, expected):
    problems = C.row_problems(_row(**cells))
    assert any(expected in p for p in problems), problems


def test_a_row_that_its_checks_hold_up_passes():
    row = _row(
        id="mickus:table1",
        checks="docs/data/main_table1.csv[dataset=polarity; items=10662; params=4094976] | "
        "config/published_values.csv[source~Table 1, row polarity]",
    )
    assert C.row_problems(row) == []
    # the same counts without the paper's numbers they equal are merely computed
    alone = _row(id="mickus:table1", checks=row["checks"].split(" | ")[0])
    assert any("needs a check reading" in p for p in C.row_problems(alone))
    # a formula: an identity computed on data against an independent reference
    defs = _row(kind="formula", checks="identity:isoscore | identity:silhouette")
    assert C.row_problems(defs) == []
    assert C.row_problems(_row(status="not judged", kind="formula", checks=defs["checks"])) == [
        "mickus:planted: not judged, yet its checks reproduce it"
    ]


def test_a_formula_test_asserting_nothing_holds_up_no_row(tmp_path):
    """Issue 93: a test's body may be `assert True`; no status rests on a test any more."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_t.py").write_text("def test_x():\n    assert True\n")
    for status in (NR, "stand-in"):
        row = _row(status=status, kind="formula", checks="tests/test_t.py::test_x")
        assert any(NO_TEST in p for p in C.row_problems(row, root=tmp_path)), status


def test_an_identity_of_our_own_code_or_one_that_fails_holds_up_no_formula(monkeypatch):
    ours, reference = R.IDENTITIES["isoscore"]
    monkeypatch.setitem(R.IDENTITIES, "ours", (ours, lambda x, y: M.isoscore(x)))
    monkeypatch.setitem(R.IDENTITIES, "off", (ours, lambda x, y: 1 + IsoScore(x)))
    C._identity.cache_clear()
    for name, said in [("ours", "needs a check reading"), ("off", "reads ['against']")]:
        problems = C.row_problems(_row(kind="formula", checks=f"identity:{name}"))
        assert any(said in p for p in problems) and any(NO_ID in p for p in problems), problems
    assert "identity ours: ours" in C.outcome(ROOT, "identity:ours", pd.DataFrame())[3]
    assert R.independent(reference) and not R.independent(lambda x: R._eq1(x, M.isoscore(x)))
    C._identity.cache_clear()


def test_every_number_the_papers_print_has_a_row_and_a_planted_one_without_fails():
    published, data = pd.read_csv(ROOT / C.PUBLISHED, dtype=str, keep_default_na=False), C.rows()
    assert C.unlisted(published, data) == []
    planted = published.iloc[[0]].assign(source="Table 4, row polarity, column items")
    missing = C.unlisted(pd.concat([published, planted], ignore_index=True), data)
    assert missing == ["Mickus et al. 2024, Table 4, row polarity, column items"]
    # and a row dropped from the file leaves its printed numbers without one
    missing = C.unlisted(published, data[data["id"] != "cai:lid-elmo"])
    assert missing and all("row ELMo" in m for m in missing), missing


def test_the_counts_are_per_paper_and_status():
    """The page's freshness and its tables as shown: tests/test_committed.py, as every page's."""
    data, counts = C.rows(), C.parts()[0].set_index("paper")
    assert len((ROOT / C.PAGE).read_bytes()) <= 20_000  # one row per item, reasons in the CSV
    assert list(counts.columns) == [*C.STATUSES, "items"]
    theirs = data.loc[~data["id"].str.startswith("ours:"), "paper"].value_counts()
    assert counts["items"].drop("ours").to_dict() == theirs.to_dict()


def _plans(data: pd.DataFrame) -> dict[tuple[str, ...], list[str]]:
    """The results files each configuration is said to plan, by configuration."""
    planned: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for _, row in data.iterrows():
        for check in C.checks_of(row):
            if match := C.PLAN.fullmatch(check):
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
    data = C.rows()
    plans = _plans(data[data["status"] == "online or GPU only"])
    assert plans
    for number, (configs, files) in enumerate(sorted(plans.items())):
        outputs = planned_outputs(tmp_path / str(number), configs, files)
        assert not set(files) - outputs, (configs, sorted(set(files) - outputs))


@pytest.mark.slow
def test_a_planted_online_row_that_names_the_wrong_configuration_fails_its_dry_run(tmp_path):
    # the slides' BERT runs on WiC without their overlay: config.yaml alone plans MiniLM on SST-2
    checks = "config.yaml > results/rajaee_cls/bert/wic/cluster/seed0/metrics.json"
    row = _row(id="rajaee:cls-bert", status="online or GPU only", why="BERT", checks=checks)
    assert C.row_problems(row) == []  # the configuration exists: only the dry run can tell
    ((configs, files),) = _plans(pd.DataFrame([row])).items()
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
    """The inputs of the Snakefile's ``rule all`` and of every study's own target rule (the
    Snakefile's loop over :func:`isotropy.studies.target_rules`), evaluated with
    ``config.yaml`` (so a target added to or dropped from them counts here too)."""
    config = load_config([ROOT / "config.yaml"]).settings
    names = {"targets": targets, "paths": paths, "SETTINGS": config, "studies": studies}
    made = _rule_inputs((ROOT / "Snakefile").read_text(encoding="utf-8"), "rule all:", names)
    assert made, "rule all lists no input"
    return made | {path for files in studies.target_rules(config).values() for path in files}


def test_every_named_file_is_a_target_or_in_the_repository():
    made, missing = _workflow_targets(), []
    for _, row in C.rows().iterrows():
        for name in row["produced_by"].split():
            if name.startswith("results/"):
                # an online row's files are planned by its named configuration (dry run above)
                if name not in made and row["status"] != "online or GPU only":
                    missing.append(f"{row['id']}: {name} is no target of a study")
            elif not (ROOT / name).exists():
                missing.append(f"{row['id']}: {name} is not in the repository")
    assert not missing, "\n".join(missing)


def test_a_page_is_read_from_the_code_that_renders_it_never_its_markdown(tmp_path):
    """Issue 93: a verdict typed into a page by hand is not what a check of the page reads."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    typed = (tmp_path / MS).read_text(encoding="utf-8").replace("**supported**", "**differs**")
    (tmp_path / MS).write_text(typed, encoding="utf-8")
    assert C.table(tmp_path, MS).equals(C.table(ROOT, MS))


@pytest.mark.parametrize(
    ("name", "record", "read"),
    [  # 5. scale: the supported claims from a record of 10 updates read below scale
        ("glue_run", {"config": {"glue": {"updates": 10, "metric_stride": 1}}}, "below scale"),
        # ... and from a record at the protocol whose own Table 2 ran 100 items of each task
        ("glue_run", {"config": {"glue": AT}, "files_sha256": {T2: ""}}, "below scale"),
        # 1. from a record of I-STAR's MiniLM (not the poster's models), its cells silent on it
        ("istar_gpu_record", {"calls": [{"istar": {"run_models": ["miniLM"]}}]}, "stand-in"),
    ],
)
def test_a_record_below_scale_or_on_a_stand_in_reproduces_nothing(tmp_path, name, record, read):
    (tmp_path / "docs/data").mkdir(parents=True)
    (tmp_path / "config.yaml").write_bytes((ROOT / "config.yaml").read_bytes())
    record["files_sha256"] = {G: "", **record.get("files_sha256", {})}  # issue 93's 5. and 1.
    (tmp_path / f"docs/data/{name}.json").write_text(json.dumps(record))
    pd.read_csv(ROOT / T2).assign(items=100).to_csv(tmp_path / T2, index=False)
    (tmp_path / G).write_bytes((ROOT / G).read_bytes())
    for claim in ("silhouette_rises", "pearson_negative"):  # near-guaranteed: what ran goes first
        problems = C.row_problems(_row(checks=f"{G}[claim={claim}]"), root=tmp_path)
        assert any(f"reads ['{read}']" in p for p in problems), (claim, problems)


def test_the_writer_reads_inside_the_repository_and_escapes_its_cells(tmp_path):
    outside = _row(checks="docs/../../x.csv[a=1]")
    assert any("names a path outside" in p for p in C.row_problems(outside)), outside
    shown = markdown_table(pd.DataFrame({"x": [C.cell("a|b\nc <!-- end of the generated -->")]}))
    assert "| a\\|b c &lt;!-- end of the generated --> |" in shown
    (tmp_path / "docs").mkdir()
    for text, said in [
        ("paper,status\nx,y\n", "docs/coverage.csv, row 1 (the header): no column id"),
        (",".join(C.COLUMNS) + '\n"a,b\n', "docs/coverage.csv, row 2: not CSV"),
        (",".join(C.COLUMNS) + "\na,b\n", "docs/coverage.csv, row 2, column 3: 2 cells"),
    ]:
        (tmp_path / C.DATA).write_text(text)
        with pytest.raises(ValueError, match=re.escape(said)):
            C.rows(tmp_path)
