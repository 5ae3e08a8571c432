"""Every hub source of config.yaml, loaded from a recorded copy of its repository's layout
(tests/data/hub) with the real ``datasets.load_dataset``, then read by the project's readers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from isotropy import datasets as readers
from isotropy import download

ROOT = Path(__file__).resolve().parents[1]
LAYOUTS = ROOT / "tests" / "data" / "hub"


@pytest.fixture(scope="module")
def config() -> dict:
    return yaml.safe_load((ROOT / "config.yaml").read_text())


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """``datasets.load_dataset`` with only the hub path mapped to its recorded folder."""
    import datasets

    real = datasets.load_dataset
    calls = []

    def load_dataset(path, *args, **kwargs):
        calls.append((path, args, kwargs))
        local = LAYOUTS / path
        assert local.is_dir(), f"no recorded layout for {path}"
        kwargs.pop("revision")  # a local folder has no hub commit (the pin is checked below)
        return real(str(local), *args, cache_dir=str(tmp_path / "cache"), **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv(download.MIRROR_ENV, raising=False)
    return calls


def fetch(name: str, config: dict, tmp_path: Path) -> Path:
    params = download.source_params(name, {**config, "mirror": None})
    download.fetch_source(name, params, tmp_path / "raw" / name)
    return tmp_path / "raw" / name


def hub_sources(config: dict) -> list[str]:
    return [name for name, source in config["sources"].items() if source.get("hub")]


def test_every_hub_source_has_a_recorded_layout(config):
    assert len(hub_sources(config)) == 20
    for name in hub_sources(config):
        assert (LAYOUTS / config["sources"][name]["hub"]["path"]).is_dir(), name


@pytest.mark.parametrize(
    "task, pair, labels",
    [
        ("sst2", False, [1, 0]),
        ("cola", False, [1, 0]),
        ("qnli", True, [0, 1]),
        ("rte", True, [0, 1]),
        ("mrpc", True, [1, 0]),
        ("qqp", True, [1, 0]),
        ("stsb", True, [5.0, 0.25]),
        ("sst5", False, [4, 2, 0]),
    ],
)
@pytest.mark.parametrize("split", ["train", "validation"])
def test_classification_tasks_from_their_hub_layout(
    hub, config, tmp_path, task, pair, labels, split
):
    name = readers.task_source(task, split)
    raw = fetch(name, config, tmp_path)
    manifest = download.read_source_manifest(raw)
    revision = config["sources"][name]["hub"]["revision"]
    assert manifest["inputs"][0]["revision"] == revision and len(revision) == 40
    assert hub[0][2]["split"] == split
    table = readers.read_task_split(task, split, raw)
    assert list(table.columns) == ["text", "text_pair", "label"] if pair else ["text", "label"]
    assert table["label"].tolist() == labels
    assert table["text"].map(lambda t: isinstance(t, str) and t.strip() != "").all()
    if task == "sst5":  # dev.jsonl is the validation split
        assert table["text"].tolist()[0] == "a gripping , funny film"


@pytest.mark.parametrize("split", ["train", "validation"])
def test_squad_from_its_hub_layout(hub, config, tmp_path, split):
    raw = fetch(readers.task_source("squad", split), config, tmp_path)
    assert hub[0][1] == () and hub[0][0] == "rajpurkar/squad"
    table = readers.read_task_split("squad", split, raw)
    assert table["answers"].tolist() == [["Paris", "in Paris"], ["1889"]]
    assert table["answer_starts"].tolist() == [[23, 20], [46]]
    assert table["question"].tolist()[0] == "Where is the Eiffel Tower?"  # leading blank removed
    for context, answers, starts in zip(table["context"], table["answers"], table["answer_starts"]):
        assert all(context[s : s + len(a)] == a for a, s in zip(answers, starts))


def test_wikitext_corpus_from_its_hub_layout(hub, config, tmp_path):
    raw = fetch("hf_wikitext2", config, tmp_path)
    assert hub[0][1] == ("wikitext-2-raw-v1",)
    sentences = readers.read_corpus(config["geometry"]["clusters"]["corpus"], raw)
    assert sentences and all("Robert Boulter" not in s or "actor" in s for s in sentences)
    assert any(s.startswith("Robert Boulter is an English film actor") for s in sentences)


def test_sts_sets_from_their_hub_layouts(hub, config, tmp_path):
    sick = readers.read_sts("sickr", "test", fetch("hf_sickr_test", config, tmp_path))
    assert sick.to_dict("list") == {
        "sentence1": ["A dog is running.", "A man is cooking."],
        "sentence2": ["A dog runs.", "A child is swimming."],
        "score": [4.9, 1.2],
    }
    stsb = readers.read_sts("stsb", "validation", fetch("hf_stsb_validation", config, tmp_path))
    assert stsb["score"].tolist() == pytest.approx([5.0, 0.25])
    assert isinstance(stsb, pd.DataFrame) and list(stsb.columns) == [
        "sentence1",
        "sentence2",
        "score",
    ]
