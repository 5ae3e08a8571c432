"""The sensitivity study's measurements: per step, per seed and per cell (docs/sensitivity.md).

* :class:`SubspaceProbe` is an :class:`isotropy.optimize.Probe`: at every recorded step it adds
  the share of the table's variance in the classifier's row space and, for vectors whose
  original span is known (rotated, padded, orthogonally embedded), IsoScore inside that span and
  the share of variance outside it. IsoScore of the full table is (PR - 1)/(D - 1), so a 50-d
  cloud placed in 300 dimensions scores 49/299 of its 50-d value; inside its span it scores the
  50-d value exactly, and it moves only as far as Adam leaves the span.
* :func:`seed_row` reduces one run's trace to the per-seed numbers: Pearson r and Spearman ρ of
  IsoScore and silhouette, IsoScore's change, the update of its minimum, r up to and from that
  minimum (the two phases), r on IsoScore inside the span, and the subspace shares.
* :func:`cell_table` gives one row per cell with t-intervals over seeds on the Fisher z of each
  correlation (:func:`isotropy.seed_intervals.seed_interval`, the main study's interval).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.seed_intervals import R_LIMIT, seed_interval, signs_disagree, spearman_limit

if TYPE_CHECKING:
    import torch

CELL_KEYS = ["setup", "vectors", "label_set", "lr_factor"]
# A correlation over fewer recorded steps than this is left blank (NaN).
MIN_POINTS = 3


class SubspaceProbe:
    """Per-step subspace measurements of the embedding table (module docstring).

    ``basis``: D x d orthonormal columns spanning the original vectors inside the table's D
    dimensions (:func:`isotropy.sensitivity.derive_vectors`), or None.
    """

    def __init__(self, basis: np.ndarray | None, device: torch.device | str = "cpu"):
        # torch only here and in subspace_values: the per-seed and per-cell reductions below run
        # in the plots environment, which has no torch (envs/plots.yaml).
        import torch

        self.basis = (
            None if basis is None else torch.as_tensor(basis, dtype=torch.float64, device=device)
        )
        span = ("isoscore_span", "outside_share") if basis is not None else ()
        self.columns = ("rowspace_share", *span)

    def __call__(self, model) -> dict[str, torch.Tensor]:
        import torch

        with torch.no_grad():
            table = model.embeddings.weight.detach().to(torch.float64)
            weight = model.classifier.weight.detach().to(torch.float64)[:, : table.shape[1]]
            return subspace_values(table, weight, self.basis)


def subspace_values(
    table: torch.Tensor, weight: torch.Tensor, basis: torch.Tensor | None
) -> dict[str, torch.Tensor]:
    """The probe's values for one state: ``table`` (n x D), classifier ``weight`` (k x D)."""
    import torch

    from isotropy.metrics.isoscores import isoscore_tensor

    centred = table - table.mean(dim=0, keepdim=True)
    total = (centred * centred).sum()
    _, _, vh = torch.linalg.svd(weight, full_matrices=False)  # rows: the row space's basis
    row = centred @ vh.T
    values = {"rowspace_share": (row * row).sum() / total}
    if basis is not None:
        inside = centred @ basis
        values["isoscore_span"] = isoscore_tensor(inside)
        values["outside_share"] = 1.0 - (inside * inside).sum() / total
    return values


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < MIN_POINTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.pearsonr(x, y).statistic)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < MIN_POINTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def seed_row(trace: pd.DataFrame) -> dict:
    """One run's per-seed numbers from its trace (step, isoscore, silhouette, probe columns)."""
    trace = trace.sort_values("step")
    step = trace["step"].to_numpy()
    iso, sil = trace["isoscore"].to_numpy(), trace["silhouette"].to_numpy()
    low = int(np.argmin(iso))
    row = {
        "steps": len(step),
        "pearson_r": _pearson(iso, sil),
        "spearman_rho": _spearman(iso, sil),
        "isoscore_start": iso[0],
        "isoscore_end": iso[-1],
        "isoscore_change": iso[-1] - iso[0],
        "silhouette_start": sil[0],
        "silhouette_end": sil[-1],
        "min_step": int(step[low]),
        "r_before_min": _pearson(iso[: low + 1], sil[: low + 1]),
        "r_after_min": _pearson(iso[low:], sil[low:]),
    }
    if "rowspace_share" in trace:
        share = trace["rowspace_share"].to_numpy()
        row.update(rowspace_share_start=share[0], rowspace_share_end=share[-1])
    if "isoscore_span" in trace:
        span = trace["isoscore_span"].to_numpy()
        row.update(
            r_span=_pearson(span, sil),
            isoscore_span_start=span[0],
            isoscore_span_end=span[-1],
            outside_share_end=trace["outside_share"].to_numpy()[-1],
        )
    return row


# Correlations given per cell with their interval over seeds; other columns: mean over seeds.
INTERVAL_COLUMNS = ["pearson_r", "spearman_rho", "r_before_min", "r_after_min", "r_span"]
MEAN_COLUMNS = [
    "isoscore_start",
    "isoscore_end",
    "isoscore_change",
    "silhouette_start",
    "silhouette_end",
    "rowspace_share_start",
    "rowspace_share_end",
    "isoscore_span_start",
    "isoscore_span_end",
    "outside_share_end",
]


