"""Metrics against independent references (IsoScore package, scikit-learn, scikit-dimension,
brute-force numpy) on random, anisotropic, clustered and real MiniLM embeddings, plus properties
and bad input."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import skdim
import torch
from IsoScore.IsoScore import IsoScore, IsoScore_star
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.neighbors import NearestNeighbors
from tiny_workflow import minilm_polarity

from isotropy import metrics as M
from isotropy.metrics import clusters as cluster_metrics
from isotropy.metrics import dimensions
from isotropy.metrics.criteria import dunn

# ---- data ----------------------------------------------------------------------------------------


def _random(n=300, d=20, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _anisotropic(n=400, d=30, seed=1):
    rng = np.random.default_rng(seed)
    scales = np.geomspace(0.01, 10, d)
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return (rng.normal(size=(n, d)) * scales) @ rotation + 7.0  # far from the origin on purpose


def _clustered(n=400, d=16, centers=4, seed=2):
    return make_blobs(
        n_samples=n, n_features=d, centers=centers, cluster_std=1.5, random_state=seed
    )


@pytest.fixture(scope="module")
def minilm():
    """48 real all-MiniLM-L6-v2 sentence embeddings of polarity sentences (24 pos, 24 neg)."""
    vectors, positive = minilm_polarity(24)
    return vectors, np.where(positive, "pos", "neg")


def _tall():
    # the d x d scatter path, several row blocks of float32
    rng = np.random.default_rng(14)
    return (rng.normal(size=(50_000, 96)) * np.geomspace(0.05, 2, 96) + 3.0).astype(np.float32)


def _manifold(n=500, intrinsic=4, ambient=12, seed=10):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, intrinsic)) @ rng.normal(size=(intrinsic, ambient)) + 3.0


def _with_duplicates():
    x = _manifold(n=300, intrinsic=5, ambient=10)
    return np.vstack([x, x[:7]])


DATASETS = {
    "random": lambda: _random(),
    "anisotropic": lambda: _anisotropic(),
    "clustered": lambda: _clustered()[0],
    "n_less_than_d": lambda: _random(n=40, d=100, seed=3),  # the n x n Gram path
    "n_much_less_than_d": lambda: _random(n=30, d=500, seed=14) * np.geomspace(0.1, 1, 500),
    "many_rows_in_float32": _tall,
    # skdim's TwoNN: the kd-tree path (d <= 25) and distance chunks
    "manifold_12d": lambda: _manifold(n=800, intrinsic=6, ambient=12),
    "manifold_40d": lambda: _manifold(n=800, intrinsic=6, ambient=40),
    "duplicates": _with_duplicates,
}


def _skdim_twonn(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # skdim warns of the duplicates
        return skdim.id.TwoNN().fit(x).dimension_


# metric: (ours, the independent reference, the data sets it is checked on)
REFERENCES = {
    "isoscore": (M.isoscore, lambda x: float(IsoScore(x.astype(np.float64))), list(DATASETS)[:6]),
    "twonn": (M.twonn_dimension, _skdim_twonn, ["manifold_12d", "manifold_40d", "duplicates"]),
}


# ---- IsoScore / IsoScore* ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "metric, name", [(m, name) for m, (*_, names) in REFERENCES.items() for name in names]
)
def test_metric_equals_its_reference_package(metric, name):
    ours, reference, _ = REFERENCES[metric]
    x = DATASETS[name]()
    assert ours(x) == pytest.approx(reference(x), abs=1e-6)


def test_metrics_equal_their_references_on_minilm(minilm):
    vectors, labels = minilm  # n = 48 < d = 384: IsoScore*'s shrinkage matters
    points = vectors.astype(np.float64)
    reference = float(IsoScore(points))
    assert M.isoscore(vectors) == pytest.approx(reference, abs=1e-6)
    assert M.isoscore(torch.from_numpy(vectors)) == pytest.approx(reference, abs=1e-6)
    # Σ_S: the covariance of the positive half, regularised as the authors advise
    sigma = torch.from_numpy(np.cov(points[:24].T) + 0.01 * np.eye(points.shape[1]))
    for zeta in (0.0, 0.3, 1.0):
        expected = float(IsoScore_star(points, sigma, zeta))
        ours = M.isoscore_star(torch.from_numpy(points), sigma, zeta)
        assert float(ours) == pytest.approx(expected, abs=1e-6)
    expected = silhouette_score(points, labels)
    assert M.silhouette(vectors, labels) == pytest.approx(expected, abs=1e-6)
    # the same data for both: skdim would otherwise round float32 distances, we use float64
    reference = skdim.id.TwoNN().fit(points).dimension_
    assert M.twonn_dimension(vectors) == pytest.approx(reference, abs=1e-6)


def test_isoscore_properties():
    rng = np.random.default_rng(4)
    assert M.isoscore(rng.normal(size=(20000, 10))) > 0.99  # isotropic Gaussian
    line = rng.normal(size=(500, 1)) * rng.normal(size=(1, 10))
    assert M.isoscore(line) == pytest.approx(0.0, abs=1e-9)  # one direction
    x = _anisotropic()
    rotation, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    # invariant to rotation, scale and translation
    assert M.isoscore(3.0 * x @ rotation - 11.0) == pytest.approx(M.isoscore(x), abs=1e-9)
    assert 0.0 <= M.isoscore(x) < 0.5


def test_isoscore_is_one_exactly_when_the_covariance_is_a_multiple_of_the_identity():
    """Isotropy is a covariance proportional to I: IsoScore is 1 there and below 1 off it."""
    rng = np.random.default_rng(5)
    # orthonormal centred columns: the sample covariance is exactly (3 / (n - 1)) · I
    basis, _ = np.linalg.qr(rng.normal(size=(200, 10)) - rng.normal(size=(200, 10)).mean(0))
    basis -= basis.mean(axis=0)
    basis, _ = np.linalg.qr(basis)
    spherical = np.sqrt(3.0) * basis + 4.0
    assert np.allclose(np.cov(spherical, rowvar=False), 3.0 / 199 * np.eye(10), atol=1e-12)
    assert M.isoscore(spherical) == pytest.approx(1.0, abs=1e-9)
    stretched = spherical * np.r_[1.1, np.ones(9)]  # one variance 21% larger: no longer ∝ I
    assert M.isoscore(stretched) < 1.0 - 1e-4


def test_isoscore_star_is_one_and_zero_at_the_extremes():
    """IsoScore* is 1 for an isotropic cloud and 0 for one direction, whatever ζ, when the
    reference sample has the same shape (a wrong shrinkage target would move both)."""
    rng = np.random.default_rng(6)
    basis, _ = np.linalg.qr(rng.normal(size=(400, 8)))
    basis -= basis.mean(axis=0)
    basis, _ = np.linalg.qr(basis)
    direction = rng.normal(size=(1, 8))
    line = rng.normal(size=(400, 1)) * direction
    for zeta in (0.0, 0.2, 0.75):
        for cloud, reference, expected in ((basis, basis, 1.0), (line, line * 2.0, 0.0)):
            x, ref = torch.from_numpy(cloud), M.covariance(torch.from_numpy(reference))
            assert float(M.isoscore_star(x, ref, zeta)) == pytest.approx(expected, abs=1e-6)
    # an isotropic reference lifts the line off 0: the extremes need the reference's shape too
    isotropic = M.covariance(torch.from_numpy(20.0 * basis))  # variances near the line's
    lifted = M.isoscore_star(torch.from_numpy(line), isotropic, 0.75)
    assert float(lifted) > 0.1


@pytest.mark.parametrize("zeta", [0.0, 0.2, 0.75])
def test_isoscore_star_equals_package(zeta):
    x = _anisotropic(n=60)  # few points: the shrinkage matters
    reference = np.cov(_random(n=2000, d=30, seed=9), rowvar=False)
    ours = M.isoscore_star(torch.from_numpy(x), torch.from_numpy(reference), zeta)
    assert float(ours) == pytest.approx(
        float(IsoScore_star(x, torch.from_numpy(reference), zeta)), abs=1e-6
    )
    if zeta == 0.0:  # no shrinkage: IsoScore, with or without a reference
        assert float(ours) == pytest.approx(M.isoscore(x), abs=1e-12)
        star = float(M.isoscore_star(torch.from_numpy(x)))
        assert star == pytest.approx(M.isoscore(x), abs=1e-12)


def test_isoscore_star_is_differentiable():
    rng = np.random.default_rng(5)
    x = torch.tensor(rng.normal(size=(12, 4)) * [1.0, 2.0, 0.5, 3.0], requires_grad=True)
    reference = torch.eye(4, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda p: M.isoscore_star(p, reference, 0.3), (x,))
    # gradient ascent on the score makes a float32 cloud more isotropic
    cloud = torch.tensor(_anisotropic(n=200, d=8), dtype=torch.float32, requires_grad=True)
    before = M.isoscore(cloud)
    optimiser = torch.optim.Adam([cloud], lr=0.05)
    for _ in range(20):
        optimiser.zero_grad()
        penalty = 1 - M.isoscore_star(cloud)
        assert penalty.dtype == torch.float32 and penalty.ndim == 0
        penalty.backward()
        optimiser.step()
    assert M.isoscore(cloud) > before + 0.05


# ---- silhouette ----------------------------------------------------------------------------------


def _singletons():
    labels = np.array(["a"] * 50 + ["b"] * 60 + ["c"] * 5 + ["solo1", "solo2", "solo3", "x", "x"])
    return _anisotropic(n=120, d=10), labels


def _many_clusters():
    # Many clusters (multi-label targets): per-block cluster sums in one pass (numpy's reduceat).
    rng = np.random.default_rng(11)
    labels = np.concatenate([rng.integers(0, 90, size=290), np.arange(1000, 1010)])  # 10 solos
    return rng.normal(size=(300, 8)) + (labels[:, None] % 7) * 0.5, labels


def _zipf_clusters():
    # n above the float64 threshold: float32 distance blocks; 1,315 clusters as in supersense
    rng = np.random.default_rng(11)
    labels = np.minimum(rng.zipf(1.3, size=6000), 1315)
    return (rng.normal(size=(6000, 16)) + (labels[:, None] % 5)).astype(np.float32), labels


def _long_clusters():
    # More clusters than the CPU sums by slices, each long: one index_add_ pass sums hundreds of
    # float32 distances per cluster and block column; uncentred points make cancellation likely.
    rng = np.random.default_rng(16)
    labels = rng.integers(0, 20, size=6000)
    x = rng.normal(size=(6000, 64)) + (labels[:, None] % 5) * 0.3 + 5.0
    return x.astype(np.float32), labels


def _float32_blocks():
    # n above the float64 threshold: float32 distance blocks, float64 accumulation
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 3, size=5000)
    scales = np.geomspace(0.1, 3, 48)
    x = rng.normal(size=(5000, 48)) * scales + labels[:, None] * 0.4 + 20.0
    return x.astype(np.float32), labels


# name: (data, block sizes (None: the default), tolerance); small blocks exercise the symmetric
# block bookkeeping
SILHOUETTE_CASES = {
    "blobs": (_clustered, (None, 1, 7, 64, 1000), 1e-10),
    "singletons and string labels": (_singletons, (None,), 1e-6),
    "many clusters": (_many_clusters, (1, 13, 64, 300), 1e-10),
    "1315 zipf clusters in float32": (_zipf_clusters, (None, 500, 6000), 1e-6),
    "long clusters above the slice threshold": (_long_clusters, (None,), 1e-7),
    "float32 blocks": (_float32_blocks, (700,), 1e-6),
}


@pytest.mark.parametrize("case", SILHOUETTE_CASES)
def test_silhouette_equals_sklearn_on_clusters(case):
    make, blocks, tolerance = SILHOUETTE_CASES[case]
    x, labels = make()
    reference = silhouette_score(np.asarray(x, dtype=np.float64), labels)
    for block in blocks:
        assert M.silhouette(x, labels, block_size=block) == pytest.approx(reference, abs=tolerance)
    if labels.dtype.kind == "i":  # torch tensors in, as the optimisation passes them
        ours = M.silhouette(torch.from_numpy(x), torch.from_numpy(labels))
        assert ours == pytest.approx(reference, abs=max(tolerance, 1e-6))


@pytest.mark.parametrize("n_points", [600, 4500])  # float64 and float32 distance blocks
def test_silhouette_accelerator_path_equals_sklearn(monkeypatch, n_points):
    # The GPU path (slices for few clusters, float64 running sums for many), run on the CPU.
    monkeypatch.setattr(cluster_metrics, "_transposed_cpu_blocks", lambda device: False)
    rng = np.random.default_rng(15)
    few = rng.integers(0, 3, size=n_points)
    many = np.minimum(rng.zipf(1.3, size=n_points), 400)
    for labels in (few, many):
        x = (rng.normal(size=(n_points, 12)) + (labels[:, None] % 4) * 0.7).astype(np.float32)
        reference = silhouette_score(x.astype(np.float64), labels)
        for block in (None, 97):
            assert M.silhouette(x, labels, block_size=block) == pytest.approx(reference, abs=1e-6)


def test_silhouette_multilabel_rows_are_clusters():
    rng = np.random.default_rng(7)
    matrix = rng.integers(0, 2, size=(200, 4))
    x = rng.normal(size=(200, 12)) + matrix @ rng.normal(size=(4, 12))
    as_strings = np.array(["".join(map(str, row)) for row in matrix])  # independent encoding
    assert M.silhouette(x, matrix) == pytest.approx(silhouette_score(x, as_strings), abs=1e-6)
    assert len(np.unique(M.cluster_ids(matrix))) == len(np.unique(as_strings))


def test_silhouette_subsample_matches_sklearn_draw():
    x, y = _clustered(n=600)
    ours = M.silhouette(x, y, sample_size=150, seed=3)
    assert ours == pytest.approx(silhouette_score(x, y, sample_size=150, random_state=3), abs=1e-6)
    assert ours == M.silhouette(x, y, sample_size=150, seed=3)  # seeded
    assert ours != M.silhouette(x, y, sample_size=150, seed=4)


def test_cluster_ids():
    assert M.cluster_ids(["b", "a", "b"]).tolist() == [1, 0, 1]
    assert M.cluster_ids(np.array([[0, 1], [1, 0], [0, 1]])).tolist() == [0, 1, 0]
    mixed = np.array([1, "x", (1, 2), 1], dtype=object)
    assert M.cluster_ids(mixed).tolist() == [0, 1, 2, 0]


# ---- cosine similarities -------------------------------------------------------------------------


def _cosine_matrix(x):
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit @ unit.T


def test_average_cosine_similarity_matches_all_pairs_mean():
    x = _anisotropic(n=60, d=10)
    cos = _cosine_matrix(x)
    pairs = cos[~np.eye(60, dtype=bool)]
    # The estimate's sampling error is sd / sqrt(n_pairs) (3.3e-4 here; the code is 2.1e-5 off):
    # four of them (1.3e-3) fail a point paired with itself (cosine 1 in 1/60 of the
    # pairs: +2.4e-3).
    tolerance = 4 * pairs.std() / np.sqrt(200_000)
    found = M.average_cosine_similarity(x, n_pairs=200_000)
    assert found == pytest.approx(pairs.mean(), abs=tolerance)
    assert M.average_cosine_similarity(x, seed=1) == M.average_cosine_similarity(x, seed=1)
    same = np.ones((5, 3)) * np.arange(1, 6)[:, None]
    assert M.average_cosine_similarity(same) == pytest.approx(1.0)


def test_s_inter_and_s_intra_against_pair_loops():
    rng = np.random.default_rng(8)
    types = np.repeat(np.array(["the", "cat", "sat", "on", "mat"]), [6, 4, 3, 2, 1])
    x = rng.normal(size=(len(types), 7)) + 2.0
    cos = _cosine_matrix(x)
    cross = [cos[i, j] for i, j in itertools.permutations(range(len(x)), 2) if types[i] != types[j]]
    assert M.s_inter(x, types, max_per_type=100) == pytest.approx(np.mean(cross), abs=1e-12)
    per_type = []
    for t in np.unique(types):
        idx = np.flatnonzero(types == t)
        if len(idx) > 1:
            per_type.append(np.mean([cos[i, j] for i, j in itertools.combinations(idx, 2)]))
    assert M.s_intra(x, types) == pytest.approx(np.mean(per_type), abs=1e-12)
    # one instance per type: the mean cosine over the pairs of the chosen representatives
    value = M.s_inter(x, types, seed=3)
    candidates = [
        np.mean([cos[a, b] for a, b in itertools.combinations(choice, 2)])
        for choice in itertools.product(*[np.flatnonzero(types == t) for t in np.unique(types)])
    ]
    assert min(abs(value - c) for c in candidates) < 1e-12
    capped = M.s_intra(x, types, max_per_type=2, seed=1)
    assert capped != M.s_intra(x, types) and -1 <= capped <= 1


def test_per_cluster_statistics_average_inside_clusters_unweighted():
    # by hand: cluster A = four points at ±e1, ±e2 of types a,b,a,b after centring; cluster B = a
    # pair of one type, far away. Inside A: S_intra = mean(cos(e1,-e1), cos(e2,-e2)) = -1;
    # S_inter over distinct types, all instances: cos(±e1, ±e2) = 0. B has one type: no S_inter.
    a = np.array([[1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0], [0, -1.0, 0]]) + [5.0, 5.0, 0]
    b = np.array([[0, 0, 1.0], [0, 0, 3.0]]) + [0, 0, 50.0]
    x, types, clusters = np.vstack([a, b]), ["a", "b", "a", "b", "c", "c"], [0, 0, 0, 0, 1, 1]
    stats = M.per_cluster_cosine_statistics(x, types, clusters, max_per_type=10)
    assert stats["s_inter"] == pytest.approx(0.0, abs=1e-12) and stats["clusters_inter"] == 1
    # B centred: (0,0,-1), (0,0,1): cosine -1, the same as A's; unweighted mean of -1 and -1
    assert stats["s_intra"] == pytest.approx(-1.0) and stats["clusters_intra"] == 2
    # unweighted over clusters: a big cluster counts as much as a small one
    rng = np.random.default_rng(4)
    big, small = rng.normal(size=(60, 6)) + 3, rng.normal(size=(6, 6)) - 3
    x = np.vstack([big, small])
    clusters = np.repeat([0, 1], [60, 6])
    types = np.concatenate([np.arange(60) % 20, np.arange(6) % 3])
    stats = M.per_cluster_cosine_statistics(x, types, clusters, max_per_type=10)
    centred = M.cluster_centred(x, clusters)
    per = [M.s_intra(centred[clusters == c], types[clusters == c], max_per_type=10) for c in (0, 1)]
    assert stats["s_intra"] == pytest.approx(np.mean(per), rel=1e-12)
    pooled = M.s_intra(centred, types, max_per_type=10)  # types 0-2 mix both clusters when pooled
    assert abs(pooled - stats["s_intra"]) > 1e-3
    # one cluster: per-cluster and pooled are the same computation
    one = np.zeros(len(x), dtype=int)
    assert M.per_cluster_cosine_statistics(x, types, one, max_per_type=10)[
        "s_inter"
    ] == pytest.approx(M.s_inter(M.cluster_centred(x, one), types, max_per_type=10), rel=1e-12)


# ---- k-means by silhouette, cluster centring -----------------------------------------------------


def test_kmeans_by_silhouette_finds_blobs_and_no_structure():
    x, y = make_blobs(n_samples=600, n_features=8, centers=5, cluster_std=0.5, random_state=0)
    found = M.kmeans_by_silhouette(x, seed=0, sample_size=400)
    assert len(np.unique(found)) == 5 and adjusted_rand_score(y, found) == pytest.approx(1.0)
    uniform = np.random.default_rng(0).normal(size=(400, 20))
    assert not M.kmeans_by_silhouette(uniform, k_range=(2, 5)).any()


# ---- intrinsic dimension -------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_lid_equals_skdim_mle(metric):
    x, k = _manifold(), 20
    dist, idx = NearestNeighbors(n_neighbors=k, metric=metric).fit(x).kneighbors()
    reference = skdim.id.MLE().fit(x, precomputed_knn_arrays=(dist, idx), comb="mean")
    # skdim's pointwise MLE uses (k - 1) in the numerator, Cai et al.'s formula k
    expected = reference.dimension_pw_ * k / (k - 1)
    np.testing.assert_allclose(dimensions._lid_pointwise(x, k, metric).numpy(), expected, rtol=1e-9)
    assert M.local_intrinsic_dimension(x, k=k, metric=metric) == pytest.approx(
        expected.mean(), rel=1e-9
    )


def test_squared_distance_lid_is_exactly_half_on_any_cloud():
    # Cai et al.'s faiss IndexFlatL2 returns r²: log(r²_ij/r²_ik) = 2 log(r_ij/r_ik), so LID halves
    rng = np.random.default_rng(1)
    x = rng.standard_t(3, size=(300, 12)) * rng.uniform(0.1, 3, size=12)
    true = M.local_intrinsic_dimension(x, k=15)
    squared = M.local_intrinsic_dimension(x, k=15, distances="squared")
    assert squared == pytest.approx(true / 2, rel=1e-12)
    assert M.cai_local_intrinsic_dimension(x, k=15) == pytest.approx(true / 2, rel=1e-12)
    # cosine: their inner-product index gives the same estimate as ours
    assert M.cai_local_intrinsic_dimension(x, k=15, metric="cosine") == M.local_intrinsic_dimension(
        x, k=15, metric="cosine"
    )
    with pytest.raises(ValueError, match="distances must be 'true' or 'squared'"):
        M.local_intrinsic_dimension(x, k=15, distances="cubed")
    # exact duplicates are dropped (a flat manifold's dimension: test_geometry.py's lid_table)
    doubled = np.vstack([x, x[:10]])
    assert M.local_intrinsic_dimension(doubled, k=15) == pytest.approx(true)


# ---- partition-function isotropy -----------------------------------------------------------------


def _rajaee_isotropy(representations, both_signs=False):
    """Rajaee & Pilehvar's notebook ``isotropy()``, as published (plain np.exp, numpy's general
    eigen-solver and its signs); ``both_signs``: every eigenvector with either sign."""
    _, eig_vectors = np.linalg.eig(representations.T @ representations)
    projections = representations @ np.real(eig_vectors)
    sums = np.exp(projections).sum(axis=0)
    if both_signs:
        sums = np.concatenate([sums, np.exp(-projections).sum(axis=0)])
    return sums.min() / sums.max()


def test_partition_isotropy_follows_the_solver_signs_of_rajaee_and_pilehvar():
    # by hand: WᵀW = diag(5, 0.25), eigenvectors ±e1, ±e2;
    # Z(s1·e1) = e^s1 + e^2s1 + 1, Z(s2·e2) = 2 + e^(s2/2)
    w = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 0.5]])
    vectors = np.linalg.eig(w.T @ w)[1]
    s1, s2 = np.sign(vectors[0, 0]), np.sign(vectors[1, 1])
    z = [np.exp(s1) + np.exp(2 * s1) + 1, 2 + np.exp(s2 / 2)]
    assert M.partition_isotropy(w) == pytest.approx(min(z) / max(z), rel=1e-12)
    every_sign = [np.exp(1) + np.exp(2) + 1, np.exp(-1) + np.exp(-2) + 1]
    every_sign += [2 + np.exp(0.5), 2 + np.exp(-0.5)]
    both = min(every_sign) / max(every_sign)
    assert M.partition_isotropy(w, signs="both") == pytest.approx(both, rel=1e-12)
    # uncentred MiniLM-like cloud: the authors' function, and the sign-free value below it
    rng = np.random.default_rng(21)
    x = rng.normal(size=(500, 12)) * np.linspace(0.1, 0.6, 12) + 0.3
    assert M.partition_isotropy(x) == pytest.approx(_rajaee_isotropy(x), rel=1e-9)
    assert M.partition_isotropy(x, signs="both") < M.partition_isotropy(x)
    # a cloud symmetric under negation has Z(c) = Z(-c): both conventions agree exactly
    symmetric = np.vstack([x - x.mean(axis=0), x.mean(axis=0) - x])
    signed = M.partition_isotropy(symmetric, signs="both")
    assert M.partition_isotropy(symmetric) == pytest.approx(signed, rel=1e-12)
    with pytest.raises(ValueError, match="signs must be 'solver'"):
        M.partition_isotropy(x, signs="plus")
    # sign-free: the direct formula, near 1 when isotropic, far below it with a common direction
    rng = np.random.default_rng(13)
    w = rng.normal(size=(300, 8)) * np.linspace(0.05, 0.5, 8)
    shifted = w + 1.5
    for cloud in (w, shifted):
        expected = _rajaee_isotropy(cloud, both_signs=True)
        assert M.partition_isotropy(cloud, signs="both") == pytest.approx(expected, rel=1e-9)
    assert M.partition_isotropy(rng.normal(size=(50_000, 5)) * 0.1, signs="both") > 0.95
    shifted_iw = M.partition_isotropy(shifted, signs="both")
    assert shifted_iw < 0.01 * M.partition_isotropy(w, signs="both")
    # stable where exp(cᵀw) overflows float64 (the direct formula gives inf / inf)
    for signs in ("solver", "both"):
        value = M.partition_isotropy(w * 5000.0, signs=signs)
        assert np.isfinite(value) and 0.0 <= value <= 1.0


# ---- bad input -----------------------------------------------------------------------------------

GOOD = _random(n=30, d=5)
LABELS = np.arange(30) % 3


def _with_labels(function):
    """``function(points, labels)`` with labels as many as the points' rows, where it has rows."""
    return lambda p: function(p, LABELS[: len(p)] if np.ndim(p) == 2 else LABELS)


