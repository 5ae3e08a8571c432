"""The Rajaee CLS study: the cluster-based method on the CLS states inside fine-tuning
(isotropy.rajaee_cls.method), its tables and claims (isotropy.rajaee_cls.results), figure,
estimate (isotropy.studies.rajaee_cls) and settings (config rajaee_cls).

Models are the tiny randomly initialised BERT of test_finetune (no download)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_bert import SMALL, sentiment_table
from tiny_workflow import load_script, script_snakemake

from isotropy import costs, studies
from isotropy.configuration.finetune import TrainingSettings
from isotropy.configuration.studies import ClusterMethod
from isotropy.finetune.features import load_model_and_tokenizer
from isotropy.finetune.head import head_input_module, transform_head_input
from isotropy.finetune.settings import check_run
from isotropy.plots.checks import save_figure
from isotropy.plots.rajaee_cls import plot_cls_layers
from isotropy.provenance import read_record
from isotropy.rajaee_cls.method import cluster_cls, head_transform, run_and_save
from isotropy.rajaee_cls.results import LAYER_COLUMNS, RUN_COLUMNS, collect
from isotropy.readers.tasks import task_spec
from isotropy.statistics import NOT_SUPPORTED, SUPPORTED
from isotropy.studies import rajaee_cls as rajaee_spec
from isotropy.transforms import cluster_based_isotropy
from isotropy.workflow.config import ConfigError, load_config


def test_cluster_cls_is_the_sts_method_and_passes_gradients():
    rng = np.random.default_rng(0)
    points = rng.standard_normal((32, 16)) + 3.0 * rng.standard_normal((1, 16))
    states = torch.tensor(points, requires_grad=True)
    out = cluster_cls(states, n_clusters=3, n_directions=2, seed=0)
    expected = cluster_based_isotropy(points, n_clusters=3, n_directions=2, seed=0)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-10)
    out.pow(2).sum().backward()
    assert states.grad is not None and float(states.grad.abs().sum()) > 0
    # centring inside each cluster: the gradient of the sum of the outputs is zero
    states.grad = None
    cluster_cls(states, 3, 2, 0).sum().backward()
    assert float(states.grad.abs().max()) < 1e-10
    # a short last batch: clusters cut to its size; a single state passes unchanged
    assert cluster_cls(states[:2], 3, 0, 0).shape == (2, 16)
    assert torch.equal(cluster_cls(states[:1], 3, 2, 0), states[:1])


def test_the_hook_changes_only_the_head_input_and_is_removed(tiny_bert):
    model, tokenizer = load_model_and_tokenizer(tiny_bert, task_spec("sst2"))
    model.eval()
    batch = tokenizer(list(sentiment_table(8, 0)["text"]), return_tensors="pt", padding=True)
    with torch.no_grad():
        plain = model(**batch, output_hidden_states=True)
        with transform_head_input(model, _cluster(2, 1, 0).transform) as module:
            assert module is head_input_module(model) is model.bert.pooler
            moved = model(**batch, output_hidden_states=True)
        again = model(**batch, output_hidden_states=True)
    # the model's own states are untouched; the logits (from the transformed CLS) are not
    assert torch.equal(plain.hidden_states[-1], moved.hidden_states[-1])
    assert not torch.allclose(plain.logits, moved.logits)
    assert torch.equal(plain.logits, again.logits)


def test_the_method_is_not_a_regulariser_of_the_loss():
    # the cluster method transforms the head's input (a HeadTransform); the loss has no penalty
    with pytest.raises(ValueError, match="unknown regulariser 'cluster'"):
        check_run("cluster", 0.0)
    record = {"name": "cluster", "clusters": 3, "directions": 2, "fit": "batch"}
    assert _cluster(3, 2, 0).record() == record
    assert head_transform("none", ClusterMethod(), 0) is None
    with pytest.raises(ValueError, match="unknown method 'istar'"):
        head_transform("istar", ClusterMethod(), 0)


def _cluster(clusters: int, directions: int, seed: int):
    transform = head_transform(
        "cluster", ClusterMethod(clusters=clusters, directions=directions, fit="batch"), seed
    )
    assert transform is not None
    return transform


def test_finetune_with_the_method_records_cls_geometry(tiny_bert, tmp_path):
    data = (sentiment_table(64, 0), sentiment_table(40, 1))
    settings = TrainingSettings(**{**SMALL, "epochs": 1})
    options = dict(seed=0, model_spec=tiny_bert, task="sst2", data=data, settings=settings)
    runs = {
        m: run_and_save(
            tmp_path / m / "metrics.json", m, ClusterMethod(clusters=2, directions=1), **options
        )
        for m in ("none", "cluster")
    }
    for result in runs.values():
        assert len(result["cls_iw_layers"]) == 2 and len(result["cls_isoscore_layers"]) == 2
        assert all(v > 0 for v in result["cls_token_mean_norm_layers"])
    # without the method the head reads the model's own states; with it, transformed ones
    assert runs["none"]["cls_iw_head_input"] == runs["none"]["cls_iw"]
    assert runs["cluster"]["cls_iw_head_input"] > runs["cluster"]["cls_iw"]
    # the recorded norms are those of the states (hand check on the last layer's CLS mean norm)
    assert runs["none"]["cls_cls_mean_norm_layers"][-1] <= runs["none"]["cls_cls_norm_layers"][-1]


def _layers(seed: int, method: str, cls_mean: float, iw: float) -> list[dict]:
    run = dict(model="m", task="rte", method=method, seed=seed)
    norms = dict(cls_mean_norm=cls_mean, cls_norm=10.0, token_mean_norm=2.0, token_norm=10.0)
    return [run | dict(layer=layer, iw=iw, isoscore=0.1) | norms for layer in (1, 2)]


def _tables(iw_with: list[float], cls_mean: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs, layers = [], []
    for seed, raised in enumerate(iw_with):
        for method, iw in (("none", 1e-4), ("cluster", raised)):
            run = {"model": "m", "task": "rte", "method": method, "seed": seed, "cls_iw": iw}
            # a model that learned RTE (the guard, test_learning.py, judges only those)
            runs.append(run | {"accuracy": 0.65, "majority_baseline": 0.527, "eval_sentences": 277})
            layers += _layers(seed, method, cls_mean, iw)
    return pd.DataFrame(runs), pd.DataFrame(layers)


def _verdicts(table: pd.DataFrame) -> dict[str, str]:
    return dict(zip(table["claim"], table["verdict"], strict=True))


def test_claims_read_supported_when_they_hold_and_not_in_the_counter_cases():
    # five seeds (the page's rule: every seed and a one-sided t over seeds, Holm over both)
    runs, layers = _tables([5e-5, 2e-5, 8e-5, 4e-5, 6e-5], cls_mean=0.5)
    verdicts = _verdicts(rajaee_spec.check_claims(runs, layers))
    assert verdicts == {
        "cls_method_cannot_raise_isotropy": SUPPORTED,
        "cls_already_zero_mean": SUPPORTED,
    }
    # the method raises I(W) in five seeds (the test decides); CLS mean 3x the token mean
    runs, layers = _tables([1e-2, 2e-2, 1.5e-2, 1.2e-2, 1.8e-2], cls_mean=6.0)
    table = rajaee_spec.check_claims(runs, layers)
    assert set(_verdicts(table).values()) == {NOT_SUPPORTED}
    zero_mean = table[table["claim"] == "cls_already_zero_mean"].iloc[0]
    assert math.isclose(zero_mean["measured"], math.log10(3.0))
    assert all("stand-in: m for the slides' BERT-base" in note for note in table["note"])


def test_the_cls_claims_join_the_claims_pages_holm_family():
    """Issues 47, 59: on the claims page the CLS rows form the same family as on their own page
    (the study's), so they read the same verdicts on both."""
    runs, layers = _tables([5e-5, 2e-5, 8e-5, 4e-5, 6e-5], cls_mean=0.5)
    (page,) = studies.claim_pages({"rajaee_cls_runs": runs, "rajaee_cls_layers": layers})
    cls_rows = page[page["study"] == "rajaee_cls"]
    assert len(cls_rows) == 2 and cls_rows["note"].str.contains("Holm over the 2 tests").all()
    alone = rajaee_spec.check_claims(runs, layers)
    assert list(alone["verdict"]) == list(cls_rows["verdict"])


def _metrics_files(tmp_path) -> tuple[list, list[dict]]:
    files, runs = [], []
    for method in ("none", "cluster"):
        for seed in (0, 1):
            record = dict(train_examples=8, settings={"epochs": 2}, steps=2, eval_sentences=4)
            record |= dict(scores={"accuracy": 0.5}, majority_baseline=0.5, cls_iw=1e-3)
            record["cls_iw_head_input"] = 0.3 if method == "cluster" else 1e-3
            record |= {f"cls_{c}_layers": [1e-3, 2e-3] for c in LAYER_COLUMNS[5:]}
            path = tmp_path / f"{method}{seed}.json"
            path.write_text(json.dumps(record))
            files.append(path)
            runs.append({"model": "m", "task": "rte", "method": method, "seed": seed})
    return files, runs


def test_tables_and_figure_from_metrics_files(tmp_path):
    files, runs = _metrics_files(tmp_path)
    table, layers = collect(files, runs)
    assert list(table.columns) == RUN_COLUMNS and len(table) == 4 and len(layers) == 8
    figure, summary = plot_cls_layers(layers, "settings")
    save_figure(figure, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0 and set(summary["seeds"]) == {2}
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({"scores": {}}))
    with pytest.raises(ValueError, match="predates"):
        collect([stale], runs[:1])


def test_the_scripts_read_the_section_as_the_model_with_its_defaults(tmp_path, monkeypatch):
    files, runs = _metrics_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    tables = {"runs": "r.csv", "layers": "l.csv", "claims": "c.csv", "markdown": "c.md"}
    params = {"runs": runs, "settings": {}}  # every setting left to the model's default
    job = script_snakemake("rajaee_cls_tables", {"metrics": files}, tables, params)
    load_script("scripts/rajaee_cls_tables.py").main(job)
    script, titles = load_script("scripts/rajaee_cls_figure.py"), []
    monkeypatch.setattr(
        script, "plot_cls_layers", lambda *a: titles.append(a[1]) or plot_cls_layers(*a)
    )
    outputs = {"pdf": "f.pdf", "png": "f.png"}
    script.main(script_snakemake("rajaee_cls_figure", {"layers": "l.csv"}, outputs, params))
    assert titles == [
        "CLS isotropy per layer after fine-tuning (2 epochs, 1024 training examples, max length "
        "128, lr 5e-05; method: 3 k-means clusters, 2 directions, fitted on the training set; "
        "5 seeds)"
    ]
    assert read_record("r.csv")["seeds"] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "overlay, refusal",
    [
        # the schema's list of studies, which names the new one
        ("studies: [main, rajaee]", r"'studies\[1\]' has value 'rajaee': .*'rajaee_cls'"),
        ("rajaee_cls: {models: [miniLM], methods: [istar]}", "istar"),
    ],
)
def test_a_bad_section_or_the_old_study_name_is_refused(tmp_path, overlay, refusal):
    (tmp_path / "bad.yaml").write_text(overlay + "\n")
    with pytest.raises(ConfigError, match=refusal):
        load_config(["config.yaml", str(tmp_path / "bad.yaml")])


