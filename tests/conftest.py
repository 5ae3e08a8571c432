"""Shared test fixtures."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
from local_server import FakeClock, Server

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def sources_lock(tmp_path_factory, monkeypatch) -> Path:
    """Every test's downloads record into a lock of its own, never the project's
    config/sources.lock ($ISOTROPY_SOURCES_LOCK wins over config downloads.lock_file)."""
    path = tmp_path_factory.mktemp("lock") / "sources.lock"
    monkeypatch.setenv("ISOTROPY_SOURCES_LOCK", str(path))
    monkeypatch.delenv("ISOTROPY_RELOCK", raising=False)
    return path


@pytest.fixture(autouse=True, scope="session")
def figure_checks():
    """Every figure a test saves (isotropy.plots.checks.save_figure) is checked first: an
    overlap, an unnamed curve or text too small at the stated page width fails the test."""
    from figure_checks import check_figure

    from isotropy.plots import checks

    checks.FIGURE_CHECKS.append(check_figure)
    yield check_figure
    checks.FIGURE_CHECKS.remove(check_figure)


@pytest.fixture(scope="session")
def shipped_config() -> dict:
    """config.yaml's effective configuration (config/sources.yaml under it, the models' defaults
    filled in), as the workflow runs it: read once; a test that changes it takes ``config``."""
    from isotropy.workflow.config import load_config  # here: the device image has no Snakemake

    return load_config([REPO_ROOT / "config.yaml"]).config


@pytest.fixture
def config(shipped_config) -> dict:
    """The suite's one configuration fixture: a copy of ``shipped_config`` the test may change."""
    return copy.deepcopy(shipped_config)


@pytest.fixture(scope="session")
def mirror_root() -> Path:
    """The offline data mirror: $ISOTROPY_MIRROR, else ../shared/mirror beside the repository.

    Tests that need it are skipped where it is absent, and fail under CI (CI=true).
    """
    import tiny_workflow

    return tiny_workflow.require_mirror().resolve()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """The tiny configuration run through Snakemake once per session, rule ``all``; its
    environment variables: docs/testing.md. Returns (workdir, args, mirror); ``args``: the
    arguments of :func:`tiny_workflow.snakemake` without targets."""
    import tiny_workflow

    mirror_source = tiny_workflow.require_mirror()
    kept = os.environ.get("ISOTROPY_TINY_RUN_DIR")
    base = Path(kept) if kept else tmp_path_factory.mktemp("tiny")
    if (base / "config.yaml").is_file():
        mirror, config = base / "mirror", base / "config.yaml"
    else:
        mirror = tiny_workflow.make_tiny_mirror(mirror_source, base / "mirror")
        config = tiny_workflow.write_tiny_config(base / "config.yaml", mirror)
    workdir = base / "work"
    args = [
        "--snakefile",
        str(REPO_ROOT / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(config),
        "--cores",
        os.environ.get("ISOTROPY_TINY_RUN_CORES", "2"),
    ]
    env = tiny_workflow.snakemake_environment(mirror)
    threads = os.environ.get("ISOTROPY_TINY_RUN_THREADS")
    if threads:
        args += ["--max-threads", threads]
        env.update(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    # 50 min: about 10 idle, 19 at load 7, and two CI runs on one machine double it
    timeout = int(os.environ.get("ISOTROPY_TINY_RUN_TIMEOUT", "3000"))
    result = tiny_workflow.snakemake(*args, "all", env=env, timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"snakemake failed:\n{result.stderr[-6000:]}")
    return workdir, args, mirror


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    """A 2-layer, 32-dim BERT with a word-level vocabulary, saved as a local model folder."""
    import torch
    from tiny_bert import WORDS
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    from isotropy.models import ModelSpec

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return ModelSpec(path=str(folder))


@pytest.fixture(scope="session")
def local_server():
    """The suite's one local HTTP server (tests/local_server.py), started on first use."""
    server = Server()
    yield server
    server.close()


@pytest.fixture
def http(local_server):
    """The local HTTP server, with no routes (each test sets its own) and no requests seen."""
    local_server.reset()
    yield local_server
    local_server.reset()


@pytest.fixture
def clock() -> FakeClock:
    """A download clock on which waits are recorded, never waited (tests/local_server.py)."""
    return FakeClock()