POINT_FUNCTIONS = {
    "isoscore": M.isoscore,
    "isoscore_star": lambda p: M.isoscore_star(torch.as_tensor(p)),
    "average_cosine_similarity": M.average_cosine_similarity,
    "local_intrinsic_dimension": lambda p: M.local_intrinsic_dimension(p, k=3),
    "twonn_dimension": M.twonn_dimension,
    "partition_isotropy": M.partition_isotropy,
    "silhouette": _with_labels(M.silhouette),
    "calinski_harabasz": _with_labels(M.calinski_harabasz),
    "davies_bouldin": _with_labels(M.davies_bouldin),
    "s_inter": _with_labels(M.s_inter),
    "dunn": _with_labels(dunn),
}


@pytest.mark.parametrize("name", POINT_FUNCTIONS)
def test_bad_points_raise(name):
    with_nan = GOOD.copy()
    with_nan[3, 2] = np.nan
    with_inf = GOOD.copy()
    with_inf[0, 0] = np.inf
    for points, message in [
        (with_nan, "1 NaN or infinite"),
        (with_inf, "NaN or infinite"),
        (GOOD[0], "2-D array"),
        (GOOD[None], "2-D array"),
        (GOOD[:1], "at least"),
    ]:
        with pytest.raises(ValueError, match=message):
            POINT_FUNCTIONS[name](points)


