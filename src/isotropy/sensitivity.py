"""What sets the sign of the supersense correlation (config ``sensitivity``; docs/sensitivity.md).

The main study's direct optimisation (isotropy.optimize) of the word-level setups (supersense,
POS as the contrast), run over cells: a vector set (an encoder's own, or one derived from it by
:func:`derive_vectors`: rescaled to another set's RMS centred norm, reduced by PCA, rotated,
zero-padded or isometrically embedded) x a label set (:data:`LABEL_SETS`) x a learning-rate
factor, each with several seeds (the replication unit). Every vector set sees the same items:
the words that the ``items_from`` encoder has a vector for.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.configuration.optimisation import Derived
from isotropy.statistics import fisher_z, seed_interval, signs_disagree
from isotropy.summaries import spearman_summary

# ---------------------------------------------------------------------------------------------
# Label sets: name -> (table of the setup's items, settings, rng) -> the items kept.


def _paper_size(table: pd.DataFrame, section: Mapping, rng: np.random.Generator) -> pd.DataFrame:
    """A seeded random subset of ``paper_size`` items (2,275: Tikhonov et al.'s labelled words)."""
    size = section["paper_size"]
    if size > len(table):
        raise ValueError(
            f"sensitivity.paper_size is {size} but the setup has only {len(table)} items; lower it"
        )
    keep = np.sort(rng.choice(len(table), size=size, replace=False))
    return table.iloc[keep]


LABEL_SETS: dict[str, Callable[[pd.DataFrame, Mapping, np.random.Generator], pd.DataFrame]] = {
    "all": lambda table, section, rng: table,  # with full label vectors: the main study's task
    # only items with exactly one label: one cluster per label (26 for supersense)
    "single": lambda table, section, rng: table[table["labels"].map(len) == 1],
    "paper_size": _paper_size,
}


def label_set_table(
    table: pd.DataFrame, vocabulary: pd.Series, label_set: str, section: Mapping
) -> pd.DataFrame:
    """The items of one label set: the setup's words that have a vector in ``vocabulary``."""
    if label_set not in LABEL_SETS:
        raise ValueError(
            f"unknown label set {label_set!r} (the configuration refuses those not built)"
        )
    if "labels" not in table.columns:
        raise ValueError("label sets are defined on multi-label word tables (column 'labels')")
    known = table[table["text"].astype(str).isin(set(vocabulary.astype(str)))]
    rng = np.random.default_rng(section["label_seed"])
    kept = LABEL_SETS[label_set](known.reset_index(drop=True), section, rng)
    if len(kept) < 2:
        raise ValueError(f"label set {label_set!r} keeps only {len(kept)} items; need at least 2")
    return kept.reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# Vector sets: an encoder's own, or one derived from an encoder's (config ``sensitivity.derived``)

TRANSFORMS = ("rescale", "pca", "rotate", "pad", "orthogonal")


def rms_centred_norm(vectors: np.ndarray) -> float:
    """sqrt(mean_i ||x_i - mean||²): the cloud's scale, which Adam's fixed step size meets.

    IsoScore and silhouette ignore it; a step of ``learning_rate`` per coordinate does not.
    """
    x = np.asarray(vectors, dtype=np.float64)
    centred = x - x.mean(axis=0, keepdims=True)
    return float(np.sqrt((centred**2).sum(axis=1).mean()))


def random_orthonormal(rows: int, columns: int, seed: int) -> np.ndarray:
    """A seeded ``rows x columns`` matrix, orthonormal columns (QR of a Gaussian, signs fixed)."""
    gaussian = np.random.default_rng(seed).standard_normal((rows, columns))
    q, r = np.linalg.qr(gaussian)
    return q * np.sign(np.diag(r))  # a unique Q for the seed


def derive_vectors(vectors: np.ndarray, spec: Derived) -> tuple[np.ndarray, np.ndarray | None]:
    """One derived vector set (float32) and the basis of the original span inside it.

    ``spec.transform``: ``rescale`` (the vectors as given: :func:`rescale_to` scales them to
    ``norm_of``'s norm, as it does any derived set with a ``norm_of``), ``pca``
    (the projection onto the ``dim`` leading principal directions of the centred cloud),
    ``rotate`` (a seeded random rotation within d), ``pad`` (zeros appended up to ``dim``),
    ``orthogonal`` (a seeded random isometry into ``dim``). The basis B (D x d, orthonormal
    columns) carries original coordinates into the new space (X_new = X Bᵀ); it is given for
    rotate, pad and orthogonal, None otherwise.
    """
    x = np.asarray(vectors, dtype=np.float64)
    n, d = x.shape
    kind, dim = spec.transform, spec.dim
    if kind == "rescale":
        return vectors, None
    if kind == "pca":
        if dim is None or not 2 <= dim <= min(n, d):
            raise ValueError(f"pca needs 2 <= dim <= {min(n, d)}, got {dim}")
        _, _, vt = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)
        return (x @ vt[:dim].T).astype(np.float32), None
    if kind == "rotate":
        basis = random_orthonormal(d, d, spec.seed)
    elif kind in ("pad", "orthogonal"):
        if dim is None or dim < d:
            raise ValueError(f"cannot embed {d}-d vectors isometrically into {dim} dimensions")
        basis = np.eye(dim, d) if kind == "pad" else random_orthonormal(dim, d, spec.seed)
    else:
        raise ValueError(f"unknown transform {kind!r}; known: {', '.join(TRANSFORMS)}")
    return (x @ basis.T).astype(np.float32), basis


