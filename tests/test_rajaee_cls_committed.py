"""The committed Rajaee CLS grid is the default one, and its copy (on a made-up finished grid)
records what made it (isotropy.committed.rajaee_cls; freshness: tests/test_committed.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from isotropy.committed import rajaee_cls as committed
from isotropy.configuration.studies import ClusterMethod
from isotropy.io import checked_record
from isotropy.rajaee_cls.results import LAYER_COLUMNS, RUN_COLUMNS
from isotropy.studies import rajaee_cls as rajaee_study
from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = (ROOT / committed.RUN).is_file()
needs_run = pytest.mark.skipif(not COMMITTED, reason="no committed Rajaee CLS grid yet")


@needs_run
def test_the_committed_grid_is_the_default_grid():
    """Every method and seed of config.yaml's rajaee_cls section, at its settings and method."""
    record = checked_record(ROOT, committed.RUN)
    assert set(record["files_sha256"]) == {str(committed.SEEDS), str(committed.CAUSE)}
    overlays = [str(ROOT / "config.yaml"), str(ROOT / "config" / "offline.yaml")]
    section = load_config(overlays).config["rajaee_cls"]
    assert record["config"]["rajaee_cls"] == section
    assert ClusterMethod(**section["cluster_method"]) == ClusterMethod()
    seeds = pd.read_csv(ROOT / committed.SEEDS)
    runs = set(zip(seeds["method"], seeds["seed"], strict=True))
    assert runs == {(m, s) for m in section["methods"] for s in section["seeds"]}


@pytest.fixture
def copied(tmp_path):
    """A docs tree with a made-up finished grid (2 methods x 2 seeds) and sweep copied in."""
    config = load_config([str(ROOT / "config.yaml")]).config
    config["rajaee_cls"]["seeds"] = [0, 1]
    effective = tmp_path / "effective.yaml"
    effective.write_text(yaml.safe_dump(config), encoding="utf-8")
    results = tmp_path / "results" / "rajaee_cls"
    rows = []
    for method in ("none", "cluster"):
        for seed in (0, 1):
            run = results / "miniLM" / "sst2" / method / f"seed{seed}" / "metrics.json"
            run.parent.mkdir(parents=True)
            run.write_text("{}")
            provenance = {"code": {"git_commit": "0" * 40}, "packages": {"torch": "2"}}
            provenance |= {"device": "cpu", "hardware": {"cpus": 2}}
            provenance["inputs"] = {"resources/raw/sst2/manifest.json": {"sha256": "a"}, "x": {}}
            run.with_name("metrics.json.provenance.json").write_text(json.dumps(provenance))
            row = dict.fromkeys(RUN_COLUMNS, 1e-3)
            rows.append(row | {"method": method, "seed": seed, "accuracy": 0.7 + 0.01 * seed})
    pd.DataFrame(rows, columns=RUN_COLUMNS).to_csv(results / "runs.csv", index=False)
    agreement = [
        {"epoch": 0, "train_offline_ari": 0.1, "train_batch_ari_mean": 0.1},
        {
            "epoch": 1,
            "train_offline_ari": 0.5,
            **{f"eval_batch_ari_{k}": 0.5 for k in ("mean", "min", "max")},
            "eval_offline_ari": 0.6,
            "method_accuracy": [{"fit": "batch", "clusters": 3, "directions": 2, "accuracy": 0.5}],
        },
    ]
    sweep = tmp_path / "cause.jsonl"
    entry = {"method": "none", "seed": 0, "accuracy": 0.78, "majority_baseline": 0.509}
    sweep.write_text(json.dumps(entry | {"agreement": agreement, "wall_seconds": 9}) + "\n")
    root = tmp_path / "repo"
    (root / "docs" / "data").mkdir(parents=True)
    page = f"# page\n\n{committed.BEGIN}\n\nold table\n{committed.END}\ntail\n"
    (root / committed.DOC).write_text(page, encoding="utf-8")
    committed.copy(root, [results, sweep], {"wall": "1 min"}, effective, None)
    return root


def test_the_record_names_what_made_the_copy_and_the_tables_follow_it(copied):
    record = checked_record(copied, committed.RUN)
    assert record["code_commit"] == "0" * 40 and record["seeds"] == [0, 1]
    assert record["packages"] == {"torch": "2"} and record["device"].startswith("cpu")
    assert record["stand_ins"] == {"miniLM": "miniLM for the slides' BERT-base"}
    assert len(record["sources_sha256"]) == 4
    assert record["data_sha256"] == {"resources/raw/sst2/manifest.json": "a"}  # its data, no other
    block = committed.COMMITTED.pages[0].render(copied)
    assert "| cluster | 1 | 71.0 |" in block and "| none | 0 | 78.0 | 50.9 | 0.10 |" in block


def test_an_unfinished_grid_or_mixed_code_is_refused(tmp_path, copied):
    nothing = [tmp_path / "nothing", tmp_path / "c"]
    with pytest.raises(FileNotFoundError, match="no finished grid"):
        committed.copy(tmp_path, nothing, {}, tmp_path / "e.yaml", None)
    results = tmp_path / "results" / "rajaee_cls"
    other = results / "miniLM" / "sst2" / "none" / "seed1" / "metrics.json.provenance.json"
    other.write_text(json.dumps({**json.loads(other.read_text()), "code": {"git_commit": "1"}}))
    sources = [results, tmp_path / "cause.jsonl"]
    with pytest.raises(ValueError, match="2 code versions"):
        committed.copy(copied, sources, {}, tmp_path / "effective.yaml", None)
    shutil.rmtree(results)


@needs_run
def test_the_claims_block_is_the_committed_grid_judged():
    block = committed.COMMITTED.pages[1].render(ROOT)
    assert "| cls_offline_method_does_not_help | miniLM/sst2 |" in block


def test_the_offline_claim_reads_the_isotropy_the_head_reads():
    """The slides' "even offline, the method does not help", on isotropy: the head's input I(W)
    rises from about 1e-5 to 0.34-0.55 with the method, so no; planted lower, yes."""
    seeds = pd.read_csv(ROOT / committed.SEEDS)
    layers = pd.DataFrame(columns=LAYER_COLUMNS)
    judged = rajaee_study.check_claims(seeds, layers, offline=True).set_index("claim")
    assert judged.loc["cls_offline_method_does_not_help", "verdict"] == "not supported"
    cluster, lowered = seeds["method"] == "cluster", seeds.copy()
    plain = seeds[~cluster].set_index("seed")["cls_iw_head_input"] / 10
    seed = seeds.loc[cluster, "seed"]  # the head read 10 to 50 times less with the method
    lowered.loc[cluster, "cls_iw_head_input"] = seed.map(plain) / (seed + 1)
    judged = rajaee_study.check_claims(lowered, layers, offline=True).set_index("claim")
    assert judged.loc["cls_offline_method_does_not_help", "verdict"] == "supported"
    # without an offline grid the claim is not judged at all
    assert "cls_offline_method_does_not_help" not in set(
        seeds.pipe(rajaee_study.check_claims, layers)["claim"]
    )


@needs_run
def test_the_page_averages_unrounded_values():
    seeds = pd.read_csv(ROOT / committed.SEEDS)
    accuracy = seeds.loc[seeds["method"] == "cluster", "accuracy"]
    block = committed.COMMITTED.pages[0].render(ROOT)
    assert f"{100 * accuracy.mean():.1f}% with it" in block
    rounded = (100 * accuracy).round(1).mean()
    if f"{rounded:.1f}" != f"{100 * accuracy.mean():.1f}":  # the old page's mean 57.1 %
        assert f"{rounded:.1f}% with it" not in block
