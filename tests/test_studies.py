"""The study registry (isotropy.studies): the schema's ``studies`` list, the rule files and
``rule all`` read it, one way (a planted second way is caught)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tiny_workflow import choices, run_snakemake

from isotropy import studies
from isotropy.configuration import Config
from isotropy.studies.record import StudySpec

ROOT = Path(__file__).resolve().parents[1]
# What rule all may list beside the studies' files: the verdict pages and the report.
RULE_ALL_EXTRAS = {"paths.CLAIMS", "paths.PAPER_COMPARISON", "paths.REPORT_OVERVIEW"}


def test_the_configuration_lists_exactly_the_studies_config_studies_may_name():
    enum = choices(Config, "studies")
    listed = [s.name for s in studies.REGISTRY if s.rule_all == "when_listed"]
    assert sorted(enum) == sorted(listed)
    assert set(Config.default("studies")) <= set(enum)


def _rule_all_entries(snakefile: str) -> list[str]:
    """The entries of ``rule all``'s input, one per line as the Snakefile spells them."""
    block = re.search(r"^rule all:\n((?:[ \t]+.*\n|\n)+)", snakefile, re.MULTILINE)
    assert block, "the Snakefile has no rule all"
    body = block.group(1).split("input:", 1)[1]
    return [line.strip().rstrip(",") for line in body.splitlines() if line.strip()]


def _other_ways_into_rule_all(snakefile: str) -> list[str]:
    return [
        entry
        for entry in _rule_all_entries(snakefile)
        if entry not in RULE_ALL_EXTRAS and entry != "studies.rule_all_targets(SETTINGS)"
    ]


def test_rule_all_builds_the_studies_one_way():
    """Rule all lists the studies through the registry alone (each record says when); a second
    way (rule all adding the section-2 figures by its own call) is caught."""
    snakefile = (ROOT / "Snakefile").read_text(encoding="utf-8")
    assert "studies.rule_all_targets(SETTINGS)" in _rule_all_entries(snakefile)
    assert _other_ways_into_rule_all(snakefile) == []
    planted = snakefile.replace(
        "        studies.rule_all_targets(SETTINGS),\n",
        "        studies.rule_all_targets(SETTINGS),\n        targets.section2_outputs(config),\n",
    )
    assert _other_ways_into_rule_all(planted) == ["targets.section2_outputs(config)"]


def test_a_record_joins_rule_all_when_listed_or_when_configured(monkeypatch, config):
    """A fourth way is refused by mypy: ``StudySpec.rule_all`` is a Literal."""
    config = Config.model_validate(config)
    listed = StudySpec(name="section2", outputs=lambda config: ["toy.csv"])
    present = StudySpec("section2", listed.outputs, rule_all="when_configured")
    assert listed.target == "section2_study"
    assert present.target is None  # rule all alone builds it
    for spec, configured, only_listed in ((listed, [], ["toy.csv"]), (present, ["toy.csv"], [])):
        monkeypatch.setattr(studies, "REGISTRY", (spec,))
        monkeypatch.setattr(studies, "BY_NAME", {"section2": spec})
        assert studies.rule_all_targets(config.model_copy(update={"studies": []})) == configured
        alone = config.model_copy(update={"studies": ["section2"], "section2": None})
        assert studies.rule_all_targets(alone) == only_listed


def test_each_record_is_consistent_with_the_rule_files():
    """Each record's rule file exists, and its costed rules are defined but not its target rule,
    which the Snakefile's one loop writes from the record (a target rule written by hand would
    be a second list of its files); a study's name, target and costed rules are its own."""
    defined = {
        smk.relative_to(ROOT).as_posix(): set(re.findall(r"^rule (\w+):", smk.read_text(), re.M))
        for smk in (ROOT / "rules").glob("*.smk")
    }
    snakefile = (ROOT / "Snakefile").read_text(encoding="utf-8")
    assert "for study_target, final_files in studies.target_rules(SETTINGS).items():" in snakefile
    every_rule = set().union(*defined.values())
    for spec in studies.REGISTRY:
        assert spec.target not in every_rule, (spec.name, spec.target)
        assert set(spec.job_costs) <= every_rule, spec.name
    assert set(studies.rule_files()) <= set(defined)
    for key in ("name", "target"):
        values = [getattr(s, key) for s in studies.REGISTRY if getattr(s, key) is not None]
        assert len(values) == len(set(values)), key
    costed = [rule for s in studies.REGISTRY for rule in s.job_costs]
    assert len(costed) == len(set(costed)), "a rule costed by two studies"


def test_rule_all_takes_the_listed_studies_in_order_then_the_configured_ones(config):
    config = Config.model_validate(config)
    made = studies.rule_all_targets(config)
    assert made == studies.study_targets(config, [*config.studies, "section2", "istar_estimator"])
    assert made[0] == "results/main/table1.csv" and "results/section2/figure.pdf" in made
    trimmed = config.model_copy(update={"studies": ["glue"], "section2": None})
    assert studies.rule_all_targets(trimmed)[:4] == studies.BY_NAME["glue"].outputs(config)
    assert "results/section2/figure.pdf" not in studies.rule_all_targets(trimmed)


def test_every_study_module_is_registered_in_order():
    """The registry holds every module of isotropy.studies that registers a study (one defining
    ``STUDIES``), and only those, the ones its ``ORDER`` names first and in that order."""
    package = ROOT / "src" / "isotropy" / "studies"
    registering = {
        p.stem for p in package.glob("*.py") if re.search(r"^STUDIES = ", p.read_text(), re.M)
    }
    names = [m.__name__.rpartition(".")[2] for m in studies.MODULES]
    assert set(names) == registering and names[: len(studies.ORDER)] == list(studies.ORDER)


@pytest.mark.slow
def test_each_target_rule_builds_its_records_outputs(tmp_path, config):
    """The target rules (the Snakefile's loop over the records) take exactly their records'
    outputs, and rule all the records' (studies.rule_all_targets): one dry run of every
    target."""
    config = Config.model_validate(config)
    specs = [s for s in studies.REGISTRY if s.target]
    args = ["-n", "--forceall", "all", *(s.target for s in specs)]
    dry = run_snakemake(tmp_path, [ROOT / "config.yaml"], None, *args, timeout=900, check=True)
    planned = dict(re.findall(r"^(?:local)?rule (\w+):\n\s+input: ([^\n]*)", dry.stdout, re.M))
    for spec in specs:
        assert planned[spec.target].split(", ") == spec.outputs(config), spec.target
    assert planned["all"].split(", ")[:-3] == studies.rule_all_targets(config)


def test_each_study_claims_page_joins_in_registry_order():
    """Rule check_claims joins each listed study's own claims page (``StudySpec.claim_page``) as
    it is, the extension study's before the Rajaee CLS study's (as the page always had them)."""
    import pandas as pd
    from test_rajaee_cls import _tables

    assert studies.claim_pages({"main_table1": pd.DataFrame()}) == []
    runs, layers = _tables([5e-5, 2e-5, 8e-5], cls_mean=0.5)
    seeds = pd.read_csv(ROOT / "docs/data/extensions_seeds.csv")
    seeds = seeds[seeds["question"] != "criteria"]  # its same-optimum values need last_step
    tables = {"rajaee_cls_runs": runs, "rajaee_cls_layers": layers, "extensions_seeds": seeds}
    pages = studies.claim_pages(tables)
    assert [set(page["study"]) for page in pages] == [{"extensions"}, {"rajaee_cls"}]
    assert set(pages[1]["claim"]) >= {"cls_method_cannot_raise_isotropy"}
