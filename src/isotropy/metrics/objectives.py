"""Section 2 of Mickus, Grönroos & Attieh (2024) as functions: the quantities of its argument that
isotropy (IsoScore) and clusters (silhouette) cannot both be at their best, and that a linear
classifier's optimum is clustered (docs/methods.md, "Section 2 as executable checks"). Torch
throughout, on ``(n, d)`` points and integer class ids.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from isotropy.metrics.checks import ArrayLike, checked_points

DISTANCES = ("euclidean", "squared")


def _points(points: ArrayLike, min_rows: int = 2) -> torch.Tensor:
    """Checked points as float64 (a tensor keeps its graph: the objectives stay differentiable)."""
    return checked_points(points, min_rows=min_rows).to(torch.float64)


def _labels(labels, n: int, device: torch.device) -> torch.Tensor:
    ids = torch.as_tensor(np.asarray(labels) if not torch.is_tensor(labels) else labels)
    if ids.dim() != 1 or ids.shape[0] != n:
        raise ValueError(f"need one integer label per point ({n}); found shape {tuple(ids.shape)}")
    if ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise ValueError(f"labels must be integer class ids; found dtype {ids.dtype}")
    return ids.to(device=device, dtype=torch.int64)


def _labelled(points: ArrayLike, labels, min_rows: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    x = _points(points, min_rows)
    return x, _labels(labels, x.shape[0], x.device)


def pairwise_distances(points: ArrayLike, distance: str = "euclidean") -> torch.Tensor:
    """The n x n distances (``"euclidean"``) or squared distances (``"squared"``), from explicit
    differences x_i - x_j (no norm expansion: exact to float64 round-off), a row block at a time."""
    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {DISTANCES}; found {distance!r}")
    x = _points(points)
    rows = []
    step = max(1, 2_000_000 // max(1, x.shape[0] * x.shape[1]))
    for start in range(0, x.shape[0], step):
        diff = x[start : start + step, None, :] - x[None, :, :]
        rows.append((diff * diff).sum(dim=2))
    squared = torch.cat(rows)
    if distance == "squared":
        return squared
    # sqrt has an infinite derivative at 0 (the diagonal): keep the gradient finite there
    return torch.where(squared > 0, squared.clamp_min(1e-300).sqrt(), torch.zeros_like(squared))


def inter_intra_sums(
    points: ArrayLike, labels, distance: str = "euclidean"
) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """Sums of the distances between points of different labels and of the same label (ordered
    pairs i != j), and how many pairs each sum has."""
    x, ids = _labelled(points, labels)
    dist = pairwise_distances(x, distance)
    same = ids[:, None] == ids[None, :]
    same.fill_diagonal_(False)
    different = ids[:, None] != ids[None, :]
    return (
        dist[different].sum(),
        dist[same].sum(),
        int(different.sum()),
        int(same.sum()),
    )


def silhouette_objective(
    points: ArrayLike, labels, distance: str = "euclidean", mean: bool = False
) -> torch.Tensor:
    """Eq. (1): Σ_{y_i != y_j} d(x_i, x_j) - Σ_{y_i = y_j, i != j} d(x_i, x_j), over ordered pairs
    (``mean=True``: the mean over each kind of pair instead, a scale that does not grow with n²)."""
    inter, intra, n_inter, n_intra = inter_intra_sums(points, labels, distance)
    if not mean:
        return inter - intra
    return inter / max(n_inter, 1) - intra / max(n_intra, 1)


def triplet_objective(points: ArrayLike, labels) -> torch.Tensor:
    """Eq. (5) as we read appendix B (docs/methods.md): over every triplet of an anchor a, a
    positive p != a of its label and a negative q of another, ‖x_a - x_q‖² - ‖x_a - x_p‖² (the
    triplet loss without margin or hinge, to be maximised). Differentiable 0-d float64 tensor."""
    x, ids = _labelled(points, labels)
    dist = pairwise_distances(x, "squared")
    same = ids[:, None] == ids[None, :]
    own = same.sum(dim=1)  # n_c of each anchor's label, itself included
    inside, outside = (dist * same).sum(dim=1), (dist * ~same).sum(dim=1)
    return ((own - 1) * outside - (x.shape[0] - own) * inside).sum()


def appendix_b_bounds(points: ArrayLike, labels) -> tuple[float, float]:
    """Our reading of appendix B's upper bound (docs/methods.md), from the covariance alone:
    Eq. (1) with squared distances <= 2n² tr(C) (C with ddof 0: every ordered pair's squared
    distance summed), and Eq. (5) <= (max_c n_c - 1) times that. Both are reached when balanced
    classes each collapse to one point."""
    x, ids = _labelled(points, labels)
    x = x.detach()
    n = x.shape[0]
    pairs = 2.0 * n * float(((x - x.mean(dim=0)) ** 2).sum())  # = 2n² tr(C)
    largest = int(torch.unique(ids, return_counts=True)[1].max())
    return pairs, (largest - 1) * pairs


def pca_variances_from_distances(points: ArrayLike, ddof: int = 1) -> torch.Tensor:
    """The variance along each principal component (descending), from pairwise squared distances.

    Zhang et al. (2012): for the projections z_i = pᵀx_i on a unit direction p,
    Σ_i Σ_j (z_i - z_j)² = 2n Σ_i (z_i - z̄)², so the variance along p (ddof 0 or 1) is
    Σ_{i,j} (z_i - z_j)² / (2n(n - ddof)). Here p runs over the principal axes (eigenvectors of
    the covariance); only the axes come from an eigen-solve, the variances from the distances.
    """
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1; found {ddof}")
    x = _points(points)
    n = x.shape[0]
    centred = x - x.mean(dim=0, keepdim=True)
    _, axes = torch.linalg.eigh(centred.T @ centred)
    z = x @ axes.flip(1)  # projections on the axes, largest variance first
    sums = torch.zeros(z.shape[1], dtype=torch.float64, device=z.device)
    for i in range(n):  # Σ_j (z_i - z_j)² for every axis, one point at a time
        sums = sums + ((z[i] - z) ** 2).sum(dim=0)
    return sums / (2.0 * n * (n - ddof))


def total_variance_from_distances(points: ArrayLike, ddof: int = 1) -> torch.Tensor:
    """tr(C) = Σ_{i,j} ‖x_i - x_j‖² / (2n(n - ddof)): the sum of the PCA variances."""
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1; found {ddof}")
    x = _points(points)
    n = x.shape[0]
    return pairwise_distances(x, "squared").sum() / (2.0 * n * (n - ddof))


def _variances(variances: ArrayLike | torch.Tensor) -> torch.Tensor:
    v = torch.as_tensor(variances, dtype=torch.float64)
    if v.dim() != 1 or v.shape[0] < 2:
        raise ValueError(f"need a vector of at least 2 variances; found shape {tuple(v.shape)}")
    if not bool(torch.isfinite(v).all()) or bool((v < 0).any()) or not bool((v > 0).any()):
        raise ValueError("variances must be finite, non-negative and not all zero")
    return v


def isotropy_cosine(variances) -> torch.Tensor:
    """cos θ between the variance vector λ and the all-ones vector: Σλ / (√d ‖λ‖)."""
    v = _variances(variances)
    return v.sum() / (math.sqrt(v.shape[0]) * torch.linalg.vector_norm(v))


def isotropy_defect(variances) -> torch.Tensor:
    """IsoScore's isotropy defect δ = ‖√d λ/‖λ‖ - 1‖ / √(2(d - √d)) (Rudman et al. 2022, step 4)."""
    v = _variances(variances)
    d = v.shape[0]
    normalised = math.sqrt(d) * v / torch.linalg.vector_norm(v)
    return torch.linalg.vector_norm(normalised - 1.0) / math.sqrt(2 * (d - math.sqrt(d)))


