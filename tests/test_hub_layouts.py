"""Every hub source of config.yaml, loaded from a recorded copy of its repository's layout
(tests/data/hub) with the real ``datasets.load_dataset``, then read by the project's readers."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest
import yaml
from local_server import reply

from isotropy import sources
from isotropy.readers.corpus import read_corpus, read_corpus_text
from isotropy.readers.registry import read_source_manifest
from isotropy.readers.sts import read_sts, sts_source
from isotropy.readers.tasks import read_task_split, task_source
from isotropy.workflow.config import with_sources

ROOT = Path(__file__).resolve().parents[1]
LAYOUTS = ROOT / "tests" / "data" / "hub"


@pytest.fixture(scope="module")
def config() -> dict:
    return with_sources(yaml.safe_load((ROOT / "config.yaml").read_text()))


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


def test_wikitext_corpus_from_its_hub_layout(hub, config, tmp_path):
    raw = fetch("hf_wikitext2", config, tmp_path)
    assert hub[0][1] == ("wikitext-2-raw-v1",)
    sentences = read_corpus(config["geometry"]["clusters"]["corpus"], raw)
    assert sentences and all("Robert Boulter" not in s or "actor" in s for s in sentences)
    assert any(s.startswith("Robert Boulter is an English film actor") for s in sentences)


def test_wikitext_training_split_as_running_text(hub, config, tmp_path):
    """Cai et al.'s protocol (config/cai_protocol.yaml) reads WikiText-2's training split whole."""
    raw = fetch("hf_wikitext2_train", config, tmp_path)
    corpus = {
        **config["geometry"]["clusters"]["corpus"],
        "source": "hf_wikitext2_train",
        "windows": 512,
    }
    text = read_corpus_text(corpus, raw)
    assert "= A Training Article =" in text and "read as running text" in text
    assert "Robert Boulter" not in text  # the test split is not read


def test_sts_sets_from_their_hub_layouts(hub, config, tmp_path):
    stsb = read_sts("stsb", "validation", fetch("hf_stsb_validation", config, tmp_path))
    assert stsb["score"].tolist() == pytest.approx([5.0, 0.25])
    assert isinstance(stsb, pd.DataFrame) and list(stsb.columns) == [
        "sentence1",
        "sentence2",
        "score",
    ]


@pytest.mark.parametrize("name", ["sts12", "sts13", "sts14", "sts15", "sts16"])
def test_semeval_sts_sets_from_their_hub_layouts(hub, config, tmp_path, name):
    table = read_sts(name, "test", fetch(sts_source(name, "test"), config, tmp_path))
    assert list(table.columns) == ["sentence1", "sentence2", "score"]
    assert table["score"].tolist() == pytest.approx([5.0, 0.5])
    assert hub[0][0] == f"mteb/{name}-sts" and hub[0][2]["split"] == "test"


def test_sickr_is_not_read_from_the_hub(config):
    # mteb/sickr-sts's one test file holds every SICK pair (~9,927); SICK-R's test split is
    # SemEval-2014's own test file (4,927 pairs, tests/test_download.py counts them).
    source = config["sources"]["hf_sickr_test"]
    assert "hub" not in source and source["url"].endswith("/SICK_test_annotated.txt")
    assert source["sha256"] and source["git_blob"]


# ---------------------------------------------------------------------------------------------
# The same layouts behind a stand-in for the hub's HTTP API (HF_ENDPOINT), so that the pinned
# revision is resolved by huggingface_hub and datasets as against the hub itself.


class RecordedHub:
    """The hub API calls ``datasets.load_dataset`` makes, answered on the local server from the
    recorded layouts, for each repository's pinned commit only: another revision is unknown
    (404), as on the hub. The answers carry the fields huggingface_hub reads (``sha``,
    ``siblings``; tree entries ``type``/``path``/``size``/``oid``; ``X-Repo-Commit``)."""

    def __init__(self, revisions: dict[str, str], endpoint: str) -> None:
        self.revisions, self.endpoint, self.requests = revisions, endpoint, []

    def __call__(self, handler, n: int) -> None:
        self.requests.append(f"{handler.command} {handler.path}")
        status, body, headers = self.route(urlsplit(handler.path))
        reply(handler, status, body, **headers)

    def route(self, url) -> tuple[int, bytes, dict[str, str]]:
        api = re.match(r"^/api/datasets/([^/]+/[^/]+)/(revision|tree)/([^/]+)/?(.*)$", url.path)
        resolve = re.match(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", url.path)
        if api is None and resolve is None:  # e.g. telemetry: nothing the loading needs
            return 404, b"", {}
        repo, revision = resolve.group(1, 2) if resolve else api.group(1, 3)
        if self.revisions.get(repo) != revision:
            return 404, b"", {"X-Error-Code": "RevisionNotFound"}
        root = LAYOUTS / repo
        if resolve:
            path = root / resolve.group(3)
            if not path.is_file():
                return 404, b"", {"X-Error-Code": "EntryNotFound"}
            data = path.read_bytes()
            return 200, data, {"X-Repo-Commit": revision, "ETag": f'"{sha1(data)}"'}
        if api.group(2) == "revision":
            files = [p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file()]
            info = {
                "id": repo,
                "sha": revision,
                "private": False,
                "siblings": [{"rfilename": f} for f in files],
            }
            return 200, json.dumps(info).encode(), {"Content-Type": "application/json"}
        folder = root / api.group(4)
        if not folder.is_dir():
            return 404, b"", {"X-Error-Code": "EntryNotFound"}
        recursive = "recursive=true" in url.query.lower()
        entries = []
        for path in sorted(folder.rglob("*") if recursive else folder.iterdir()):
            rel = path.relative_to(root).as_posix()
            if path.is_dir():
                entries.append(
                    {"type": "directory", "path": rel, "oid": sha1(rel.encode()), "size": 0}
                )
            else:
                data = path.read_bytes()
                entries.append({"type": "file", "path": rel, "oid": sha1(data), "size": len(data)})
        return 200, json.dumps(entries).encode(), {"Content-Type": "application/json"}


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


@pytest.fixture
def recorded_hub(config, http):
    pins = {
        s["hub"]["path"]: s["hub"]["revision"] for s in config["sources"].values() if s.get("hub")
    }
    http.fallback = hub = RecordedHub(pins, http.url(""))
    return hub


# Fetches sources in a fresh interpreter, where HF_ENDPOINT is read at import as on a
# user's machine.
FETCH = """
import sys, yaml
from isotropy import sources
config = yaml.safe_load(open(sys.argv[1]))
for name in sys.argv[3:]:
    params = sources.source_params({**config, "mirror": None}, name)
    sources.fetch_source(name, params, f"{sys.argv[2]}/{name}")