def test_fine_tuning_rows_reach_the_paper_comparison_as_stand_ins():
    from test_comparison import compare_results

    from isotropy.standins import StandIns
    from isotropy.statistics import STAND_IN

    config = load_config(["config.yaml", "config/offline.yaml"]).config
    # majority_baseline 0.4: learned, judged as the stand-in it is
    rows = [
        dict(model="miniLM", task="rte", method=method, seed=seed, train_examples=256, epochs=2)
        | dict(accuracy=0.5 + 0.01 * seed, cls_iw_head_input=0.3 if method == "cluster" else 1e-4)
        | dict(majority_baseline=0.4, eval_sentences=277)
        for method in ("none", "cluster")
        for seed in (0, 1, 2)
    ]
    runs = pd.DataFrame(rows)
    table = compare_results({"rajaee_cls_runs": runs}, config, StandIns(), {"geometry"})
    rows = table[table["quantity"].str.startswith("rte_finetuned")]
    assert len(rows) == 4 and set(rows["verdict"]) == {STAND_IN}
    before = rows[(rows["quantity"] == "rte_finetuned_accuracy") & (rows["paper_value"] == 65.3)]
    assert math.isclose(float(before["our_value"].iloc[0]), 51.0)
    # WiC stays "not run" offline, with its reason
    wic = table[table["quantity"].str.startswith("wic_finetuned")]
    assert len(wic) == 4 and (wic["verdict"] == "not run").all()


def test_each_task_is_costed_by_its_own_rows():
    """SST-2's phrases (13.5 tokens) cost a fifth of RTE's pairs (66): its own rows of
    config/costs.csv, not RTE's; a task without rows falls back to RTE's (the longest)."""
    sst2, rte = costs.finetune_measured("sst2"), costs.finetune_measured("rte")
    assert sst2["train_example"] < rte["train_example"] / 2
    assert costs.finetune_measured("qnli") == rte
    config = load_config(["config.yaml", "config/offline.yaml"]).settings
    job = rajaee_spec.STUDIES[0].job_costs["rajaee_cls_finetune"]
    task = config.rajaee_cls.tasks[0]
    assert job(config, {"model": "miniLM", "task": task}, costs.Pace()) > 0
    assert job(config, {"model": "miniLM", "task": "no_such_task"}, costs.Pace()) is None
