"""Isotropy-enhancing transforms against independent scikit-learn (PCA, KMeans) constructions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.mixture import GaussianMixture

from isotropy import metrics as M
from isotropy import transforms as T


def _anisotropic_clusters(n=600, d=24, clusters=4, seed=0):
    """Clusters with their own dominant directions, far from the origin (like raw BERT space)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, clusters, size=n)
    centres = rng.normal(size=(clusters, d)) * 6 + 10.0
    x = rng.normal(size=(n, d)) * np.geomspace(0.05, 1.0, d)
    for c in range(clusters):
        rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
        x[labels == c] = x[labels == c] @ rotation * 3 + centres[c]
    return x.astype(np.float32), labels


def test_all_but_the_top_matches_pca_construction():
    x, _ = _anisotropic_clusters()
    x = x.astype(np.float64)
    pca = PCA(n_components=3).fit(x)
    centred = x - x.mean(axis=0)
    expected = centred - (centred @ pca.components_.T) @ pca.components_
    out = T.all_but_the_top(x, 3)
    np.testing.assert_allclose(out, expected, atol=1e-9)
    np.testing.assert_allclose(out @ pca.components_.T, 0.0, atol=1e-9)  # top directions gone
    np.testing.assert_allclose(T.all_but_the_top(x, 0), centred, atol=1e-12)


def test_cluster_based_isotropy_matches_kmeans_pca_construction():
    x, _ = _anisotropic_clusters()
    x64 = x.astype(np.float64)
    labels = KMeans(n_clusters=4, random_state=5, n_init="auto").fit_predict(x64)
    expected = np.empty_like(x64)
    for c in np.unique(labels):
        members = x64[labels == c]
        pca = PCA(n_components=2).fit(members)
        centred = members - members.mean(axis=0)
        expected[labels == c] = centred - (centred @ pca.components_.T) @ pca.components_
    out = T.cluster_based_isotropy(x, n_clusters=4, n_directions=2, seed=5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=1e-4)
    # seeded: identical on a second run
    np.testing.assert_array_equal(
        out, T.cluster_based_isotropy(x, n_clusters=4, n_directions=2, seed=5)
    )
    # zero directions = per-cluster centring only
    np.testing.assert_allclose(
        T.cluster_based_isotropy(x64, n_clusters=4, n_directions=0, seed=5),
        M.cluster_centred(x64, labels),
        atol=1e-9,
    )


def test_cluster_based_isotropy_improves_isotropy_more_than_global_removal():
    x, _ = _anisotropic_clusters()
    local = T.cluster_based_isotropy(x, n_clusters=4, n_directions=2, seed=0)
    # I(W), the measure Rajaee & Pilehvar report, ranks local > global removal > raw
    assert M.partition_isotropy(local) > 2 * M.partition_isotropy(T.all_but_the_top(x, 3))
    assert M.partition_isotropy(T.all_but_the_top(x, 3)) > 1e6 * M.partition_isotropy(x)
    # and by IsoScore: four clusters span three between-cluster directions; removing them, or
    # centring each cluster, restores isotropy
    assert M.isoscore(T.all_but_the_top(x, 3)) > M.isoscore(x) + 0.3
    assert M.isoscore(local) > M.isoscore(x) + 0.3


def test_cluster_based_isotropy_gmm_variant():
    x, _ = _anisotropic_clusters()
    out = T.cluster_based_isotropy(x, n_clusters=4, n_directions=0, seed=1, method="gmm")
    labels = GaussianMixture(n_components=4, covariance_type="diag", random_state=1).fit_predict(
        x.astype(np.float64)
    )
    np.testing.assert_allclose(out, M.cluster_centred(x.astype(np.float64), labels), atol=1e-4)


def test_small_clusters_keep_a_direction_and_a_single_point_is_left_uncentred():
    x = np.random.default_rng(2).normal(size=(30, 6))
    # some clusters < 5 points
    out = T.cluster_based_isotropy(x, n_clusters=10, n_directions=4, seed=0)
    assert np.isfinite(out).all() and out.shape == x.shape
    # No member may become the zero vector: cosine similarity (STS) needs every row.
    assert np.linalg.norm(out, axis=1).min() > 1e-6
    x = np.vstack([np.random.default_rng(3).normal(size=(20, 4)), [[50.0, 50.0, 50.0, 50.0]]])
    out = T.cluster_based_isotropy(x, n_clusters=2, n_directions=1, seed=0)
    np.testing.assert_allclose(out[-1], x[-1])
    assert np.linalg.norm(out[:-1], axis=1).min() > 1e-6


def test_bad_input():
    x, _ = _anisotropic_clusters(n=40, d=5)
    bad = x.copy()
    bad[1, 1] = np.nan
    for function in (T.centre, lambda p: T.all_but_the_top(p, 1), T.cluster_based_isotropy):
        for points, message in [(bad, "1 NaN or infinite"), (x[0], "2-D array")]:
            with pytest.raises(ValueError, match=message):
                function(points)
    with pytest.raises(ValueError, match="n_directions"):
        T.all_but_the_top(x, 5)
    with pytest.raises(ValueError, match="n_directions"):
        T.cluster_based_isotropy(x, n_clusters=2, n_directions=5)
    with pytest.raises(ValueError, match="n_clusters"):
        T.cluster_based_isotropy(x, n_clusters=41)
    with pytest.raises(ValueError, match="method"):
        T.cluster_based_isotropy(x, n_clusters=2, n_directions=1, method="spectral")
