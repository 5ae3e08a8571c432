"""Every hub source of config.yaml, loaded from a recorded copy of its repository's layout
(tests/data/hub) with the real ``datasets.load_dataset``, then read by the project's readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from isotropy import sources
from isotropy.configuration.geometry import Corpus
from isotropy.readers.corpus import read_corpus, read_corpus_text
from isotropy.readers.registry import read_source_manifest
from isotropy.readers.sts import SEMEVAL_STS, read_sts, sts_source
from isotropy.readers.tasks import read_task_split, task_source

ROOT = Path(__file__).resolve().parents[1]
LAYOUTS = ROOT / "tests" / "data" / "hub"


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
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    return calls


def fetch(name: str, config: dict, tmp_path: Path) -> Path:
    params = sources.source_params({**config, "mirror": None}, name)
    sources.fetch_source(name, params, tmp_path / "raw" / name)
    return tmp_path / "raw" / name


def hub_sources(config: dict) -> list[str]:
    return [name for name, source in config["sources"].items() if source.get("hub")]


def test_every_hub_source_has_a_recorded_layout(config):
    # SICK-R is SemEval's own file (kind files); the SemEval STS tests 2012-2016 are MTEB's
    # copies; WiC's two splits (the Rajaee CLS study) are SuperGLUE's
    assert len(hub_sources(config)) == 27
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
        ("wic", True, [0, 1]),
    ],
)
@pytest.mark.parametrize("split", ["train", "validation"])
def test_classification_tasks_from_their_hub_layout(
    hub, config, tmp_path, task, pair, labels, split
):
    name = task_source(task, split)
    raw = fetch(name, config, tmp_path)
    manifest = read_source_manifest(raw)
    revision = config["sources"][name]["hub"]["revision"]
    assert manifest["inputs"][0]["revision"] == revision and len(revision) == 40
    assert manifest["inputs"][0]["fingerprint"]  # the loaded data set's, recorded
    assert hub[0][2]["split"] == split
    table = read_task_split(task, split, raw)
    assert list(table.columns) == ["text", "text_pair", "label"] if pair else ["text", "label"]
    assert table["label"].tolist() == labels
    assert table["text"].map(lambda t: isinstance(t, str) and t.strip() != "").all()
    if task == "sst5":  # dev.jsonl is the validation split
        assert table["text"].tolist()[0] == "a gripping , funny film"


@pytest.mark.parametrize("split", ["train", "validation"])
def test_squad_from_its_hub_layout(hub, config, tmp_path, split):
    raw = fetch(task_source("squad", split), config, tmp_path)
    assert hub[0][1] == () and hub[0][0] == "rajpurkar/squad"
    table = read_task_split("squad", split, raw)
    assert table["answers"].tolist() == [["Paris", "in Paris"], ["1889"]]
    assert table["answer_starts"].tolist() == [[23, 20], [46]]
    assert table["question"].tolist()[0] == "Where is the Eiffel Tower?"  # leading blank removed
    for context, answers, starts in zip(table["context"], table["answers"], table["answer_starts"]):
        assert all(context[s : s + len(a)] == a for a, s in zip(answers, starts))


def test_wikitext_from_its_hub_layout_as_sentences_and_as_running_text(hub, config, tmp_path):
    """The test split as sentences; the training split whole, as Cai et al.'s protocol
    (config/cai_protocol.yaml) reads it."""
    corpus = config["geometry"]["clusters"]["corpus"]
    sentences = read_corpus(Corpus.model_validate(corpus), fetch("hf_wikitext2", config, tmp_path))
    assert hub[0][1] == ("wikitext-2-raw-v1",)
    assert sentences and all("Robert Boulter" not in s or "actor" in s for s in sentences)
    assert any(s.startswith("Robert Boulter is an English film actor") for s in sentences)
    train = {**corpus, "source": "hf_wikitext2_train", "windows": 512}
    text = read_corpus_text(
        Corpus.model_validate(train), fetch("hf_wikitext2_train", config, tmp_path)
    )
    assert "= A Training Article =" in text and "read as running text" in text
    assert "Robert Boulter" not in text  # the test split is not read


@pytest.mark.parametrize(
    "name, split, scores",
    [("stsb", "validation", [5.0, 0.25])] + [(name, "test", [5.0, 0.5]) for name in SEMEVAL_STS],
)
def test_sts_sets_from_their_hub_layouts(hub, config, tmp_path, name, split, scores):
    table = read_sts(name, split, fetch(sts_source(name, split), config, tmp_path))
    assert list(table.columns) == ["sentence1", "sentence2", "score"]
    assert table["score"].tolist() == pytest.approx(scores)
    assert hub[0][2]["split"] == split
    assert name == "stsb" or hub[0][0] == f"mteb/{name}-sts"  # MTEB's copies of SemEval's
