"""Section 2 of Mickus et al. (2024) checked numerically (isotropy.metrics.objectives).

Every statement is checked on random data and on real mirror data (GloVe vectors of the 300 most
frequent words; all-MiniLM-L6-v2 embeddings of 120 polarity sentences), and every identity has a
perturbed twin that must fail, so the check can tell a right formula from a near miss.
"""

from __future__ import annotations

import gzip
import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch
from IsoScore.IsoScore import IsoScore
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score
from tiny_workflow import load_script, minilm_polarity, require_mirror, script_snakemake

from isotropy import metrics as M
from isotropy.metrics import objectives as O
from isotropy.provenance import read_record


@pytest.fixture(scope="module")
def glove():
    """The 300 most frequent words' 50-d GloVe vectors from the mirror (the file's first rows)."""
    path = require_mirror() / "word_vectors" / "glove.6B.50d.subset.txt.gz"
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        next(handle)  # word2vec header
        for line in itertools.islice(handle, 300):
            rows.append([float(v) for v in line.rstrip().split(" ")[1:]])
    return np.array(rows)


@pytest.fixture(scope="module")
def minilm():
    """120 real all-MiniLM-L6-v2 sentence embeddings (60 positive, 60 negative polarity
    sentences)."""
    vectors, positive = minilm_polarity(60)
    return vectors.astype(np.float64), positive.astype(int)