def defect_from_cosine(cosine: float | torch.Tensor, d: int) -> torch.Tensor:
    """δ from cos θ: ‖λ̂ - 1‖² = 2d - 2d cos θ, so δ² = d(1 - cos θ)/(d - √d)."""
    if d < 2:
        raise ValueError(f"d must be at least 2; found {d}")
    c = torch.as_tensor(cosine, dtype=torch.float64)
    return torch.sqrt((d * (1.0 - c) / (d - math.sqrt(d))).clamp_min(0.0))


def isoscore_from_cosine(cosine: float | torch.Tensor, d: int) -> torch.Tensor:
    """IsoScore = (d cos² θ - 1)/(d - 1), as dφ = (Σλ)²/Σλ² = d cos² θ."""
    if d < 2:
        raise ValueError(f"d must be at least 2; found {d}")
    c = torch.as_tensor(cosine, dtype=torch.float64)
    return (d * c * c - 1.0) / (d - 1.0)


def isotropy_objective(points: ArrayLike) -> torch.Tensor:
    """Eq. (2): cos θ between the PCA variances (from pairwise squared distances) and the all-ones
    vector. Maximising it maximises IsoScore (:func:`isoscore_from_cosine`)."""
    return isotropy_cosine(pca_variances_from_distances(points))


