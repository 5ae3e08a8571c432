"""Rajaei & Sheikhi's SST-2 table: a linear classifier on frozen features with and without the
cluster-based method (isotropy.geometry.classification)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isotropy.geometry.classification import (
    TokenFeatures,
    by_position,
    classification_table,
    pooled,
)
from isotropy.geometry.sts import evaluate_sts


def clustered_tokens(n_sentences=120, dim=16, seed=0):
    """Token states of labelled sentences: tokens drawn around a few far-apart 'word cluster'
    centres plus one common offset (anisotropic, clustered, as contextual tokens are), and a
    weak label direction shared by the tokens of positive sentences."""
    rng = np.random.default_rng(seed)
    centres = 8 * rng.normal(size=(4, dim)) + 10 * np.eye(dim)[0]
    lengths = rng.integers(3, 8, size=n_sentences)
    labels = rng.integers(0, 2, size=n_sentences)
    label_direction = np.eye(dim)[1]
    tokens = np.concatenate(
        [
            centres[rng.integers(0, 4, size=length)]
            + rng.normal(size=(length, dim))
            + 1.5 * label * label_direction
            for length, label in zip(lengths, labels)
        ]
    ).astype(np.float32)
    train = np.arange(n_sentences) < n_sentences * 2 // 3
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return TokenFeatures(tokens, offsets, labels, train)


def test_cluster_method_on_frozen_features_changes_iw_as_the_sts_path_does():
    features = clustered_tokens()
    table = classification_table(
        features, model="synthetic", seeds=(0, 1), n_clusters=4, n_directions=2, max_length=8
    )
    assert set(table["reading"]) == {"pooled", "positions"}
    # 'none' has no seed: one computation, repeated for each seed
    none = table[table["method"] == "none"]
    assert len(none) == 4 and none.groupby("reading")["accuracy"].nunique().eq(1).all()
    # The same I(W) as the STS path's on the same tokens and method (evaluate_sts
    # fits the transform on the token set and measures I(W) there).
    offsets, n = features.offsets, len(features.labels)
    gold = np.linspace(0, 5, n // 2)
    sts = evaluate_sts(
        features.tokens,
        np.arange(0, n, 2),
        np.arange(1, n, 2),
        gold,
        offsets=offsets,
        methods=("none", "cluster-based"),
        n_clusters=4,
        n_directions=2,
        seed=0,
        model="synthetic",
    ).set_index("method")
    ours = table[(table["seed"] == 0) & (table["reading"] == "pooled")].set_index("method")
    for method in ("none", "cluster-based"):
        assert ours.loc[method, "isotropy_sign_free"] == pytest.approx(
            sts.loc[method, "isotropy_sign_free"], rel=1e-9
        )
    # and the method raises it by orders of magnitude, on tokens and on pooled sentences
    assert (
        ours.loc["cluster-based", "isotropy_sign_free"]
        > 100 * ours.loc["none", "isotropy_sign_free"]
    )
    assert ours.loc["cluster-based", "isotropy_sentences"] > ours.loc["none", "isotropy_sentences"]


def test_classifier_and_feature_layouts_match_scikit_learn_by_hand():
    from sklearn.linear_model import LogisticRegression

    features = clustered_tokens(seed=3)
    table = classification_table(
        features, model="synthetic", seeds=(0,), methods=("none",), max_length=8
    ).set_index("reading")
    tokens, offsets = features.tokens.astype(np.float64), features.offsets
    means = np.stack([tokens[a:b].mean(axis=0) for a, b in zip(offsets[:-1], offsets[1:])])
    np.testing.assert_allclose(pooled(tokens, offsets), means)
    flat = by_position(tokens, offsets, 8)
    # sentence 0's second token sits at position 1; positions after its end are zeros
    np.testing.assert_array_equal(flat[0, 16:32], tokens[1].astype(np.float32))
    assert not flat[0, 16 * (offsets[1] - offsets[0]) :].any()
    train, labels = features.train, features.labels
    for reading, inputs in (("pooled", means), ("positions", flat)):
        reference = LogisticRegression(max_iter=1000).fit(inputs[train], labels[train])
        expected = 100 * reference.score(inputs[~train], labels[~train])
        assert table.loc[reading, "accuracy"] == pytest.approx(expected, abs=1e-9)
    assert table["accuracy"].gt(table["majority_accuracy"]).all()  # the label signal is found
    with pytest.raises(ValueError, match="more than max_length"):
        by_position(tokens, offsets, 3)


def test_features_refuse_inconsistent_arrays_and_round_trip(tmp_path):
    features = clustered_tokens(n_sentences=12)
    features.save(tmp_path / "f.npz")
    back = TokenFeatures.load(tmp_path / "f.npz")
    np.testing.assert_array_equal(back.tokens, features.tokens)
    np.testing.assert_array_equal(back.train, features.train)
    with pytest.raises(ValueError, match="both training and validation"):
        TokenFeatures(features.tokens, features.offsets, features.labels, features.train | True)
    with pytest.raises(ValueError, match="offsets"):
        TokenFeatures(features.tokens, features.offsets[:-1], features.labels, features.train)
    with pytest.raises(ValueError, match="unknown readings"):
        classification_table(features, model="m", readings=("cls",))


def test_sst2_rows_of_the_paper_comparison_are_judged_from_the_table(config):
    from isotropy.statistics import NOT_RUN
    from isotropy.verdicts.comparison import compare, read_published
    from isotropy.verdicts.measurements import measurement
    from isotropy.verdicts.measurements.sts import classification_measurements

    features = clustered_tokens()
    table = classification_table(
        features, model="miniLM", seeds=(0, 1), n_clusters=4, n_directions=2, max_length=8
    )
    measured = pd.DataFrame(classification_measurements(table, config))
    published = read_published()
    sst2 = published[published["quantity"].str.startswith("sst2")]
    assert len(sst2) == 4 and sst2["availability"].eq("").all()
    compared = compare(sst2, measured, {"geometry"})
    # every printed SST-2 number meets both readings' values, each with a verdict
    assert len(compared) == 8 and NOT_RUN not in set(compared["verdict"])
    percent = compared[compared["quantity"] == "sst2_iw_percent"]
    after = table[(table["method"] == "cluster-based") & (table["reading"] == "pooled")]
    assert percent["our_value"].iloc[0] == pytest.approx(100 * after["isotropy"].mean())
    accuracy = compared[
        (compared["quantity"] == "sst2_accuracy") & (compared["setup"].str.contains("pooled"))
    ]
    expected = table[(table["reading"] == "pooled")].groupby("method")["accuracy"].mean()
    assert sorted(accuracy["our_value"]) == pytest.approx(sorted(expected))
    assert accuracy["stand_in"].str.contains("for BERT").all()  # MiniLM stands in for BERT-base
    # without the table the rows are "not run" again, saying why
    empty = compare(sst2, pd.DataFrame([measurement("geometry", "dim", "x", "x")]), {"geometry"})
    assert set(empty["verdict"]) == {NOT_RUN} and empty["note"].str.contains("sst2").all()


def test_geometry_study_plans_the_table_only_for_configured_models(monkeypatch):
    from isotropy import paths, studies
    from isotropy.workflow import config as workflow_config
    from isotropy.workflow import inputs as workflow_inputs

    monkeypatch.delenv("ISOTROPY_MIRROR", raising=False)
    root = Path(__file__).resolve().parents[1]
    files = [root / "config.yaml", root / "config/offline.yaml"]
    config, settings = workflow_config.load_config(files)
    planned = studies.geometry.outputs(settings)
    assert paths.GEOMETRY_CLASSIFICATION in planned and paths.GEOMETRY_ISOTROPY in planned
    assert workflow_inputs.classification_files(settings) == [
        "results/geometry/miniLM/sst2/classification.csv"
    ]
    assert "miniLM" in studies.geometry.wildcards(settings)["model"]
    config["geometry"]["classification"]["models"] = []
    settings = workflow_config.check_loaded_config(config)
    assert paths.GEOMETRY_CLASSIFICATION not in studies.geometry.outputs(settings)
    assert workflow_inputs.classification_files(settings) == []
