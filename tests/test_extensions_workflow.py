"""The extension study through Snakemake: its grid in a dry run (torch-free; its printed
estimate: tests/test_study_estimates.py), and (slow) the few-minute version end to end on a
cut-down copy of the mirror."""

import copy
import re

import pandas as pd
import pytest
import tiny_workflow
import yaml

from isotropy.configuration import Config
from isotropy.extensions import design
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.workflow import config as workflow_config

ROOT = tiny_workflow.ROOT
TINY_EXTENSIONS = ROOT / "config" / "extensions_tiny.yaml"


@pytest.mark.parametrize(
    ("overlays", "optimize", "heldout"),
    [
        ((), 50, 5),  # 2 setups x (linear, deep1, deep2, deep3, triplet) x 5 seeds
        ((TINY_EXTENSIONS,), 16, 2),  # 2 setups x 4 heads x 2 seeds
    ],
)
def test_a_dry_run_plans_every_cell_of_the_grid(tmp_path, overlays, optimize, heldout):
    dry = tiny_workflow.dry_run(tmp_path, "extensions_study", *overlays, torch_free=True)
    counts = {"extensions_optimize": optimize, "extensions_heldout": heldout}
    for rule, jobs in (counts | {"extensions_tables": 1, "extensions_figures": 1}).items():
        assert re.search(rf"{rule}\s+{jobs}\b", dry.stdout), dry.stdout[-3000:]


@pytest.mark.slow
def test_the_tiny_version_runs_end_to_end(tmp_path):
    """4 min 8 s on the shared 2-core machine at load average ~10 (2026-11-25; embeddings
    included)."""
    source = tiny_workflow.require_mirror()
    mirror = tiny_workflow.make_tiny_mirror(source, tmp_path / "mirror")
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    work = tmp_path / "work"
    arguments = ("--cores", "2", "extensions_study")
    result = tiny_workflow.run_snakemake(work, [config, TINY_EXTENSIONS], mirror, *arguments)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    out = work / "results" / "extensions"
    seeds = pd.read_csv(out / "seeds.csv")
    assert set(seeds["question"]) == {"criteria", "deep", "triplet", "heldout"}
    assert set(seeds["seed"]) == {0, 1}
    # one per-seed value recomputed from its trace: the triplet run's IsoScore change
    trace = pd.read_parquet(out / "runs/polarity/triplet/seed1/trace.parquet")
    change = trace["isoscore"].iloc[-1] - trace["isoscore"].iloc[0]
    row = seeds.query(
        "question == 'triplet' and setup == 'polarity' and seed == 1"
        " and quantity == 'isoscore_change'"
    )
    assert row["value"].item() == pytest.approx(change, abs=1e-12)
    # each table's columns and items, each claim's verdict: test_extensions*.py
    claims = pd.read_csv(out / "claims.csv")
    assert {c.name for c in EXTENSION_CLAIMS} == set(claims["claim"])
    for question in ("criteria", "deep", "triplet", "heldout"):
        assert (out / f"{question}.png").stat().st_size > 10_000
        assert "Settings:" in (out / f"{question}.md").read_text()
    items = yaml.safe_load(TINY_EXTENSIONS.read_text())["extensions"]["items"]
    assert f"a seeded sample of at most {items} items" in (out / "criteria.md").read_text()


def test_a_run_counts_as_done_only_when_made_with_these_settings(tmp_path):
    """A run made for another item sample is to do again: the rule's params carry the run's
    settings, so Snakemake's params trigger plans it again and the estimate, which sums the dry
    run's jobs, counts it (the trigger itself: test_estimate.py, issue 34 case 11)."""
    loaded = workflow_config.load_config([str(ROOT / "config.yaml"), str(TINY_EXTENSIONS)])
    run = design.run_settings(loaded.settings, "polarity", "linear", 0)
    config = loaded.config
    config["extensions"]["items"] = 999
    again = design.run_settings(Config.model_validate(config), "polarity", "linear", 0)
    assert again == {**run, "items": 999}
    rules = (ROOT / "rules" / "extensions.smk").read_text(encoding="utf-8")
    optimize = rules.split("rule extensions_optimize:")[1].split("\nrule ")[0]
    assert "design.run_settings(" in optimize.split("params:")[1], optimize


def test_captions_state_only_what_the_configuration_runs():
    full = workflow_config.load_config([str(ROOT / "config.yaml")]).config
    full["main"]["setups"]["polarity"]["encoder"] = "mpnet"  # named: the model fine-tuned
    line = design.settings_line(Config.model_validate(full))
    assert "deep heads of 1, 2, 3 hidden tanh layer(s)" in line
    assert "Held out (polarity): mpnet fine-tuned on 1000 training" in line
    part = copy.deepcopy(full)
    part["extensions"]["depths"] = [1]
    part["extensions"]["heldout"]["setups"] = []
    line = design.settings_line(Config.model_validate(part))
    assert "deep heads of 1 hidden" in line and "2, 3" not in line
    assert "Held out: no fine-tuning runs in this configuration" in line
    assert "fine-tuned on" not in line


@pytest.mark.parametrize(
    "target,planned",
    [
        ("runs/polarity/deep1/seed0/trace.parquet", True),
        ("runs/snli/deep1/seed0/trace.parquet", False),  # a setup the section does not name
        ("runs/polarity/deep3/seed0/trace.parquet", False),  # a depth it does not name
        ("heldout/snli/seed0/epochs.csv", False),
    ],
)
def test_only_the_configured_setups_and_heads_make_extension_jobs(tmp_path, target, planned):
    overlay = {"extensions": {"setups": ["polarity"], "depths": [1]}}
    result = tiny_workflow.dry_run(tmp_path, f"results/extensions/{target}", overlay)
    output = result.stdout
    assert (result.returncode == 0) == planned, output[-3000:]
    if not planned:
        assert "MissingRuleException" in output or "No rule to produce" in output, output[-3000:]
