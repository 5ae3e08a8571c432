"""docs/coverage.csv's rows (isotropy.committed.coverage): a check whose outcome contradicts its
row's status fails here, and so does a number the papers print with no row."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
import tiny_workflow

from isotropy import paths, studies
from isotropy.committed import coverage as C
from isotropy.workflow import targets
from isotropy.workflow.config import load_config

ROOT = C.ROOT


def _row(**cells) -> pd.Series:
    base = dict(id="mickus:planted", paper="Mickus 2024", item="§3.2", statement="x")
    base |= dict(status="reproduced", produced_by="", why="planted", kind="empirical")
    return pd.Series({**base, **cells})


def test_every_row_is_held_up_by_checks_whose_outcome_fits_its_status():
    data = C.rows()
    assert data["id"].is_unique, data["id"][data["id"].duplicated()].tolist()
    problems = [p for _, row in data.iterrows() for p in C.row_problems(row)]
    assert not problems, "\n".join(problems)


def test_every_item_a_test_names_is_a_row():
    ids = set(C.rows()["id"])
    named = {
        f"{file.name}::{test} names {item}"
        for file in sorted((ROOT / "tests").glob("test_*.py"))
        for test, items in C.covers(ROOT, f"tests/{file.name}").items()
        for item in items - ids
    }
    assert not named, sorted(named)


PLANTED = [
    # Spearman ρ "reproduced" by a golden claim that reads not supported
    (
        dict(
            checks="tests/golden/results/claims.csv[claim=spearman_strongly_negative; "
            "setup=miniLM/polarity]"
        ),
        "reads ['tiny: against']",
    ),
    # a test that does not name the item
    (
        dict(checks="tests/test_metrics.py::test_metric_equals_its_reference_package"),
        "does not name mickus:planted",
    ),
    # a stand-in's number under reproduced
    (
        dict(
            checks="tests/golden/results/paper_comparison.csv[quantity=pearson_r; "
            "setup=word2vec/pos]"
        ),
        "a stand-in",
    ),
    # the protocol run's r that agrees, called not reproduced
    (
        dict(
            status="not reproduced",
            checks="docs/main-study.md[setup (ours)=miniLM/polarity; paper row~Pearson r]",
        ),
        "reads ['for']",
    ),
    # an extension answer that reads supported, called not judged
    (
        dict(status="not judged", checks="docs/extensions.md[claim=deep_output_anisotropic]"),
        "reads ['for']",
    ),
    # online or GPU only with a number the tiny run judged, and no plan
    (
        dict(
            status="online or GPU only",
            checks="tests/golden/results/claims.csv[claim=pearson_negative; setup=miniLM/polarity]",
        ),
        "needs a check reading one of ['plan']",
    ),
    # a stand-in whose table states no substitute and no test
    (
        dict(
            status="stand-in",
            checks="tests/golden/results/geometry/cosine_by_layer.csv[model=miniLM; layer=0]",
        ),
        "needs a check reading one of ['stated stand-in', 'test']",
    ),
    # a table without a verdict reads computed, which holds up nothing
    (dict(checks="docs/data/main_table1.csv[dataset=polarity]"), "needs a check reading"),
    # nor does a pinned number the row does not cite from the paper (here the SNLI row count)
    (dict(checks="docs/data/main_table1.csv[dataset=snli; rows=12982]"), "needs a check reading"),
    # a test on synthetic data holds up a formula only, never an empirical item
    (
        dict(
            id="mickus:multilabel",
            checks="tests/test_optimize.py::test_multilabel_uses_one_cluster_per_label_vector",
        ),
        "reproduced (empirical) needs a check reading",
    ),
    # the tiny test run's supported claim is not the paper's scale
    (
        dict(
            checks="tests/golden/results/claims.csv[claim=pearson_negative; setup=miniLM/polarity]"
        ),
        "reproduced (empirical) needs a check reading",
    ),
    # a verdict the page itself calls near-guaranteed is no evidence
    (
        dict(checks="docs/main-study.md[setup (ours)=miniLM/polarity; paper row~Spearman]"),
        "reads ['near-guaranteed']",
    ),
    # and so is a passing ρ in a data file, which no page marks (the appendix A run's)
    (
        dict(checks="docs/data/glue_claims.csv[claim=spearman_strongly_negative; setup=mpnet/rte]"),
        "reads ['near-guaranteed']",
    ),
    # a committed run's verdict on a stand-in
    (
        dict(checks="docs/istar-gpu.md[setup~λ=-1; claim=negative_lambda_lowers_isoscore]"),
        "reads ['a stand-in', 'stand-in']",
    ),
    (dict(kind="law"), "kind 'law' is none of"),
    (dict(status="no counterpart", checks="tests/test_metrics.py::x"), "has no test x"),
    (dict(checks="docs/data/main_table1.csv[dataset=polarity; items=10663]"), "no row of"),
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
    alone = row.copy()
    alone["checks"] = row["checks"].split(" | ")[0]
    assert any("needs a check reading" in p for p in C.row_problems(alone))
    # a synthetic test holds up a formula
    eq2 = "tests/test_objectives.py::test_eq2_is_maximal_exactly_for_isotropic_variances"
    formula = _row(id="mickus:eq2", kind="formula", checks=eq2)
    assert C.row_problems(formula) == []


def test_a_test_said_to_run_on_committed_data_must_name_it(tmp_path):
    (tmp_path / "docs/data").mkdir(parents=True)
    (tmp_path / "docs/data/main_table1.csv").write_text("dataset\npolarity\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_x.py").write_text(
        "import pytest\n\n\n"
        '@pytest.mark.covers("mickus:planted", on="docs/data/main_table1.csv")\n'
        "def test_x():\n    assert 1 + 1 == 2\n\n\n"
        '@pytest.mark.covers("mickus:planted", on="docs/data/main_table1.csv")\n'
        "def test_y():\n    assert 'main_table1' != ''\n\n\n"
        '@pytest.mark.covers("mickus:planted", on="mirror")\n'
        "def test_z():\n    pass\n"
    )
    problems = C.row_problems(_row(checks="tests/test_x.py::test_x"), root=tmp_path)
    assert any("never names it" in p for p in problems), problems
    assert C.row_problems(_row(checks="tests/test_x.py::test_y"), root=tmp_path) == []
    problems = C.row_problems(_row(checks="tests/test_x.py::test_z"), root=tmp_path)
    assert any("without the mirror_root fixture" in p for p in problems), problems


def test_every_number_the_papers_print_has_a_row():
    published = pd.read_csv(ROOT / C.PUBLISHED, dtype=str, keep_default_na=False)
    assert C.unlisted(published, C.rows()) == []


def test_a_planted_paper_item_with_no_row_fails():
    published = pd.read_csv(ROOT / C.PUBLISHED, dtype=str, keep_default_na=False)
    planted = published.iloc[[0]].assign(source="Table 4, row polarity, column items")
    missing = C.unlisted(pd.concat([published, planted], ignore_index=True), C.rows())
    assert missing == ["Mickus et al. 2024, Table 4, row polarity, column items"]
    # and a row dropped from the file leaves its printed numbers without one
    data = C.rows()
    missing = C.unlisted(published, data[data["id"] != "cai:lid-elmo"])
    assert missing and all("row ELMo" in m for m in missing), missing


def test_the_counts_are_per_paper_and_status():
    """The page's freshness and a hand edit of it: tests/test_committed.py, as every page's."""
    data, block = C.rows(), C.block()
    # one row per item, each row's reason in docs/coverage.csv only (the docs' budget)
    assert len((ROOT / C.PAGE).read_bytes()) <= 20_000
    for paper in C.papers(data):
        part = data[(data["paper"] == paper) & ~data["id"].str.startswith("ours:")]
        line = next(line for line in block.splitlines() if line.startswith(f"| {paper} |"))
        assert line.endswith(f"| {len(part)} |"), line


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
    row = _row(
        id="rajaee:cls-bert",
        status="online or GPU only",
        why="BERT",
        checks="config.yaml > results/rajaee_cls/bert/wic/cluster/seed0/metrics.json",
    )
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
    config = load_config([ROOT / "config.yaml"])
    names = {"targets": targets, "paths": paths, "config": config, "studies": studies}
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
