"""Why the cluster method costs accuracy (isotropy.rajaee_cls.cause) and its offline variant
(isotropy.rajaee_cls.method.OfflineFit): the measurement, on planted states whose answer is
known, both ways."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_bert import SMALL, sentiment_table

from isotropy.configuration.finetune import TrainingSettings
from isotropy.configuration.studies import ClusterMethod
from isotropy.finetune.features import epoch_order, load_model_and_tokenizer, task_features
from isotropy.finetune.training import finetune
from isotropy.rajaee_cls.cause import (
    Measurements,
    batch_agreement,
    method_accuracy,
    method_states,
    offline_agreement,
)
from isotropy.rajaee_cls.method import OfflineFit, cluster_cls, head_transform
from isotropy.rajaee_cls.results import (
    cause_verdict,
    clusters_remove_the_class,
    trained_differences,
)
from isotropy.readers.tasks import task_spec
from isotropy.transforms import cluster_based_isotropy


def planted(n: int, clusters_are_labels: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(states, labels), dim 8: the label is the sign along axis 0. Clusters are the labels: the
    two classes are two far blobs. Otherwise three far blobs along axis 1 (a nuisance, each
    holding both classes) and the classes a nearer split along axis 0."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    states = rng.standard_normal((n, 8))
    if clusters_are_labels:
        states[:, 0] += 8.0 * (2 * labels - 1)
    else:
        states[:, 0] += 3.0 * (2 * labels - 1)
        states[:, 1] += 20.0 * rng.integers(0, 3, n)
    return states, labels


def linear_head(states: torch.Tensor) -> torch.Tensor:
    """A trained head of the planted task: the logit difference is the state along axis 0."""
    return torch.stack([-states[:, 0], states[:, 0]], dim=1)


def test_offline_fit_is_the_method_on_its_own_points_and_ignores_batch_mates():
    states, _ = planted(96, clusters_are_labels=False, seed=1)
    fit = OfflineFit.fit(states, 3, 2, seed=0)
    x = torch.from_numpy(states)
    expected = cluster_based_isotropy(states, n_clusters=3, n_directions=2, seed=0)
    np.testing.assert_allclose(fit(x).numpy(), expected, atol=1e-8)
    # an item's transform does not depend on its batch (offline), but does fitted per batch
    assert torch.allclose(fit(x[:5]), fit(x)[:5])
    assert not torch.allclose(cluster_cls(x[:5], 3, 2, 0), cluster_cls(x, 3, 2, 0)[:5])
    # differentiable: the gradient reaches the states through a fixed centre
    leaf = x.clone().requires_grad_(True)
    fit(leaf).sum().backward()
    assert leaf.grad is not None and float(leaf.grad.abs().sum()) > 0


def test_offline_run_fits_before_each_epoch_and_measures_agreement(tiny_bert, tmp_path):
    train, validation = sentiment_table(48, 0), sentiment_table(32, 1)
    settings = TrainingSettings(**SMALL)
    cluster = ClusterMethod(clusters=2, directions=1, fit="offline")
    transform = head_transform("cluster", cluster, 0)
    assert transform is not None and transform.prepare is not None
    fits = []
    transform.transform.refit = lambda points, refit=transform.transform.refit: (
        fits.append(len(points)),
        refit(points),
    )
    spec = task_spec("sst2")
    tokenizer = load_model_and_tokenizer(tiny_bert, spec)[1]
    _, eval_features = task_features(spec, tokenizer, train, validation, settings)
    measure = Measurements(
        2,
        0,
        SMALL["epochs"],
        lambda epoch: epoch_order(len(train), 0, epoch).split(settings.batch_size),
        train["label"].tolist(),
        (eval_features, validation["label"].tolist()),
        inner=transform.transform,
        grid=[{"fit": "offline", "clusters": 2, "directions": 0}],
    )
    result = finetune(
        regulariser="none",
        lam=0.0,
        seed=0,
        model_spec=tiny_bert,
        task="sst2",
        out_dir=tmp_path,
        data=(train, validation),
        settings=settings,
        head_transform=dataclasses.replace(transform, prepare=measure),
    )
    assert fits == [48, 48, 48]  # before each of 2 epochs and before the evaluation
    assert [r["epoch"] for r in measure.records] == [0, 1, 2]
    assert all(-1 <= r["train_batch_ari_mean"] <= 1 for r in measure.records[:2])
    final = measure.records[-1]
    assert {"eval_batch_ari_mean", "eval_offline_ari"} <= set(final)
    assert 0 <= final["method_accuracy"][0]["accuracy"] <= 1
    assert result["head_transform"]["fit"] == "offline"


SWEEP = Path(__file__).resolve().parents[1] / "docs" / "data" / "rajaee_cls_cause.jsonl"


@pytest.mark.skipif(not SWEEP.is_file(), reason="no committed cause sweep yet")
def test_the_committed_sweep_finds_the_clusters_are_the_labels():
    """docs/rajaee-cls.md's first two bullets on the committed CPU sweep
    (:func:`clusters_remove_the_class`; its planted cases below)."""
    runs = [json.loads(line) for line in SWEEP.read_text(encoding="utf-8").splitlines() if line]
    plain = next(run for run in runs if run["method"] == "none")
    assert clusters_remove_the_class(plain)


def planted_sweep(clusters_are_labels: bool) -> dict:
    """A cause-sweep record of the planted states, measured as the sweep measures a model: ARI
    before training (random states) and after, and the head's accuracy after the method."""
    states, labels = planted(256, clusters_are_labels)
    noise = np.random.default_rng(3).standard_normal(states.shape)
    common = dict(seed=0, batch_size=64, training_states=states)
    in_batches = np.split(np.arange(256), 4)  # of 64
    ari = lambda x: batch_agreement(x, labels, in_batches, n_clusters=3, seed=0)  # noqa: E731
    fitted = lambda x: offline_agreement(OfflineFit.fit(x, 3, 0, seed=0), x, labels)  # noqa: E731
    points = [dict(fit=f, clusters=k, directions=d) for f in ("batch", "offline") for k, d in KD]
    after = [
        p | {"accuracy": method_accuracy(linear_head, states, labels, **p, **common)}
        for p in points
    ]
    before = dict(train_batch_ari_mean=float(np.mean(ari(noise))), train_offline_ari=fitted(noise))
    final = dict.fromkeys(("train_offline_ari", "eval_offline_ari"), fitted(states))
    final |= {"eval_batch_ari_mean": float(np.mean(ari(states))), "method_accuracy": after}
    return {"accuracy": 1.0, "majority_baseline": 0.5, "agreement": [before, final]}