def cell_row(seeds: pd.DataFrame, level: float = 0.95) -> dict:
    """One cell's row from its per-seed rows: intervals over seeds, means, the minimum's range."""
    row: dict = {"seeds": int(seeds["seed"].nunique())}
    for name in INTERVAL_COLUMNS:
        values = seeds[name].to_numpy(dtype=float) if name in seeds else np.array([])
        if not np.isfinite(values).any():
            continue
        # ρ is discrete: ±1 clipped at its resolution on the run's points, as in correlations.csv
        limit = R_LIMIT
        if name == "spearman_rho" and "steps" in seeds:
            limit = spearman_limit(int(seeds["steps"].min()))
        interval = seed_interval(values, level, limit)
        row[name] = interval.estimate
        row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
        row[f"{name}_seeds"] = " ".join(f"{v:+.2f}" for v in values)
        if name == "pearson_r":
            row["interval"] = interval.describe()
            row["signs_disagree"] = signs_disagree(values)
    for name in MEAN_COLUMNS:
        if name in seeds and seeds[name].notna().any():
            row[name] = float(seeds[name].mean())
    row["min_step_low"] = int(seeds["min_step"].min())
    row["min_step_high"] = int(seeds["min_step"].max())
    return row


def cell_table(seeds: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """One row per cell (:data:`CELL_KEYS`, in first-seen order) from every per-seed row.

    ``seeds`` carries the cell keys, ``seed``, ``dimension``, ``clusters``, ``items`` and
    :func:`seed_row`'s columns.
    """
    rows = []
    for key, group in seeds.groupby(CELL_KEYS, sort=False):
        first = group.iloc[0]
        counts = {name: first[name] for name in ("dimension", "clusters", "items")}
        rows.append({**dict(zip(CELL_KEYS, key)), **counts, **cell_row(group, level)})
    return pd.DataFrame(rows)


def _with_interval(row: pd.Series, name: str) -> str:
    value = row.get(name)
    if value is None or not np.isfinite(value):
        return "–"
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return f"{value:+.2f}"
    return f"{value:+.2f} [{low:+.2f}, {high:+.2f}]"


def _span_text(row: pd.Series) -> str:
    if not np.isfinite(row.get("isoscore_span_start", np.nan)):
        return "–"
    return (
        f"{row['isoscore_span_start']:.3f} → {row['isoscore_span_end']:.3f}; "
        f"{_with_interval(row, 'r_span')}; {100 * row['outside_share_end']:.0f}% out"
    )


def _share_text(row: pd.Series) -> str:
    if not np.isfinite(row.get("rowspace_share_start", np.nan)):
        return "–"
    return f"{row['rowspace_share_start']:.2f} → {row['rowspace_share_end']:.2f}"


def markdown_table(table: pd.DataFrame) -> str:
    """The cell table as Markdown: correlations as ``estimate [low, high]`` over seeds."""
    header = (
        "| setup | vectors | dim | label set | lr × | seeds | r [CI] | ρ [CI] | r per seed "
        "| IsoScore start → end | min at update | r before min [CI] | r after min [CI] "
        "| row-space share start → end | inside span: IsoScore; r [CI]; outside |"
    )
    lines = [header, "|" + "---|" * 15]
    for _, row in table.iterrows():
        lines.append(
            f"| {row['setup']} | {row['vectors']} | {row['dimension']} | {row['label_set']} "
            f"| {row['lr_factor']:g} | {row['seeds']} | {_with_interval(row, 'pearson_r')} "
            f"| {_with_interval(row, 'spearman_rho')} | {row.get('pearson_r_seeds', '')} "
            f"| {row['isoscore_start']:.3f} → {row['isoscore_end']:.3f} "
            f"| {row['min_step_low']}–{row['min_step_high']} "
            f"| {_with_interval(row, 'r_before_min')} | {_with_interval(row, 'r_after_min')} "
            f"| {_share_text(row)} | {_span_text(row)} |"
        )
    return "\n".join(lines) + "\n"


def write_tables(
    cell_files, outputs, settings_line: str, level: float, opener, missing=()
) -> pd.DataFrame:
    """Read the cells' per-seed files; write ``outputs.seeds`` (every seed), ``outputs.table``
    (one row per cell, the settings in a column) and ``outputs.markdown``, naming any cell in
    ``missing`` (not run yet) under the table. ``opener``: :func:`isotropy.io.atomic_path`."""
    seeds = pd.concat([pd.read_csv(path) for path in cell_files], ignore_index=True)
    seeds["lr_factor"] = seeds["lr_factor"].astype(float)
    table = cell_table(seeds, level)
    table["settings"] = settings_line
    with opener(outputs.seeds) as tmp:
        seeds.to_csv(tmp, index=False)
    with opener(outputs.table) as tmp:
        table.to_csv(tmp, index=False)
    note = f"\nSettings: {settings_line}. Intervals: {table['interval'].iloc[0]}.\n"
    if missing:
        note += f"\nNot run (missing from this table): {', '.join(missing)}.\n"
    with opener(outputs.markdown) as tmp:
        tmp.write_text(markdown_table(table) + note, encoding="utf-8")
    return table
