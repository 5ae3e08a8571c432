"""Mixed precision, its loss scaler and resume: on the CPU where they can be, on CUDA where a GPU
is at hand (skipped with the reason otherwise; the device runbook runs this file alone, since it
imports nothing of the workflow: docs/measurements.md, "I-STAR at scale on one GPU")."""

from __future__ import annotations

import math

import pytest
import torch
from tiny_bert import CUDA, SMALL, sentiment_table

from isotropy.compute import mixed_precision_dtype
from isotropy.configuration.finetune import TrainingSettings
from isotropy.finetune.features import load_model_and_tokenizer
from isotropy.finetune.training import (
    CHECKPOINT_NAME,
    TrainingInterrupted,
    finetune,
    loss_scaling,
    make_optimiser,
    resume,
)
from isotropy.readers.tasks import task_spec


def test_mixed_precision_is_bfloat16_where_supported_and_scales_float16_only(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")  # a device name; no GPU is touched
    assert mixed_precision_dtype(cpu, True) is None and mixed_precision_dtype(cuda, False) is None
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert mixed_precision_dtype(cuda, True) == torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert mixed_precision_dtype(cuda, True) == torch.float16
    # The loss scaler: on for float16 alone (bfloat16 has float32's range, the CPU no autocast).
    assert [loss_scaling(p) for p in (None, torch.bfloat16, torch.float16)] == [False, False, True]


def test_unscaled_checkpoint_resumes_where_the_loss_is_scaled(tiny_bert, tmp_path):
    """A run killed on the CPU or under bfloat16 (scaler off: its state is empty) resumes on a
    float16 device (scaler on) with a fresh scale, instead of failing on the empty state."""
    data = (sentiment_table(40, 0), sentiment_table(24, 1))
    settings = TrainingSettings(**SMALL)
    with pytest.raises(TrainingInterrupted):
        finetune(tiny_bert, "sst2", "none", 0.0, 7, tmp_path, data, settings, stop_after_epoch=0)
    state = torch.load(tmp_path / CHECKPOINT_NAME, weights_only=True)
    assert state["scaler"] == {}
    model, _ = load_model_and_tokenizer(tiny_bert, task_spec("sst2"))
    optimizer, scheduler, _ = make_optimiser(model, settings, 10, None)
    scaler = torch.amp.GradScaler("cpu")  # on, as float16's would be
    epoch, step, _ = resume(
        tmp_path / CHECKPOINT_NAME, state["signature"], model, optimizer, scheduler, scaler
    )
    assert (epoch, step) == (1, 5) and scaler.is_enabled() and scaler.get_scale() == 2.0**16


@CUDA
def test_bfloat16_fine_tuning_on_cuda_runs_with_the_loss_scaler_off(tiny_bert, tmp_path):
    if not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16: its runs take float16 with loss scaling")
    data = (sentiment_table(96, 0), sentiment_table(48, 1))
    settings = TrainingSettings(
        **{**SMALL, "epochs": 3, "learning_rate": 5e-3, "keep_checkpoint": True}
    )
    plain = finetune(tiny_bert, "sst2", "none", 0.0, 0, tmp_path / "none", data, settings, "cuda")
    assert plain["precision"] == "bfloat16" and plain["device"].startswith("cuda:")
    assert plain["metric"] >= 0.9  # learns as on the CPU (chance is 0.5)
    assert torch.load(tmp_path / "none" / CHECKPOINT_NAME, weights_only=True)["scaler"] == {}
    short = TrainingSettings(**{**SMALL, "max_steps": 4})
    penalised = finetune(
        tiny_bert, "sst2", "istar", 1.0, 0, tmp_path / "istar", data, short, device="cuda"
    )
    assert penalised["steps"] == 4 and math.isfinite(penalised["history"][0]["penalty"])


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=CUDA)])
def test_killed_run_resumes_to_the_same_result(tiny_bert, tmp_path, device):
    data = (sentiment_table(40, 0), sentiment_table(24, 1))
    settings = TrainingSettings(**{**SMALL, "keep_checkpoint": True})
    kwargs = dict(
        model_spec=tiny_bert,
        task="sst2",
        regulariser="istar",
        lam=-3.0,
        seed=7,
        settings=settings,
        data=data,
        device=device,
    )
    whole = finetune(out_dir=tmp_path / "whole", **kwargs)
    with pytest.raises(TrainingInterrupted):
        finetune(out_dir=tmp_path / "killed", stop_after_epoch=0, **kwargs)
    saved = torch.load(tmp_path / "killed" / CHECKPOINT_NAME, weights_only=True)
    assert saved["epoch"] == 0
    resumed = finetune(out_dir=tmp_path / "killed", **kwargs)
    assert resumed["steps"] == whole["steps"] and resumed["history"][0] == saved["history"][0]
    if device == "cuda":  # its kernels are not bitwise deterministic: near the whole run
        assert len(saved["rng"]["cuda"]) == torch.cuda.device_count()
        assert resumed["history"][1]["loss"] == pytest.approx(whole["history"][1]["loss"], rel=0.05)
        assert abs(resumed["metric"] - whole["metric"]) <= 0.1
        a = torch.load(tmp_path / "whole" / CHECKPOINT_NAME, weights_only=True)["model"]
        b = torch.load(tmp_path / "killed" / CHECKPOINT_NAME, weights_only=True)["model"]
        assert max((a[k].float() - b[k].float()).abs().max().item() for k in a) < 0.05
        return
    # Bit-identical: the checkpoint (tensors and plain data only) restores every RNG exactly.
    for key in ("metric", "isoscore_star", "twonn", "steps"):
        assert resumed[key] == whole[key], key
    assert resumed["history"] == whole["history"]
    a = torch.load(tmp_path / "whole" / CHECKPOINT_NAME, weights_only=True)
    b = torch.load(tmp_path / "killed" / CHECKPOINT_NAME, weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    (kind, keys, *rest), (kind_b, keys_b, *rest_b) = a["rng"]["numpy"], b["rng"]["numpy"]
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"]) and torch.equal(keys, keys_b)
    assert (kind, *rest) == (kind_b, *rest_b) and a["rng"]["python"] == b["rng"]["python"]
    # A checkpoint from other settings is refused, not silently mixed in.
    other = TrainingSettings(**{**SMALL, "learning_rate": 5e-4})
    with pytest.raises(ValueError, match="different run or settings"):
        finetune(out_dir=tmp_path / "killed", **{**kwargs, "settings": other})