KD = ((1, 0), (3, 0), (1, 2))


@pytest.mark.parametrize("clusters_are_labels", [True, False])
def test_the_predicate_says_no_where_the_clusters_are_a_nuisance(clusters_are_labels):
    """Clusters that are the labels: k-means agrees with them, and centring 3 clusters removes
    the class (the head read only the class mean difference); clusters on a nuisance axis hold
    both classes: no agreement, and centring them keeps the class."""
    record = planted_sweep(clusters_are_labels)
    assert clusters_remove_the_class(record) is clusters_are_labels
    final = record["agreement"][-1]
    assert (min(final["eval_batch_ari_mean"], final["eval_offline_ari"]) > 0.5) is (
        clusters_are_labels
    )
    after = {
        (p["fit"], p["clusters"], p["directions"]): p["accuracy"] for p in final["method_accuracy"]
    }
    for fit in ("batch", "offline"):
        assert after[(fit, 1, 0)] > 0.99  # centring the whole set keeps the class
        assert (after[(fit, 3, 0)] < 0.65) is clusters_are_labels
        # the dropped check, removing the whole set's top 2 directions, says yes in both cases
        assert after[(fit, 1, 2)] < 0.65


def trained_per_variant(seed: int) -> list[dict]:
    """The sweep's lines of one seed of planted nuisance clusters: per variant, a linear head
    trained on the training states after the method (batches of 32), scored on the evaluation's."""
    from sklearn.linear_model import LogisticRegression

    (train, y), (valid, labels) = planted(512, False, seed), planted(872, False, 100 + seed)
    lines = []
    for fit, k, d in zip(["none", "offline", *["batch"] * 3], (3, 3, 3, 1, 3), (0, 2, 0, 0, 2)):
        method = dict(fit=fit, clusters=k, directions=d)
        on = functools.partial(method_states, seed=seed, batch_size=32, training_states=train)
        moved = [x if fit == "none" else on(x, **method).numpy() for x in (train, valid)]
        head = LogisticRegression(max_iter=1000).fit(moved[0], y)
        ari = batch_agreement(valid, labels, np.array_split(np.arange(872), 28), k, seed)
        accuracy = float((head.predict(moved[1]) == labels).mean())
        lines.append(dict(method="none" if fit == "none" else "cluster", cluster_method=method))
        lines[-1] |= dict(seed=seed, accuracy=accuracy, majority_baseline=0.5)
        lines[-1]["agreement"] = [{"eval_batch_ari_mean": float(np.mean(ari))}]
    return lines


def test_the_cause_is_not_decided_where_the_clusters_are_not_the_labels():
    """Issue 93: centring 3 nuisance clusters costs 1 to 3 points and the offline variant, with 2
    directions removed, costs half the accuracy; the old rule decided on both intervals below 0."""
    lines = [line for seed in range(5) for line in trained_per_variant(seed)]
    differences = trained_differences(lines).set_index("minuend")["reads"]
    assert differences["batch k3 d0"] == "below 0" == differences["offline k3 d2"]
    verdict = cause_verdict(lines)
    assert verdict.startswith("The cause is not decided (centring 3 clusters − the whole batch: ")
    assert "needs above 0.15)." in verdict and "decide the cause" not in verdict