def derived_labels(derived: Mapping[str, Derived | Mapping[str, Any]]) -> dict[str, str]:
    """Derived vector set -> what it is, for figures ("word2vec rescaled to miniLM's norm");
    a rule's raw ``derived`` param is validated here, its defaults filled in."""
    says = {
        "rescale": "rescaled to {norm_of}'s norm",
        "pca": "PCA to {dim}-d{at}",
        "rotate": "rotated (seed {seed})",
        "pad": "zero-padded to {dim}-d",
        "orthogonal": "isometry into {dim}-d (seed {seed})",
    }
    labels = {}
    for name, raw in derived.items():
        spec = Derived.model_validate(raw)
        at = f" at {spec.norm_of}'s norm" if spec.norm_of else ""
        labels[name] = f"{spec.of} {says[spec.transform].format(at=at, **spec.model_dump())}"
    return labels


def shared_rows(index: pd.Series, other: pd.Series) -> np.ndarray:
    """Positions in ``index`` of the texts ``other`` also has: the rows both vector sets see."""
    return np.flatnonzero(index.astype(str).isin(set(other.astype(str))).to_numpy())


def rescale_to(
    vectors: np.ndarray, index: pd.Series, other: np.ndarray, other_index: pd.Series
) -> tuple[np.ndarray, float]:
    """``vectors`` scaled so that, on the words both sets have, their RMS centred norm is
    ``other``'s there; returns the scaled vectors (float32) and that target norm."""
    mine, theirs = shared_rows(index, other_index), shared_rows(other_index, index)
    if len(mine) < 2:
        raise ValueError(f"the two vector sets share {len(mine)} words; rescaling needs 2")
    target = rms_centred_norm(np.asarray(other)[theirs])
    scale = target / rms_centred_norm(np.asarray(vectors)[mine])
    return (np.asarray(vectors, dtype=np.float64) * scale).astype(np.float32), target


if TYPE_CHECKING:
    import torch

CELL_KEYS = ["setup", "vectors", "label_set", "lr_factor"]
# A correlation over fewer recorded steps than this is left blank (NaN).
MIN_POINTS = 3