def collapsed_isoscore_bound(n_classes: int, d: int) -> float:
    """The largest IsoScore of a cloud whose classes are each one point: (min(k - 1, d) - 1)/(d -
    1).

    k coinciding groups leave a covariance of rank at most k - 1, and tr(C)²/‖C‖_F² <= rank(C)
    (Cauchy-Schwarz on the eigenvalues), so IsoScore <= (rank - 1)/(d - 1). Below 1 exactly when
    k <= d: then Eq. (1)'s optimum (classes collapsed) and Eq. (2)'s (IsoScore 1) exclude each
    other. With k >= d + 1 classes they need not (a regular simplex of classes is isotropic).
    """
    if n_classes < 1 or d < 2:
        raise ValueError(f"need n_classes >= 1 and d >= 2; found {n_classes}, {d}")
    return (min(n_classes - 1, d) - 1) / (d - 1)


def cross_polytope(d: int, radius: float = 1.0) -> np.ndarray:
    """The 2d points ±radius·e_k: centred, on the sphere, covariance ∝ I (IsoScore 1). With one
    label per point, Eq. (1) with squared distances reaches its bound 2n²r² on that sphere."""
    eye = np.eye(d) * radius
    return np.concatenate([eye, -eye])


def regular_simplex(k: int, d: int) -> np.ndarray:
    """k = d + 1 unit vectors in d dimensions with pairwise cosine -1/d (a regular simplex)."""
    if k != d + 1:
        raise ValueError(f"a regular simplex in {d} dimensions has {d + 1} vertices; asked {k}")
    vertices = np.eye(k) - 1.0 / k  # centred, in the k-1 dimensional subspace 1ᵀx = 0
    basis = np.linalg.svd(vertices)[2][:d]  # orthonormal basis of that subspace
    points = vertices @ basis.T
    return points / np.linalg.norm(points, axis=1, keepdims=True)


# ----------------------------------------------------------------------------------------------
# Eqs. (3)-(4): the linear classifier
# ----------------------------------------------------------------------------------------------


def class_vectors(points: ArrayLike, labels, n_classes: int | None = None) -> torch.Tensor:
    """v_c = Σ_{i: y_i = c} x_i, one row per class (k x d); ‖v_c‖ <= n_c max‖x_i‖."""
    x, ids = _labelled(points, labels, min_rows=1)
    k = int(ids.max()) + 1 if n_classes is None else n_classes
    return torch.zeros(k, x.shape[1], dtype=x.dtype, device=x.device).index_add(0, ids, x)


def linear_objective(points: ArrayLike, labels, weights: ArrayLike) -> torch.Tensor:
    """The association term of Eq. (3) alone: Σ_i w_{y_i}ᵀ x_i (k x d weights), without the
    counting weights (:func:`classifier_objective` is Eq. (3) in full)."""
    x, ids = _labelled(points, labels, min_rows=1)
    w = torch.as_tensor(weights).to(device=x.device, dtype=torch.float64)
    if w.dim() != 2 or w.shape[1] != x.shape[1] or int(ids.max()) >= w.shape[0]:
        raise ValueError(f"weights must be (classes, {x.shape[1]}); found {tuple(w.shape)}")
    return (w[ids] * x).sum()


def linear_objective_by_class(vectors: torch.Tensor, weights: ArrayLike) -> torch.Tensor:
    """Σ_c w_cᵀ v_c over the class vectors v_c (:func:`class_vectors`): the association term
    (:func:`linear_objective`) regrouped by class."""
    w = torch.as_tensor(weights).to(device=vectors.device, dtype=torch.float64)
    if w.shape != vectors.shape:
        raise ValueError(
            f"weights {tuple(w.shape)} and class vectors {tuple(vectors.shape)} differ"
        )
    return (w * vectors).sum()