"""


def fetch_through(hub: RecordedHub, config: dict, tmp_path: Path, names: list[str]):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    # The hub here is a local server: no offline switch may stay on (huggingface_hub also reads
    # TRANSFORMERS_OFFLINE as HF_HUB_OFFLINE; .ci/run sets both).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HF_") and k not in (sources.MIRROR_ENV, "TRANSFORMERS_OFFLINE")
    }
    env.update(HF_ENDPOINT=hub.endpoint, HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_TELEMETRY="1")
    command = [
        sys.executable,
        "-c",
        FETCH,
        str(tmp_path / "config.yaml"),
        str(tmp_path / "raw"),
        *names,
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def test_pinned_revisions_resolve_through_the_hub_api(recorded_hub, config, tmp_path):
    names = [
        "hf_sst2_train",
        "hf_sst5_validation",
        "hf_squad_validation",
        "hf_wikitext2",
        "hf_sts15_test",
    ]
    result = fetch_through(recorded_hub, config, tmp_path, names)
    assert result.returncode == 0, result.stderr[-3000:]
    raw = tmp_path / "raw"
    assert read_task_split("sst2", "train", raw / "hf_sst2_train")["label"].tolist() == [
        1,
        0,
    ]
    assert read_task_split("sst5", "validation", raw / "hf_sst5_validation")["label"].tolist() == [
        4,
        2,
        0,
    ]
    assert read_task_split("squad", "validation", raw / "hf_squad_validation")[
        "answers"
    ].tolist() == [["Paris", "in Paris"], ["1889"]]
    corpus = config["geometry"]["clusters"]["corpus"]
    assert any("film actor" in s for s in read_corpus(corpus, raw / "hf_wikitext2"))
    assert read_sts("sts15", "test", raw / "hf_sts15_test")["score"].tolist() == [5.0, 0.5]
    # Every repository was asked for at its pinned commit, and only at it.
    for name in names:
        hub = config["sources"][name]["hub"]
        assert (
            f"GET /api/datasets/{hub['path']}/revision/{hub['revision']}" in recorded_hub.requests
        )
        assert read_source_manifest(raw / name)["inputs"][0]["revision"] == hub["revision"]
    repo_requests = [r for r in recorded_hub.requests if "/datasets/" in r]
    assert all(any(rev in r for rev in recorded_hub.revisions.values()) for r in repo_requests)


def test_an_unknown_revision_fails_and_leaves_nothing(recorded_hub, config, tmp_path):
    config = copy.deepcopy(config)
    config["sources"]["hf_sst5_train"]["hub"]["revision"] = (
        "0123456789abcdef0123456789abcdef01234567"
    )
    result = fetch_through(recorded_hub, config, tmp_path, ["hf_sst5_train"])
    assert result.returncode != 0
    assert "0123456789abcdef0123456789abcdef01234567" in result.stderr
    assert not (tmp_path / "raw" / "hf_sst5_train" / "manifest.json").exists()