@pytest.mark.parametrize("function", [M.silhouette, M.calinski_harabasz, M.davies_bouldin, dunn])
def test_bad_labels_raise(function):
    with pytest.raises(ValueError, match="has 29 entries but points has 30 rows"):
        function(GOOD, LABELS[:29])
    with pytest.raises(ValueError, match="found 1 distinct cluster"):
        function(GOOD, np.zeros(30))
    with pytest.raises(ValueError, match="found 30 distinct cluster"):
        function(GOOD, np.arange(30))
    with pytest.raises(ValueError, match="NaN"):
        function(GOOD, np.where(LABELS == 0, np.nan, LABELS))


def test_other_bad_input():
    x3, x4 = (torch.from_numpy(_random(d=d)) for d in (3, 4))
    with_zero_row = np.vstack([GOOD, np.zeros((1, 5))])
    for message, bad_call in [
        ("identical", lambda: M.isoscore(np.ones((10, 4)))),
        ("at least 2 dimensions", lambda: M.isoscore(_random(d=1))),
        ("4 x 4", lambda: M.isoscore_star(x4, torch.eye(3, dtype=torch.float64), 0.5)),
        ("zeta", lambda: M.isoscore_star(x4, torch.eye(4, dtype=torch.float64), 1.5)),
        ("none was given", lambda: M.isoscore_star(x4, None, 0.2)),
        # a wrong reference is refused at zeta = 0 too
        ("3 x 3", lambda: M.isoscore_star(x3, torch.eye(4, dtype=torch.float64), 0.0)),
        ("metric", lambda: M.local_intrinsic_dimension(GOOD, k=3, metric="manhattan")),
        ("k must be", lambda: M.local_intrinsic_dimension(GOOD, k=30)),
        ("all-zero", lambda: M.average_cosine_similarity(with_zero_row, n_pairs=100_000)),
        (
            "after subsampling|distinct cluster",
            lambda: M.silhouette(GOOD, (np.arange(30) == 0).astype(int), sample_size=2, seed=0),
        ),
        ("block_size", lambda: M.silhouette(GOOD, LABELS, block_size=0)),
        ("at least 2 distinct types", lambda: M.s_inter(GOOD[:5], ["a"] * 5)),
        ("two or more instances", lambda: M.s_intra(GOOD[:5], list("abcde"))),
    ]:
        with pytest.raises(ValueError, match=message):
            bad_call()
