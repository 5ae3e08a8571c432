"""The sensitivity study: label sets, the orthogonal control, the grid, its table, figure and cost."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from isotropy import estimate, sensitivity
from isotropy.bootstrap import BootstrapSettings
from isotropy.summaries import correlation_table
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = str(ROOT / "schemas" / "config.schema.yaml")


@pytest.fixture
def config():
    loaded = yaml.safe_load((ROOT / "config.yaml").read_text())
    validate(loaded, SCHEMA)
    return loaded


WORDS = pd.DataFrame(
    {
        "text": ["cat", "dog", "run", "blue", "tree", "fast", "zzz"],
        "labels": [["a"], ["a", "b"], ["b"], ["c"], ["a"], ["b", "c"], ["c"]],
    }
)
SECTION = {"paper_size": 3, "label_seed": 0}


def test_label_sets_keep_words_with_vectors_then_filter():
    vocabulary = pd.Series(["cat", "dog", "run", "blue", "tree", "fast"])  # no "zzz"
    every = sensitivity.label_set_table(WORDS, vocabulary, "all", SECTION)
    assert every["text"].tolist() == ["cat", "dog", "run", "blue", "tree", "fast"]
    single = sensitivity.label_set_table(WORDS, vocabulary, "single", SECTION)
    assert single["text"].tolist() == ["cat", "run", "blue", "tree"]
    sized = sensitivity.label_set_table(WORDS, vocabulary, "paper_size", SECTION)
    assert len(sized) == 3 and set(sized["text"]) <= set(every["text"])
    again = sensitivity.label_set_table(WORDS, vocabulary, "paper_size", SECTION)
    pd.testing.assert_frame_equal(sized, again)  # seeded
    with pytest.raises(ValueError, match="only 6 items"):
        sensitivity.label_set_table(WORDS, vocabulary, "paper_size", {**SECTION, "paper_size": 9})
    with pytest.raises(ValueError, match="Tikhonov"):
        sensitivity.label_set_table(WORDS, vocabulary, "tikhonov", SECTION)


def test_orthogonal_embedding_keeps_every_distance_and_angle():
    vectors = np.random.default_rng(0).standard_normal((40, 5)).astype(np.float32)
    embedded = sensitivity.orthogonal_embedding(vectors, 30, seed=1)
    assert embedded.shape == (40, 30)
    np.testing.assert_allclose(embedded @ embedded.T, vectors @ vectors.T, atol=1e-4)
    assert not np.allclose(embedded[:, :5], vectors)  # really rotated out of the first axes
    other = sensitivity.orthogonal_embedding(vectors, 30, seed=2)
    assert not np.allclose(embedded, other)
    with pytest.raises(ValueError, match="isometrically"):
        sensitivity.orthogonal_embedding(vectors, 4, seed=0)


def test_the_default_grid_and_its_settings(config):
    runs = targets.sensitivity_runs(config)
    section = config["sensitivity"]
    assert len(runs) == len(section["setups"]) * len(section["vectors"]) * len(
        section["label_sets"]
    ) * len(section["seeds"])
    assert "mpnet" not in section["vectors"]  # the 440 MB model only in the full grid
    settings = targets.sensitivity_settings(config, 3)
    assert settings["seed"] == 3 and settings["metric_stride"] == section["metric_stride"]
    assert targets.sensitivity_vector_inputs(config, "word2vec_orth300", "pos")["vectors"] == (
        "resources/sensitivity/embeddings/word2vec_orth300/pos/vectors.npy"
    )
    assert targets.sensitivity_vector_inputs(config, "miniLM", "pos")["vectors"] == (
        "resources/embeddings/miniLM/pos/vectors.npy"
    )


def test_full_grid_overlay_adds_mpnet_and_is_valid(config):
    full = yaml.safe_load((ROOT / "config" / "sensitivity_full.yaml").read_text())
    merged = workflow_config.deep_merge(copy.deepcopy(config), full)
    validate(merged, SCHEMA)
    workflow_config.check_config(merged)
    assert "mpnet" in merged["sensitivity"]["vectors"]


@pytest.mark.parametrize(
    "change, named",
    [
        ({"vectors": ["word2vec", "nope"]}, "'nope' is neither an encoder"),
        ({"label_sets": ["all", "tikhonov"]}, "Tikhonov"),
        ({"items_from": "nope"}, "sensitivity.items_from"),
        ({"orthogonal": {"x": {"of": "nope", "dim": 9}}}, "sensitivity.orthogonal.x.of"),
    ],
)
def test_inconsistent_sections_are_refused(config, change, named):
    config["sensitivity"].update(change)
    validate(config, SCHEMA)
    with pytest.raises(workflow_config.ConfigError, match=named):
        workflow_config.check_config(config)


def _runs_of(rng):
    traces, summaries = [], []
    for vectors, dim in (("word2vec", 50), ("miniLM", 384)):
        for label_set, clusters, sign in (("all", 900, 1.0), ("single", 26, -1.0)):
            for seed in (0, 1):
                iso = np.linspace(0.6, 0.5, 11) + 0.002 * rng.standard_normal(11)
                key = {"encoder": vectors, "dataset": "supersense", "label_set": label_set}
                traces.append(
                    pd.DataFrame(
                        {
                            **key,
                            "seed": seed,
                            "step": np.arange(0, 110, 10),
                            "isoscore": iso,
                            "silhouette": sign * iso + 0.001 * rng.standard_normal(11),
                        }
                    )
                )
                summaries.append(
                    {**key, "seed": seed, "dim": dim, "clusters": clusters, "items": 100}
                )
    return pd.concat(traces, ignore_index=True), pd.DataFrame(summaries)


def test_table_markdown_and_figure_from_runs(tmp_path):
    from isotropy.plots import save_figure
    from isotropy.plots.sensitivity import r_against_dimension

    traces, summaries = _runs_of(np.random.default_rng(0))
    by = ["encoder", "dataset", "label_set"]
    correlations = correlation_table(traces, by, BootstrapSettings(resamples=100))
    table = sensitivity.sensitivity_table(correlations, summaries, traces)
    assert list(table.columns) == sensitivity.TABLE_COLUMNS
    assert len(table) == 4
    signs = dict(zip(table["label_set"] + table["vectors"], np.sign(table["pearson_r"])))
    assert signs == {"allword2vec": 1, "singleword2vec": -1, "allminiLM": 1, "singleminiLM": -1}
    assert (table["pearson_r_ci_low"] <= table["pearson_r"]).all()
    first = traces[(traces["step"] == 0) & (traces["encoder"] == "word2vec")]
    first = first[first["label_set"] == "all"]
    assert table["isoscore_start"].iloc[0] == pytest.approx(first["isoscore"].mean())
    assert table["seeds"].tolist() == [2, 2, 2, 2]
    markdown = sensitivity.markdown_table(table)
    assert markdown.count("\n") == 6 and "| supersense | word2vec | 50 | all | 900 |" in markdown
    figure = r_against_dimension(table, "1000 updates, test settings")
    texts = [t.get_text() for t in figure.texts]
    assert any("1000 updates, test settings" in t and "bootstrap" in t for t in texts)
    save_figure(figure, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0


def test_cost_is_said_before_the_run(config, monkeypatch, tmp_path):
    monkeypatch.setenv("ISOTROPY_MIRROR", "/nonexistent-mirror")  # GloVe 50-d, by the file name
    monkeypatch.chdir(tmp_path)  # no stored embeddings or traces
    assert sensitivity.vector_dim(config, "word2vec") == 50
    assert sensitivity.vector_dim(config, "miniLM") == 384
    assert sensitivity.vector_dim(config, "word2vec_orth300") == 300
    lines = estimate.describe_sensitivity(config, "cpu", workdir=tmp_path)
    assert lines[0].startswith("sensitivity: 18 runs (2 setups x 3 vector sets x 3 label sets")
    assert "0 of 18 runs done" in lines[1] and "on one GPU" in lines[1]
    run = {"vectors": "word2vec", "setup": "supersense", "label_set": "all", "seed": 0}
    base = sensitivity.run_seconds(config, run, "cpu", estimate.CPU_SECONDS, 0.011)
    per_update, per_evaluation = estimate.CPU_SECONDS["supersense"]
    assert base == pytest.approx(1000 * per_update + 101 * per_evaluation)
    bigger = sensitivity.run_seconds(
        config, {**run, "vectors": "word2vec_orth300"}, "cpu", estimate.CPU_SECONDS, 0.011
    )
    assert bigger == pytest.approx(6 * base)
    smaller = sensitivity.run_seconds(
        config, {**run, "label_set": "paper_size"}, "cpu", estimate.CPU_SECONDS, 0.011
    )
    assert smaller < base / 4
