"""Global isotropy scores: IsoScore and IsoScore* (Rudman et al. 2022; Rudman & Eickhoff 2024)
and the partition-function isotropy I(W) (Mu & Viswanath 2018).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from isotropy.metrics.checks import BLOCK_ELEMENTS, ArrayLike, checked_points, float64_mean


def covariance(points: torch.Tensor) -> torch.Tensor:
    """Unbiased (ddof = 1) covariance matrix ``d x d`` of the rows; differentiable."""
    x = checked_points(points, min_rows=2)
    centred = x - x.mean(dim=0, keepdim=True)
    return centred.T @ centred / (x.shape[0] - 1)


def _isoscore_of_moments(
    trace: torch.Tensor, frobenius_squared: torch.Tensor, d: int
) -> torch.Tensor:
    """IsoScore (Rudman et al. 2022) from tr(C) and ‖C‖_F² of a d x d covariance C; no eigen-solve.

    With λ the eigenvalues, the published steps give dφ = (Σλ)²/Σλ² (expand ‖λ̂ - 1‖² in the
    defect δ); for symmetric C, Σλ = tr(C) and Σλ² = ‖C‖_F², hence IsoScore =
    (tr(C)²/‖C‖_F² - 1)/(d - 1): scale-free, any n (n < d included). A zero C gives NaN.
    """
    return (trace * trace / frobenius_squared - 1.0) / (d - 1.0)


def isoscore_tensor(x: torch.Tensor) -> torch.Tensor:
    """IsoScore of an unchecked (n, d) tensor as a 0-d float64 tensor on its device, no host sync,
    from the smaller of XᵀX and XXᵀ of the centred rows (same trace and Frobenius norm)."""
    with torch.no_grad():
        x = x.detach()
        n, d = x.shape
        mean = float64_mean(x)
        small = min(n, d)
        scatter = torch.zeros(small, small, dtype=torch.float64, device=x.device)
        if n >= d:
            # float64 centring in row blocks: exact, without a float64 copy of the whole cloud
            step = max(1, BLOCK_ELEMENTS // (4 * d))
            for start in range(0, n, step):
                centred = x[start : start + step].to(torch.float64) - mean
                scatter.addmm_(centred.T, centred)
        else:
            centred = x.to(torch.float64) - mean  # n < d: the n x d copy is smaller than d x d
            torch.mm(centred, centred.T, out=scatter)
        trace = torch.diagonal(scatter).sum()
        return _isoscore_of_moments(trace, (scatter * scatter).sum(), d)


def isoscore(points: ArrayLike) -> float:
    """IsoScore of a point cloud (n x d) in float64, 1 isotropic, 0 one direction: the closed form
    of :func:`_isoscore_of_moments`. Strongly sample-size dependent when n is not much above d."""
    x = checked_points(points, min_rows=2, min_cols=2)
    value = float(isoscore_tensor(x))
    if math.isnan(value):
        raise ValueError(
            "the covariance is zero (all points are identical); IsoScore needs spread points"
        )
    return value


def isoscore_star(
    points: torch.Tensor, reference_covariance: torch.Tensor | None = None, zeta: float = 0.0
) -> torch.Tensor:
    """IsoScore* (Rudman & Eickhoff 2024): IsoScore of the shrunk covariance (1-ζ)Σ_X + ζΣ_S, as a
    differentiable 0-d tensor of ``points``' dtype (a training penalty ``1 - isoscore_star``)."""
    x = checked_points(points, min_rows=2, min_cols=2)
    if not 0.0 <= float(zeta) <= 1.0:
        raise ValueError(f"zeta must lie in [0, 1]; found {zeta}")
    if zeta > 0 and reference_covariance is None:
        raise ValueError(
            f"zeta = {zeta} shrinks towards a reference covariance, but none was given; pass "
            "reference_covariance or zeta = 0"
        )
    out_dtype = x.dtype
    d = x.shape[1]
    cov = covariance(x).to(torch.float64)
    if reference_covariance is not None:
        ref = torch.as_tensor(reference_covariance)
        if tuple(ref.shape) != (d, d):
            raise ValueError(
                f"reference_covariance must be {d} x {d} to match the points' dimension; found "
                f"shape {tuple(ref.shape)}"
            )
        if not bool(torch.isfinite(ref.detach()).all()):
            raise ValueError(
                "reference_covariance contains NaN or infinite values; every value must be finite"
            )
        ref = ref.to(device=x.device, dtype=torch.float64)
        cov = (1.0 - zeta) * cov + zeta * ref
    frobenius_squared = (cov * cov).sum()
    if not bool(frobenius_squared.detach() > 0):
        raise ValueError(
            "the covariance is zero (all points are identical); IsoScore needs spread points"
        )
    return _isoscore_of_moments(torch.diagonal(cov).sum(), frobenius_squared, d).to(out_dtype)


def partition_isotropy(points: ArrayLike, *, signs: str = "solver") -> float:
    """I(W) = min_c Z(c) / max_c Z(c), Z(c) = Σ_w exp(cᵀw), c over the unit eigenvectors of WᵀW,
    in log space. ``signs="solver"``: each with the sign ``numpy.linalg.eig`` returns, as Rajaee
    & Pilehvar's notebook (their number; it depends on those signs on uncentred vectors);
    ``"both"``: each with both signs, independent of the solver and never larger.
    """
    if signs not in ("solver", "both"):
        raise ValueError(
            f"signs must be 'solver' (Rajaee & Pilehvar's code) or 'both'; found {signs!r}"
        )
    w = checked_points(points, min_rows=2).detach().cpu().to(torch.float64).numpy()
    _, vectors = np.linalg.eig(w.T @ w)  # the general solver their notebook calls: its signs
    if np.iscomplexobj(vectors):
        vectors = np.real(vectors)  # WᵀW is symmetric: any imaginary part is round-off
    projections = torch.from_numpy(w @ vectors)  # column j: c_jᵀ w for every w
    log_z = torch.logsumexp(projections, dim=0)
    if signs == "both":
        log_z = torch.cat([log_z, torch.logsumexp(-projections, dim=0)])
    return float(torch.exp(log_z.min() - log_z.max()))
