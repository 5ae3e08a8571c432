"""Tables from stored run results: item and parameter counts, and correlation of the two metrics."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.embeddings.texts import unique_texts
from isotropy.metrics import registry
from isotropy.statistics import CORRELATIONS, matches, seed_interval, signs_disagree

COUNT_COLUMNS = ("items", "rows", "dim", "labels", "params", "classifier_params", "dropped_items")


def parameter_table(
    summary_paths: Iterable[str | Path],
    keys: Iterable[dict],
    vector_labels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per setup of its runs' :data:`COUNT_COLUMNS`, which its seeds must share (else a
    run is corrupted); ``vector_labels`` (encoder → what its vectors are) adds a ``vectors``
    column, so no reader takes a stand-in for the paper's vectors."""
    read = (json.loads(Path(path).read_text()) for path in summary_paths)
    table = pd.DataFrame({**key, **{k: s[k] for k in COUNT_COLUMNS}} for s, key in zip(read, keys))
    group = [k for k in table.columns if k not in COUNT_COLUMNS]
    if (table.groupby(group, sort=False).nunique() > 1).any().any():
        raise ValueError(f"runs of one setup disagree on their counts:\n{table}")
    table = table.drop_duplicates(subset=group).reset_index(drop=True)
    if vector_labels is not None and "encoder" in table.columns:
        vectors = table["encoder"].map(lambda name: vector_labels.get(name, name))
        table.insert(table.columns.get_loc("encoder") + 1, "vectors", vectors)
    return table


def data_counts(table: pd.DataFrame, dim: int, bias: bool = True) -> dict[str, int]:
    """A setup's :data:`COUNT_COLUMNS` from its prepared table alone, no vectors or run: one
    embedding row per unique (stripped) text, a linear head on the row or on ``[u; v]`` with one
    output per label. The optimisation's model (:class:`isotropy.optimize.EmbeddingClassifier`)
    holds exactly these (tests/test_datasets.py), so Table 2's parameters need no run."""
    if "labels" in table.columns:
        labels = len({label for row in table["labels"] for label in row})
    else:
        labels = table["label"].astype(str).nunique()
    rows = len(unique_texts(table))
    width = dim * (2 if "text_pair" in table.columns else 1)
    classifier = labels * width + (labels if bias else 0)
    return {
        "items": len(table),
        "rows": rows,
        "dim": dim,
        "labels": labels,
        "params": rows * dim + classifier,
        "classifier_params": classifier,
        "dropped_items": 0,
    }


def exact_unit(value: float) -> float:
    """±1 where a correlation is ±1 up to floating-point rounding (identical ranks give ρ =
    -0.9999999999999999); any other value unchanged."""
    if math.isfinite(value) and abs(abs(value) - 1) < 1e-12:
        return math.copysign(1.0, value)
    return value