def counting_weights(labels, n_classes: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Eq. (3)'s counting weights per class: 1/n_c (association with class c) and 1/(n - n_c)
    (dissociation of another class's item from c)."""
    ids = _labels(labels, len(labels), torch.device("cpu"))
    k = int(ids.max()) + 1 if n_classes is None else n_classes
    counts = torch.bincount(ids, minlength=k).to(torch.float64)
    if k < 2 or bool((counts == 0).any()):
        raise ValueError(f"Eq. (3) needs >= 2 classes, each with an item; counts {counts.tolist()}")
    return 1.0 / counts, 1.0 / (len(ids) - counts)


def class_contrasts(points: ArrayLike, labels, n_classes: int | None = None) -> torch.Tensor:
    """Eq. (4): u_c = μ_c - μ_¬c, the mean of class c's items minus the mean of the other items
    (k x d), so that Eq. (3) = Σ_c w_cᵀu_c."""
    x, ids = _labelled(points, labels)
    association, dissociation = counting_weights(ids.cpu(), n_classes)
    vectors = class_vectors(x, ids, len(association))
    others = vectors.sum(dim=0, keepdim=True) - vectors
    return association.to(x)[:, None] * vectors - dissociation.to(x)[:, None] * others


def classifier_objective(points: ArrayLike, labels, weights: ArrayLike) -> torch.Tensor:
    """Eq. (3) in full: Σ_i [w_{y_i}ᵀx_i / n_{y_i} - Σ_{c != y_i} w_cᵀx_i / (n - n_c)], computed as
    Σ_c w_cᵀ(μ_c - μ_¬c) (:func:`class_contrasts`). For a balanced binary task every weight is
    2/n: the weights cancel (footnote 2)."""
    x = _points(points, min_rows=2)
    w = torch.as_tensor(weights).to(device=x.device, dtype=torch.float64)
    contrasts = class_contrasts(x, labels, w.shape[0] if w.dim() == 2 else None)
    if w.shape != contrasts.shape:
        raise ValueError(f"weights must be {tuple(contrasts.shape)}; found {tuple(w.shape)}")
    return (w * contrasts).sum()


def best_classifier_value(points: ArrayLike, labels) -> torch.Tensor:
    """max of Eq. (3) over classifiers with ‖W‖_F <= 1 for fixed points: ‖U‖_F, reached at
    W = U/‖U‖_F (Cauchy-Schwarz), U the class contrasts (:func:`class_contrasts`)."""
    return torch.linalg.matrix_norm(class_contrasts(points, labels))


def intra_class_spread(points: ArrayLike, labels) -> torch.Tensor:
    """Mean squared distance of each point to its class mean (0 iff every class is one point)."""
    x, ids = _labelled(points, labels, min_rows=1)
    k = int(ids.max()) + 1
    counts = torch.bincount(ids, minlength=k).to(x.dtype).clamp_min(1.0)
    means = class_vectors(x, ids, k) / counts[:, None]
    return ((x - means[ids]) ** 2).sum(dim=1).mean()


def class_vector_distance(points: ArrayLike, labels, weights: ArrayLike) -> torch.Tensor:
    """Mean over points of 1 - cos(x_i, w_{y_i}): 0 when every point lies on its class's weight."""
    x, ids = _labelled(points, labels, min_rows=1)
    w = torch.as_tensor(weights).to(device=x.device, dtype=torch.float64)[ids]
    cos = torch.nn.functional.cosine_similarity(x, w, dim=1)
    return (1.0 - cos).mean()


# ----------------------------------------------------------------------------------------------
# per-update tracking in the direct optimisation (no gradient; any number of points)
# ----------------------------------------------------------------------------------------------

# Columns of :func:`section2_state`, recorded after the registry's metrics when a study sets
# ``section2_metrics`` (isotropy.optimize.Section2Probe).
SECTION2_COLUMNS = ("eq1_objective", "eq3_objective", "intra_class_spread", "class_vector_distance")


@torch.no_grad()
def mean_inter_minus_intra(
    points: torch.Tensor, clusters: torch.Tensor, block: int = 1024
) -> torch.Tensor:
    """Eq. (1) with means (:func:`silhouette_objective` with ``mean=True``, Euclidean), in row
    blocks: O(block x n) memory, float64 sums."""
    x = points.detach()
    x = x - x.mean(dim=0, keepdim=True)
    n = x.shape[0]
    counts = torch.bincount(clusters).to(torch.float64)
    intra_pairs = float((counts * (counts - 1)).sum())
    inter_pairs = float(n * (n - 1)) - intra_pairs
    total = torch.zeros((), dtype=torch.float64, device=x.device)
    intra = torch.zeros((), dtype=torch.float64, device=x.device)
    for start in range(0, n, block):
        dist = torch.cdist(x[start : start + block], x).to(torch.float64)
        same = clusters[start : start + block, None] == clusters[None, :]
        total += dist.sum()
        intra += dist[same].sum()  # self-distances are 0: they add nothing
    inter = total - intra
    mean_intra = intra / intra_pairs if intra_pairs else torch.zeros_like(intra)
    return inter / max(inter_pairs, 1.0) - mean_intra


@torch.no_grad()
def section2_state(
    points: torch.Tensor, indicator: torch.Tensor, clusters: torch.Tensor, weights: torch.Tensor
) -> dict[str, torch.Tensor]:
    """The section 2 quantities of one optimisation state, as 0-d float64 tensors (no host sync),
    from the n x d points, the n x k 0/1 label ``indicator``, the silhouette's ``clusters`` and
    the classifier's k x d ``weights`` (its bias is not part of Eq. (3)). eq3_objective is the
    association term of Eq. (3) per item, Σ_c w_cᵀv_c / n (the name predates
    :func:`classifier_objective`; kept so that traces stay comparable); class_vector_distance is
    the mean of 1 - cos(x_i, w_c) over the (item, label) pairs."""
    x = points.detach().to(torch.float64)
    t = indicator.to(torch.float64)
    w = weights.detach().to(torch.float64)
    n = x.shape[0]
    vectors = t.T @ x  # class vectors v_c
    k = int(clusters.max()) + 1
    sizes = torch.bincount(clusters, minlength=k).to(torch.float64).clamp_min(1.0)
    means = torch.zeros(k, x.shape[1], dtype=x.dtype, device=x.device).index_add(0, clusters, x)
    spread = ((x - (means / sizes[:, None])[clusters]) ** 2).sum(dim=1).mean()
    cosines = torch.nn.functional.normalize(x, dim=1) @ torch.nn.functional.normalize(w, dim=1).T
    return {
        "eq1_objective": mean_inter_minus_intra(x, clusters),
        "eq3_objective": (w * vectors).sum() / n,
        "intra_class_spread": spread,
        "class_vector_distance": (t * (1.0 - cosines)).sum() / t.sum(),
    }


# ----------------------------------------------------------------------------------------------
# the section 2 figure: Eq. (3) optimised on real points, its statements tracked per step
# ----------------------------------------------------------------------------------------------


def eq3_ascent_trace(
    points: np.ndarray,
    labels: np.ndarray,
    steps: int,
    learning_rate: float,
    seed: int,
    every: int = 10,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Projected gradient ascent of the association term of Eq. (3) (:func:`linear_objective`)
    over the points (each kept in the ball of the largest starting norm) and a random classifier
    W (‖W‖_F <= 1). Returns the trace (every ``every`` steps and the last) and the final class
    table (n_c, ‖w_c‖, ‖w_c‖/n_c: at the optimum the last is the same for every class)."""
    from isotropy.metrics.clusters import silhouette
    from isotropy.metrics.isoscores import isoscore

    x = torch.as_tensor(np.asarray(points, dtype=np.float64)).clone()
    y = _labels(labels, x.shape[0], x.device)
    radius = float(x.norm(dim=1).max())
    generator = torch.Generator().manual_seed(seed)
    w = torch.randn(int(y.max()) + 1, x.shape[1], generator=generator, dtype=torch.float64)
    w /= w.norm()
    x.requires_grad_()
    w.requires_grad_()
    optimiser = torch.optim.SGD([x, w], lr=learning_rate)
    rows = []
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            state = x.detach()
            rows.append(
                {
                    "step": step,
                    "eq1_objective": float(mean_inter_minus_intra(state, y)),
                    "eq2_objective": float(
                        isotropy_cosine(torch.linalg.eigvalsh(torch.cov(state.T)).clamp_min(0))
                    ),
                    "isoscore": isoscore(state),
                    "silhouette": silhouette(state, y.numpy()),
                    "intra_class_spread": float(intra_class_spread(state, y)),
                    "eq3_objective": float(linear_objective(state, y, w.detach())),
                }
            )
        if step == steps:
            break
        optimiser.zero_grad()
        (-linear_objective(x, y, w)).backward()
        optimiser.step()
        with torch.no_grad():
            x *= (radius / x.norm(dim=1, keepdim=True)).clamp(max=1.0)
            w /= w.norm().clamp_min(1.0)
    counts = torch.bincount(y).numpy()
    norms = w.detach().norm(dim=1).numpy()
    classes = pd.DataFrame({"label": np.arange(len(counts)), "count": counts, "weight_norm": norms})
    classes["norm_per_count"] = classes["weight_norm"] / classes["count"]
    return pd.DataFrame(rows), classes