class SubspaceProbe:
    """At every recorded step (an :class:`isotropy.optimize.Probe`): the share of the table's
    variance in the classifier's row space and, where ``basis`` (D x d orthonormal columns: the
    original span inside the table, :func:`derive_vectors`) is known, IsoScore inside that span
    and the share of variance outside it. IsoScore of the full table is (PR - 1)/(D - 1): a 50-d
    cloud placed in 300 dimensions scores 49/299 of its 50-d value, inside its span exactly that
    value, which moves only as far as Adam leaves the span."""

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


def _pearson(x: np.ndarray, y: np.ndarray, test: Callable = stats.pearsonr) -> float:
    if len(x) < MIN_POINTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(test(x, y).statistic)


def seed_row(trace: pd.DataFrame) -> dict:
    """One run's per-seed numbers from its trace (step, isoscore, silhouette, probe columns)."""
    trace = trace.sort_values("step")
    step = trace["step"].to_numpy()
    iso, sil = trace["isoscore"].to_numpy(), trace["silhouette"].to_numpy()
    low = int(np.argmin(iso))
    row = {
        "steps": len(step),
        "pearson_r": _pearson(iso, sil),
        "spearman_rho": _pearson(iso, sil, stats.spearmanr),
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
# Spearman's ρ is given as the median seed and the seeds' range (isotropy.summaries), as in the
# main study's correlations.csv: ρ = -1 has no finite z, so a t-interval on z was set by where
# ±1 is clipped.
INTERVAL_COLUMNS = ["pearson_r", "r_before_min", "r_after_min", "r_span"]
MEAN_COLUMNS = (
    "isoscore_start isoscore_end isoscore_change silhouette_start silhouette_end "
    "rowspace_share_start rowspace_share_end isoscore_span_start isoscore_span_end "
    "outside_share_end"
).split()


def contrast_p(r_a, r_b) -> float:
    """Two-sided p of the difference between two cells' per-seed Pearson r: Welch's t-test on
    their Fisher z. Unlike the exact Mann–Whitney test, whose smallest p at five seeds against
    five is 2/252 = 0.0079 (above 0.05/7, so no family of 7 or more could hold it after Holm),
    its p can be as small as the seeds' separation warrants."""
    z_a, z_b = fisher_z(r_a), fisher_z(r_b)
    if z_a.size < 2 or z_b.size < 2:
        raise ValueError(f"a contrast needs >= 2 seeds per cell; found {z_a.size} and {z_b.size}")
    return float(stats.ttest_ind(z_a, z_b, equal_var=False).pvalue)


def cell_row(seeds: pd.DataFrame, level: float = 0.95) -> dict:
    """One cell's row from its per-seed rows: intervals over seeds, means, the minimum's range."""
    row: dict = {"seeds": int(seeds["seed"].nunique())}
    if "spearman_rho" in seeds and seeds["spearman_rho"].notna().any():
        rho = seeds["spearman_rho"].to_numpy(dtype=float)
        median, low, high = spearman_summary(rho).values()  # the median, lowest, highest seed
        row.update(spearman_rho=median, spearman_rho_low=low, spearman_rho_high=high)
        row["spearman_rho_seeds"] = " ".join(f"{v:+.2f}" for v in rho)
    for name in INTERVAL_COLUMNS:
        values = seeds[name].to_numpy(dtype=float) if name in seeds else np.array([])
        if not np.isfinite(values).any():
            continue
        interval = seed_interval(values, level)
        row[name] = interval.estimate
        row[f"{name}_low"], row[f"{name}_high"] = interval.low, interval.high
        row[f"{name}_seeds"] = " ".join(f"{v:+.2f}" for v in values)
        if name == "pearson_r":
            row["interval"] = interval.describe()
            row["signs_disagree"] = signs_disagree(values)
    for name in MEAN_COLUMNS:
        if name in seeds and seeds[name].notna().any():
            row[name] = float(seeds[name].mean())
    row["min_step_low"], row["min_step_high"] = map(int, seeds["min_step"].agg(["min", "max"]))
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


def with_interval(row: pd.Series, name: str) -> str:
    value = row.get(name)
    if value is None or not np.isfinite(value):
        return "–"
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return f"{value:+.2f}"
    return f"{value:+.2f} [{low:+.2f}, {high:+.2f}]"


def _start_to_end(row: pd.Series, name: str, spec: str = ".3f") -> str:
    """``<name>_start → <name>_end``, or "–" where the cell has no such values."""
    if not np.isfinite(start := row.get(f"{name}_start", np.nan)):
        return "–"
    return f"{start:{spec}} → {row[f'{name}_end']:{spec}}"


def markdown_table(table: pd.DataFrame) -> str:
    """The cell table as Markdown: correlations as ``estimate [low, high]`` over seeds (ρ: the
    median seed [the lowest, the highest seed])."""
    header = (
        "| setup | vectors | dim | label set | lr × | seeds | r [CI] | ρ median [range] "
        "| r per seed "
        "| IsoScore start → end | min at update | r before min [CI] | r after min [CI] "
        "| row-space share start → end | inside span: IsoScore; r [CI]; outside |"
    )
    lines = [header, "|" + "---|" * header.count(" | ") + "---|"]
    for _, row in table.iterrows():
        r, seeds = with_interval(row, "pearson_r"), row.get("pearson_r_seeds", "")
        span = _start_to_end(row, "isoscore_span")
        if span != "–":
            span += f"; {with_interval(row, 'r_span')}; {100 * row['outside_share_end']:.0f}% out"
        cells = [row["setup"], row["vectors"], row["dimension"], row["label_set"]]
        cells.append(f"{row['lr_factor']:g}")
        cells += [row["seeds"], r, with_interval(row, "spearman_rho"), seeds]
        cells += [_start_to_end(row, "isoscore"), f"{row['min_step_low']}–{row['min_step_high']}"]
        cells += [with_interval(row, name) for name in ("r_before_min", "r_after_min")]
        cells += [_start_to_end(row, "rowspace_share", ".2f"), span]
        lines.append("| " + " | ".join(f"{cell}" for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def write_tables(
    cell_files, outputs, settings_line: str, level: float, opener, missing=()
) -> pd.DataFrame:
    """Read the cells' per-seed files; write ``outputs.seeds`` (every seed), ``outputs.table``
    (one row per cell, the settings in a column) and ``outputs.markdown``, naming any cell in
    ``missing`` (not run yet) under the table. ``opener``: :func:`isotropy.io.atomic_path`."""
    seeds = pd.concat([read_seeds(path) for path in cell_files], ignore_index=True)
    table = cell_table(seeds, level)
    table["settings"] = settings_line
    with opener(outputs.seeds) as tmp:
        seeds.to_csv(tmp, index=False)
    with opener(outputs.table) as tmp:
        table.to_csv(tmp, index=False)
    note = f"\nSettings: {settings_line}. Intervals: {table['interval'].iloc[0]}.\n"
    if missing:
        note += f"\n{NOT_RUN_NOTE}{', '.join(missing)}.\n"
    with opener(outputs.markdown) as tmp:
        tmp.write_text(markdown_table(table) + note, encoding="utf-8")
    return table


def read_seeds(path: str | os.PathLike | IO[bytes]) -> pd.DataFrame:
    """A per-seed file (``results/sensitivity/seeds.csv``, or its committed copy's bytes)."""
    seeds = pd.read_csv(path)
    seeds["lr_factor"] = seeds["lr_factor"].astype(float)
    return seeds


NOT_RUN_NOTE = "Not run (missing from this table): "


def not_run_cells(markdown: str) -> list[str]:
    """The cells a table.md names as not run (:func:`write_tables`), in order."""
    for line in markdown.splitlines():
        if line.startswith(NOT_RUN_NOTE):
            return line.removeprefix(NOT_RUN_NOTE).rstrip(".").split(", ")
    return []