def _correlations(frame: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    """Pearson r and Spearman ρ of two columns; NaN on a constant or tiny series (stated)."""
    if len(frame) < 3 or frame[x].nunique() < 2 or frame[y].nunique() < 2:
        return dict.fromkeys(CORRELATIONS, math.nan)
    tests = zip(CORRELATIONS, (stats.pearsonr, stats.spearmanr))
    return {name: exact_unit(float(test(frame[x], frame[y]).statistic)) for name, test in tests}


def correlation_table(traces: pd.DataFrame, by: list[str], level: float = 0.95) -> pd.DataFrame:
    """Pearson r and Spearman ρ of the registry's ``isotropy`` and ``clusters`` metrics per
    setup: a row of scope ``all`` (every recorded step of every seed pooled, with the seeds'
    summary of :func:`_seed_columns`) and, with 2 or more seeds, a row ``seed<k>`` per run."""
    x, y = registry.with_role("isotropy").name, registry.with_role("clusters").name
    rows = []
    measured = traces.dropna(subset=[x, y])
    for key, group in measured.groupby(by, sort=False):
        key = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        runs = list(group.groupby("seed", sort=True))
        per_seed = [
            {"scope": f"seed{seed}", "seeds": 1, "points": len(run), **_correlations(run, x, y)}
            for seed, run in runs
        ]
        pooled = {"scope": "all", "seeds": len(runs), "points": len(group)}
        pooled |= _correlations(group, x, y)
        pooled.update(_seed_columns(pooled, per_seed, level))
        # seed<k> rows only with 2 or more seeds (one seed's row would repeat the pooled one)
        rows += [{**key, **row} for row in [pooled] + (per_seed if len(runs) > 1 else [])]
    return pd.DataFrame(rows)


def spearman_summary(per_seed: Iterable[float]) -> dict[str, float]:
    """Spearman's ρ over seeds: the median seed (``_seed_mean``) and the seeds' range (``_seed_low``
    / ``_seed_high``). Not a t-interval on Fisher z: ρ = −1 has no finite z, so such an interval
    was set by where ±1 is clipped, which moves with the stride (stride 1: [−1.000, +0.397];
    stride 50: [−0.99992, −0.075] on the same seeds); the range does not."""
    values = np.array([v for v in per_seed if math.isfinite(v)], dtype=np.float64)
    several = values.size >= 2
    return {
        "spearman_rho_seed_mean": exact_unit(float(np.median(values))) if values.size else math.nan,
        "spearman_rho_seed_low": exact_unit(float(values.min())) if several else math.nan,
        "spearman_rho_seed_high": exact_unit(float(values.max())) if several else math.nan,
    }


def _seed_columns(pooled: dict, per_seed: list[dict], level: float) -> dict:
    """r's mean over seeds (by Fisher z) with its ``level`` t-interval, the Spearman summary, the
    interval's description and whether the seeds' signs disagree (or with the pooled value)."""
    interval = seed_interval([row["pearson_r"] for row in per_seed], level)
    low, high = (math.nan if v is None else exact_unit(v) for v in (interval.low, interval.high))
    columns: dict = {"pearson_r_seed_mean": exact_unit(interval.estimate)}
    columns |= {"pearson_r_seed_low": low, "pearson_r_seed_high": high}
    columns.update(spearman_summary([row["spearman_rho"] for row in per_seed]))
    columns["interval"] = interval.describe()
    columns["seed_signs_disagree"] = any(
        signs_disagree([row[name] for row in per_seed], pooled[name]) for name in CORRELATIONS
    )
    return columns


def with_paper_values(table: pd.DataFrame, published: pd.DataFrame, study: str) -> pd.DataFrame:
    """``paper_pearson_r`` (the paper's printed r; empty where it prints none) and ``vs_paper``
    beside each ``all`` row of ``study`` (main, or glue): whether our sign differs or the seeds'
    signs disagree, never "inside our interval" (an interval of the seeds' typical r, not of the
    paper's draw). A fact for the reader; the verdict is results/paper_comparison.csv."""
    rows = published[(published["study"] == study) & (published["quantity"] == "pearson_r")]
    rows = rows[rows["paper_value"].notna()]
    paper, notes = [], []
    for _, row in table.iterrows():
        setup = row["dataset"] if study == "main" else f"{row['encoder']}/{row['dataset']}"
        found = [v for p, v in zip(rows["setup"], rows["paper_value"]) if matches(p, setup)]
        paper.append(found[0] if found and row["scope"] == "all" else math.nan)
        notes.append(_against_paper(row, paper[-1]))
    return table.assign(paper_pearson_r=paper, vs_paper=notes)


def _against_paper(row: pd.Series, paper: float) -> str:
    """``vs_paper`` of one row (see :func:`with_paper_values`); empty without a printed value."""
    if not math.isfinite(paper):
        return ""
    ours = row["pearson_r_seed_mean"]
    parts = ["sign differs from the paper"] if math.isfinite(ours) and ours * paper < 0 else []
    if row.get("seed_signs_disagree", False):  # NaN only on seed rows, returned above
        parts.append("seeds disagree in sign")
    parts.append("verdict: results/paper_comparison.csv")
    return "; ".join(parts)