def _random(n=200, d=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.geomspace(0.1, 3, d) + 2.0


def _clouds(glove, minilm):
    return {"random": _random(), "glove": glove, "minilm": minilm[0]}


# ---- Eq. (1) -------------------------------------------------------------------------------------


def test_eq1_is_inter_minus_intra_against_scipy_pairs():
    from scipy.spatial.distance import cdist

    x = _random(n=40, d=5)
    y = np.arange(40) % 3
    d = cdist(x, x)
    same = (y[:, None] == y[None, :]) & ~np.eye(40, dtype=bool)
    expected = d[y[:, None] != y[None, :]].sum() - d[same].sum()
    assert float(O.silhouette_objective(x, y)) == pytest.approx(expected, rel=1e-12)
    squared = (d**2)[y[:, None] != y[None, :]].sum() - (d**2)[same].sum()
    assert float(O.silhouette_objective(x, y, "squared")) == pytest.approx(squared, rel=1e-12)
    # the intra sum is subtracted: adding it instead is a different number
    added = d[y[:, None] != y[None, :]].sum() + d[same].sum()
    assert float(O.silhouette_objective(x, y)) != pytest.approx(added, rel=1e-6)


def test_eq1_optimum_under_a_norm_bound_has_silhouette_one():
    """Projected gradient ascent on Eq. (1) inside the unit ball, from a random start: the optimum
    it finds collapses each class (silhouette -> 1), the same optimum as the silhouette's."""
    torch.manual_seed(0)
    y = torch.arange(30) % 3
    x = torch.randn(30, 8, dtype=torch.float64).mul_(0.1).requires_grad_()
    optimiser = torch.optim.SGD([x], lr=3.0)
    decay = torch.optim.lr_scheduler.ExponentialLR(optimiser, 0.98)  # a fixed step would orbit
    start = M.silhouette(x.detach(), y)
    for _ in range(600):
        optimiser.zero_grad()
        (-O.silhouette_objective(x, y, mean=True)).backward()
        optimiser.step()
        decay.step()
        with torch.no_grad():
            x /= x.norm(dim=1, keepdim=True).clamp_min(1.0)
    assert start < 0.2
    assert M.silhouette(x.detach(), y) > 0.999
    assert float(O.intra_class_spread(x.detach(), y)) < 1e-6


# ---- PCA variances from pairwise squared distances (Zhang et al. 2012) ---------------------------


@pytest.mark.parametrize("cloud", ["random", "glove", "minilm"])
def test_pca_variances_from_pairwise_distances(cloud, glove, minilm):
    x = _clouds(glove, minilm)[cloud]
    if cloud == "minilm":
        x = x[:, :64]  # the identity per axis; 64 of the 384 axes keep the O(n² d) loop short
    variances = O.pca_variances_from_distances(x).numpy()
    reference = PCA().fit(x).explained_variance_  # scikit-learn: ddof = 1, descending
    np.testing.assert_allclose(variances, reference, rtol=1e-9, atol=1e-12 * reference[0])
    total = float(O.total_variance_from_distances(x))
    assert total == pytest.approx(np.trace(np.cov(x.T)), rel=1e-12)
    biased = float(O.total_variance_from_distances(x, ddof=0))
    assert biased == pytest.approx(np.trace(np.cov(x.T, ddof=0)), rel=1e-12)
    # the constant matters: 2n² with ddof = 1 (or 2n(n - 1) with ddof = 0) is off by n/(n - 1)
    n = len(x)
    squared = float(O.pairwise_distances(x, "squared").sum())
    assert squared / (2 * n * n) != pytest.approx(np.trace(np.cov(x.T)), rel=1e-6)


# ---- the defect-cosine relation and Eq. (2) ------------------------------------------------------


def _package_defect(x: np.ndarray) -> float:
    """The isotropy defect as the IsoScore package's steps compute it (svdvals of torch.cov)."""
    pcs = torch.linalg.svdvals(torch.cov(torch.from_numpy(x).T))
    d = torch.tensor(float(x.shape[1]))
    normalised = pcs * torch.sqrt(d) / torch.linalg.vector_norm(pcs)
    return float(torch.linalg.vector_norm(normalised - 1) / torch.sqrt(2 * (d - torch.sqrt(d))))


@pytest.mark.parametrize("cloud", ["random", "glove", "minilm"])
def test_defect_through_the_cosine_with_the_all_ones_vector(cloud, glove, minilm):
    x = _clouds(glove, minilm)[cloud]
    d = x.shape[1]
    variances = np.linalg.eigvalsh(np.cov(x.T))[::-1].clip(min=0)
    cosine = O.isotropy_cosine(variances)
    defect = float(O.isotropy_defect(variances))
    assert defect == pytest.approx(_package_defect(x), rel=1e-6)
    assert float(O.defect_from_cosine(cosine, d)) ** 2 == pytest.approx(defect**2, rel=1e-9)
    # IsoScore through the same cosine, against the pip package
    assert float(O.isoscore_from_cosine(cosine, d)) == pytest.approx(float(IsoScore(x)), abs=1e-6)
    assert float(O.isoscore_from_cosine(cosine, d)) == pytest.approx(M.isoscore(x), abs=1e-9)
    # perturbed: with √d in place of d in the factor the relation breaks
    wrong = math.sqrt(d) * (1 - float(cosine)) / (d - math.sqrt(d))
    assert wrong != pytest.approx(defect**2, rel=1e-3)


@pytest.mark.parametrize("cloud", ["random", "glove"])
def test_eq2_is_maximal_exactly_for_isotropic_variances(cloud, glove):
    x = {"random": _random(), "glove": glove}[cloud]
    value = float(O.isotropy_objective(x))
    assert 0 < value < 1
    isoscore = float(O.isoscore_from_cosine(value, x.shape[1]))
    assert isoscore == pytest.approx(M.isoscore(x), abs=1e-9)
    white = np.linalg.svd(x - x.mean(0), full_matrices=False)[0] * math.sqrt(len(x) - 1)
    assert float(O.isotropy_objective(white)) == pytest.approx(1.0, abs=1e-9)
    assert M.isoscore(white) == pytest.approx(1.0, abs=1e-9)
    # a perturbed identity-covariance cloud is no longer at the optimum
    white[:, 0] *= 1.01
    assert float(O.isotropy_objective(white)) < 1 - 1e-6


# ---- the joint optimum of Eqs. (1) and (2) -------------------------------------------------------


def _sphere_bound(n: int) -> float:
    """Σ over ordered pairs of ‖x_i - x_j‖² <= 2n Σ‖x_i‖² = 2n² on the unit sphere."""
    return 2.0 * n * n


def test_all_distinct_labels_reach_both_optima():
    """Distinct labels: Eq. (1) (squared distances, unit sphere) at its bound and IsoScore 1."""
    x = O.cross_polytope(6)
    labels = np.arange(len(x))
    eq1 = float(O.silhouette_objective(x, labels, "squared"))
    assert eq1 == pytest.approx(_sphere_bound(len(x)), rel=1e-12)
    assert M.isoscore(x) == pytest.approx(1.0, abs=1e-12)
    assert float(O.isotropy_objective(x)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("d,classes", [(6, 2), (6, 3), (50, 2), (384, 2)])
def test_repeated_labels_cannot_reach_both_when_classes_do_not_exceed_d(d, classes):
    """Every Eq. (1) optimum with repeated labels collapses the classes; its IsoScore is then
    at most (k - 2)/(d - 1) < 1. Checked on collapsed clouds with random class positions."""
    rng = np.random.default_rng(d + classes)
    bound = O.collapsed_isoscore_bound(classes, d)
    assert bound < 1
    for _ in range(20):
        centres = rng.normal(size=(classes, d))
        labels = np.repeat(np.arange(classes), 5)
        cloud = centres[labels]
        assert M.isoscore(cloud) <= bound + 1e-9
        assert float(O.intra_class_spread(cloud, labels)) < 1e-25  # each class one point


def test_repeated_labels_can_reach_both_when_classes_exceed_d():
    """Not as printed: with k = d + 1 balanced classes on a regular simplex, labels repeat, every
    class is one point (Eq. (1) at its sphere bound, silhouette 1) and IsoScore is exactly 1."""
    d = 4
    vertices = O.regular_simplex(d + 1, d)
    labels = np.repeat(np.arange(d + 1), 3)
    cloud = vertices[labels]
    eq1 = float(O.silhouette_objective(cloud, labels, "squared"))
    assert eq1 == pytest.approx(_sphere_bound(len(cloud)), rel=1e-12)
    assert M.isoscore(cloud) == pytest.approx(1.0, abs=1e-12)
    assert O.collapsed_isoscore_bound(d + 1, d) == 1.0
    jittered = cloud + 1e-6 * np.random.default_rng(0).normal(size=cloud.shape)
    assert silhouette_score(jittered, labels) == pytest.approx(1.0, abs=1e-4)


# ---- Eqs. (3)-(4): the linear classifier ---------------------------------------------------------


@pytest.mark.parametrize("cloud", ["random", "minilm"])
def test_eq3_equals_eq4_over_class_vectors(cloud, glove, minilm):
    x = _clouds(glove, minilm)[cloud]
    rng = np.random.default_rng(1)
    y = minilm[1] if cloud == "minilm" else rng.integers(0, 4, len(x))
    y = y.copy()
    y[: len(y) // 3] = 0  # unequal label counts, so the count weighting shows
    k = int(y.max()) + 1
    w = rng.normal(size=(k, x.shape[1]))
    eq3 = float(O.linear_objective(x, y, w))
    vectors = O.class_vectors(x, y)
    assert float(O.linear_objective_by_class(vectors, w)) == pytest.approx(eq3, rel=1e-12)
    counts = np.bincount(y, minlength=k)
    np.testing.assert_allclose(vectors.numpy(), np.stack([x[y == c].sum(0) for c in range(k)]))
    # perturbed: class means without the label-count weights are not Eq. (3)
    means = vectors / torch.from_numpy(counts)[:, None]
    assert float(O.linear_objective_by_class(means, w)) != pytest.approx(eq3, rel=1e-3)


def _ascend(objective, counts: list[int], d: int, *, steps: int, lr: float, seed: int = 0):
    """Projected gradient ascent of ``objective(X, labels, W)`` over X (rows in the unit ball)
    and W (unit Frobenius ball) from a random start, ``counts[c]`` points of class c; returns X,
    labels and W."""
    generator = torch.Generator().manual_seed(seed)
    y = torch.cat([torch.full((m,), c) for c, m in enumerate(counts)])
    x = torch.randn(len(y), d, generator=generator, dtype=torch.float64).requires_grad_()
    w = torch.randn(len(counts), d, generator=generator, dtype=torch.float64).requires_grad_()
    optimiser = torch.optim.SGD([x, w], lr=lr)
    for _ in range(steps):
        optimiser.zero_grad()
        (-objective(x, y, w)).backward()
        optimiser.step()
        with torch.no_grad():
            x /= x.norm(dim=1, keepdim=True).clamp_min(1.0)
            w /= w.norm().clamp_min(1.0)
    return x.detach(), y, w.detach()


def test_eq3_association_optimum_collapses_each_class_and_norms_follow_label_counts():
    """The association term alone (:func:`O.linear_objective`): the collapse (each class one
    point, on its class vector) and ‖w_c‖ ∝ n_c at its optimum."""
    counts = [40, 20, 10, 5]
    x, y, w = _ascend(O.linear_objective, counts, d=16, steps=600, lr=1.0)
    assert float(O.intra_class_spread(x, y)) < 1e-8
    assert float(O.class_vector_distance(x, y, w)) < 1e-8
    ratios = w.norm(dim=1).numpy() / np.array(counts)
    np.testing.assert_allclose(ratios, ratios.mean(), rtol=1e-4)
    # the optimum's value: Σ_c n_c ‖w_c‖ = ‖n‖ (Cauchy-Schwarz bound reached)
    assert float(O.linear_objective(x, y, w)) == pytest.approx(np.linalg.norm(counts), rel=1e-6)
    # a perturbed optimum (one point moved off its class point) is worse
    moved = x.clone()
    moved[0] = torch.nn.functional.normalize(moved[0] + 0.1 * torch.ones_like(moved[0]), dim=0)
    assert float(O.linear_objective(moved, y, w)) < float(O.linear_objective(x, y, w))
    assert float(O.intra_class_spread(moved, y)) > 1e-4


# ---- Eq. (3) in full: association with the item's class, dissociation from the other |Y| - 1 -----


def _brute_force_eq3(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Eq. (3) item by item and class by class, the counting weights from the label counts."""
    n, counts, total = len(y), np.bincount(y, minlength=len(w)), 0.0
    for i in range(n):
        for c in range(len(w)):
            score = float(w[c] @ x[i])
            total += score / counts[c] if y[i] == c else -score / (n - counts[c])
    return total


@pytest.mark.parametrize("cloud", ["random", "minilm"])
def test_eq3_in_full_equals_the_brute_force_sum(cloud, glove, minilm):
    rng = np.random.default_rng(2)
    x = _clouds(glove, minilm)[cloud][:90]
    y = np.repeat(np.arange(4), [40, 25, 15, 10])  # unequal counts: the weights show
    w = rng.normal(size=(4, x.shape[1]))
    expected = _brute_force_eq3(x, y, w)
    assert float(O.classifier_objective(x, y, w)) == pytest.approx(expected, rel=1e-10)
    # Eq. (4): the same sum over classes, w_c against the class mean minus the others' mean
    contrasts = np.stack([x[y == c].mean(0) - x[y != c].mean(0) for c in range(4)])
    np.testing.assert_allclose(O.class_contrasts(x, y).numpy(), contrasts, rtol=1e-10)
    # perturbed twins: the association term alone, and the terms without counting weights
    assert float(O.linear_objective(x, y, w)) != pytest.approx(expected, rel=1e-3)
    unweighted = sum(
        float(w[y[i]] @ x[i]) - float(sum(w[c] @ x[i] for c in range(4) if c != y[i]))
        for i in range(len(y))
    )
    assert unweighted != pytest.approx(expected, rel=1e-3)


def test_footnote_2_the_counting_weights_cancel_for_balanced_binary_tasks():
    """Balanced binary: every weight is 2/n, so Eq. (3) = (2/n) Σ_i (w_{y_i} - w_other)ᵀx_i for
    any W. Unbalanced: no common factor (the ratio moves with W)."""
    rng = np.random.default_rng(3)
    x = _random(n=60, d=7)

    def ratio(y: np.ndarray, w: np.ndarray) -> float:
        plain = sum(float((w[y[i]] - w[1 - y[i]]) @ x[i]) for i in range(len(y)))
        return float(O.classifier_objective(x, y, w)) / plain

    balanced, unbalanced = np.arange(60) % 2, (np.arange(60) >= 45).astype(int)
    for _ in range(3):
        w = rng.normal(size=(2, 7))
        assert ratio(balanced, w) == pytest.approx(2 / 60, rel=1e-10)
    ratios = [ratio(unbalanced, rng.normal(size=(2, 7))) for _ in range(3)]
    assert max(ratios) - min(ratios) > 1e-3 * abs(np.mean(ratios))


def _ascend_full_eq3(counts: list[int], d: int, steps: int = 1500, seed: int = 0):
    """:func:`_ascend` on Eq. (3) in full."""
    return _ascend(O.classifier_objective, counts, d, steps=steps, lr=0.5, seed=seed)


def test_eq3_in_full_optimum_norms_do_not_follow_label_counts():
    """Footnote 2's class-vector norms ∝ label counts hold for the association term alone
    (above), not for Eq. (3) in full as we read it: binary 30/10 gives equal norms (1/√2)."""
    x, y, w = _ascend_full_eq3([30, 10], d=6)
    assert float(O.intra_class_spread(x, y)) < 1e-10
    norms = w.norm(dim=1).numpy()
    np.testing.assert_allclose(norms, 2**-0.5, rtol=1e-6)
    assert norms[0] / norms[1] != pytest.approx(3.0, rel=0.1)


@pytest.mark.parametrize("counts", [[20, 20], [30, 10], [10, 10, 10], [8, 8, 8, 8]])
def test_eq3_optimum_collapses_each_class_and_is_a_silhouette_optimum(counts):
    """Where the paper's argument holds (binary tasks, balanced or not; balanced tasks with
    k <= d classes): the optimum of Eq. (3) found by ascent collapses each class, W is the best
    classifier for those points, Eq. (1) (squared distances, unit ball) sits at its upper bound
    (so the layout is a silhouette-objective optimum), and IsoScore is below 1."""
    d = 6
    x, y, w = _ascend_full_eq3(counts, d)
    value = float(O.classifier_objective(x, y, w))
    assert float(O.intra_class_spread(x, y)) < 1e-10
    assert value == pytest.approx(float(O.best_classifier_value(x, y)), rel=1e-9)
    n, k = sum(counts), len(counts)
    # Eq. (1)'s bound on the unit ball: 8 n0 n1 (binary), Σ_{i,j} ‖x_i - x_j‖² <= 2n² (any k)
    bound = 8.0 * counts[0] * counts[1] if k == 2 else _sphere_bound(n)
    assert float(O.silhouette_objective(x, y, "squared")) == pytest.approx(bound, rel=1e-9)
    if k > 2:  # balanced: the optimum's value is k^(3/2)/(k - 1) (class means centred)
        assert value == pytest.approx(k**1.5 / (k - 1), rel=1e-9)
    assert M.isoscore(x) <= O.collapsed_isoscore_bound(k, d) + 1e-9 < 1
    # a perturbed optimum (one point off its class point) is worse
    moved = x.clone()
    moved[0] = torch.nn.functional.normalize(moved[0] + 0.2 * torch.ones_like(moved[0]), dim=0)
    assert float(O.best_classifier_value(moved, y)) < value - 1e-6


def test_eq3_optimum_need_not_be_a_silhouette_optimum_with_unbalanced_classes():
    """Not as argued in general: with k = 3 unbalanced classes (12/8/8) Eq. (3)'s optimum
    collapses each class, but its layout misses Eq. (1)'s maximum 2n², which a collapsed layout
    with Σ_c n_c p_c = 0 reaches; that layout in turn is worse for Eq. (3)."""
    counts, d = [12, 8, 8], 6
    x, y, _ = _ascend_full_eq3(counts, d, steps=3000)
    n = sum(counts)
    assert float(O.intra_class_spread(x, y)) < 1e-10
    assert float(O.silhouette_objective(x, y, "squared")) < _sphere_bound(n) * (1 - 1e-4)
    # Σ_c n_c p_c = 0 with unit p_c: 12 e1 + 8 p1 + 8 p2 = 0, p1,2 = (-3/4, ±√7/4)
    points = np.zeros((3, d))
    points[0, 0], points[1:, 0], points[1:, 1] = 1.0, -0.75, [7**0.5 / 4, -(7**0.5) / 4]
    layout = points[y.numpy()]
    eq1 = float(O.silhouette_objective(layout, y, "squared"))
    assert eq1 == pytest.approx(_sphere_bound(n), rel=1e-12)
    assert float(O.best_classifier_value(layout, y)) < float(O.best_classifier_value(x, y)) - 1e-4


def test_eq3_optimum_can_be_isotropic_with_k_equal_to_d_plus_one():
    """The counterexample of the joint optimum carries over: with k = d + 1 balanced classes on
    a regular simplex, Eq. (3) reaches the value ascent finds (k^(3/2)/(k - 1)) and IsoScore is
    exactly 1: the classifier's optimum need not be anisotropic when k > d."""
    d = 4
    labels = np.repeat(np.arange(d + 1), 4)
    simplex = O.regular_simplex(d + 1, d)[labels]
    x_y_w = _ascend_full_eq3([4] * (d + 1), d)
    found = float(O.classifier_objective(*x_y_w))
    assert float(O.best_classifier_value(simplex, labels)) == pytest.approx(found, rel=1e-9)
    assert found == pytest.approx((d + 1) ** 1.5 / d, rel=1e-9)
    assert M.isoscore(simplex) == pytest.approx(1.0, abs=1e-12)


def test_eq3_rejects_a_class_without_items():
    with pytest.raises(ValueError, match="each with an item"):
        O.classifier_objective(_random(n=6, d=3), np.array([0, 0, 0, 2, 2, 2]), np.ones((3, 3)))


# ---- per-update tracking in the direct optimisation (Section2Probe) ------------------------------


@pytest.mark.parametrize("multilabel", [False, True])
def test_section2_probe_matches_the_objective_functions(multilabel):
    from test_optimize import CPU, word_task

    from isotropy.optimize import EmbeddingClassifier, Section2Probe, build_problem

    problem = build_problem(*word_task(n=90, multilabel=multilabel))
    torch.manual_seed(0)
    model = EmbeddingClassifier(problem.vectors, len(problem.label_names), False, bias=True)
    state = Section2Probe(problem, CPU)(model)
    assert tuple(state) == O.SECTION2_COLUMNS
    x = model.embeddings.weight.detach().double()
    w = model.classifier.weight.detach().double()
    clusters = np.unique(M.cluster_ids(problem.targets), return_inverse=True)[1].reshape(-1)
    eq1 = O.silhouette_objective(x, clusters, mean=True)
    assert float(state["eq1_objective"]) == pytest.approx(float(eq1), rel=1e-5)
    spread = float(O.intra_class_spread(x, clusters))
    assert float(state["intra_class_spread"]) == pytest.approx(spread, rel=1e-9)
    if multilabel:
        t = torch.from_numpy(problem.targets).double()
        eq3 = float((t * (x @ w.T)).sum())
    else:
        eq3 = float(O.linear_objective(x, problem.targets, w))
        distance = float(O.class_vector_distance(x, problem.targets, w))
        assert float(state["class_vector_distance"]) == pytest.approx(distance, rel=1e-9)
    assert float(state["eq3_objective"]) * len(x) == pytest.approx(eq3, rel=1e-9)


def test_section2_columns_tell_figure2s_story_in_the_papers_terms():
    """Recorded per update in a run: Eq. (1) and Eq. (3) rise, the intra-class spread (relative
    to the total) and the distance to the class vectors fall, while IsoScore falls."""
    from test_optimize import CPU, settings, word_task

    from isotropy.optimize import Section2Probe, build_problem, run_optimisation

    problem = build_problem(*word_task())
    trace, _ = run_optimisation(
        problem, settings(metric_stride=50), CPU, Section2Probe(problem, CPU)
    )
    assert list(trace.columns[-4:]) == list(O.SECTION2_COLUMNS)
    first, last = trace.iloc[0], trace.iloc[-1]
    assert last["eq1_objective"] > first["eq1_objective"]
    assert last["eq3_objective"] > first["eq3_objective"]
    assert last["class_vector_distance"] < first["class_vector_distance"]
    assert last["intra_class_spread"] < first["intra_class_spread"]
    assert last["isoscore"] < first["isoscore"]


def test_eq3_ascent_trace_on_real_points_moves_towards_the_collapse(minilm):
    """The section 2 figure's computation (results/section2/): along the ascent on Eq. (3) from
    real MiniLM points, IsoScore and Eq. (2) fall, silhouette and Eq. (1) rise, the spread falls,
    and ‖w_c‖/n_c equalises across the two (unequal) classes."""
    x, y = minilm
    keep = np.r_[0:60, 60:90]  # 60 positive, 30 negative: unequal counts
    trace, classes = O.eq3_ascent_trace(
        x[keep], y[keep], steps=400, learning_rate=0.05, seed=0, every=100
    )
    first, last = trace.iloc[0], trace.iloc[-1]
    assert last["isoscore"] < first["isoscore"] / 5
    assert last["eq2_objective"] < first["eq2_objective"]
    assert last["silhouette"] > 0.9 and last["eq1_objective"] > first["eq1_objective"]
    assert last["intra_class_spread"] < first["intra_class_spread"] / 100
    ratio = classes["norm_per_count"].to_numpy()
    assert ratio.max() / ratio.min() < 1.01 and sorted(classes["count"]) == [30, 60]


# ---- Appendix B: the upper bound of Eqs. (1) and (5), as we read it (docs/methods.md) ------------


def _triplets_by_brute_force(x, y):
    d = ((x[:, None] - x[None]) ** 2).sum(-1)
    n = len(y)
    return sum(
        d[a, q] - d[a, p]
        for a in range(n)
        for p in range(n)
        for q in range(n)
        if p != a and y[p] == y[a] and y[q] != y[a]
    )


def test_appendix_b_bound_holds_on_random_and_real_clouds_and_is_tight_at_collapse(minilm):
    """Eq. (1) (squared distances) and Eq. (5) stay under the bound on random clouds (several
    label counts) and on MiniLM polarity embeddings; balanced classes collapsed to points reach
    it exactly, so a bound half as large (n² tr C) or one using the smallest class would fail."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(9, 4)), np.array([0, 0, 1, 1, 1, 2, 2, 2, 2])
    assert float(O.triplet_objective(x, y)) == pytest.approx(_triplets_by_brute_force(x, y))
    clouds = [(_random(120, 8, seed), rng.integers(0, k, 120)) for seed, k in enumerate((2, 3, 7))]
    for points, labels in [*clouds, (minilm[0], minilm[1])]:
        eq1_bound, eq5_bound = O.appendix_b_bounds(points, labels)
        assert float(O.silhouette_objective(points, labels, "squared")) <= eq1_bound
        assert float(O.triplet_objective(points, labels)) <= eq5_bound
    # planted: three balanced classes, each collapsed to one point: both bounds are reached
    centres = rng.normal(size=(3, 5))
    labels = np.repeat([0, 1, 2], 4)
    collapsed = centres[labels]
    eq1_bound, eq5_bound = O.appendix_b_bounds(collapsed, labels)
    eq1 = float(O.silhouette_objective(collapsed, labels, "squared"))
    eq5 = float(O.triplet_objective(collapsed, labels))
    assert eq1 == pytest.approx(eq1_bound) and eq5 == pytest.approx(eq5_bound)
    assert eq1 > eq1_bound / 2  # the bound with n² tr(C), not 2n² tr(C), is caught
    # unbalanced collapse: the bound with the smallest class instead of the largest is caught
    labels = np.repeat([0, 1, 2], [5, 3, 3])
    uneven = centres[labels]
    pairs, eq5_bound = O.appendix_b_bounds(uneven, labels)
    assert (3 - 1) * pairs < float(O.triplet_objective(uneven, labels)) <= eq5_bound


def test_the_section2_script_samples_and_ascends_by_the_models_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    texts = [f"t{i}" for i in range(12)]
    np.save("v.npy", np.random.default_rng(0).normal(size=(12, 4)).astype(np.float32))
    pd.DataFrame({"text": texts}).to_parquet("i.parquet")
    pd.DataFrame({"text": texts, "label": [i % 2 for i in range(12)]}).to_parquet("t.parquet")
    inputs = {"vectors": "v.npy", "index": "i.parquet", "table": "t.parquet"}
    outputs = {"trace": "tr.csv", "classes": "c.csv", "pdf": "f.pdf", "png": "f.png"}
    job = script_snakemake("section2_figure", inputs, outputs, {"settings": {"steps": 20}})
    load_script("scripts/section2_figure.py").main(job)
    assert pd.read_csv("tr.csv")["step"].tolist() == [0, 10, 20]  # every: the model's 10
    assert read_record("tr.csv")["seeds"] == [0]
