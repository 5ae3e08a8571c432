"""Tables from stored run results: item and parameter counts, and correlation of the two metrics."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.bootstrap import BootstrapSettings, correlation_intervals
from isotropy.bootstrap import describe as describe_interval
from isotropy.metrics import registry


def read_traces(paths: Iterable[str | Path], keys: Iterable[dict]) -> pd.DataFrame:
    """Concatenate per-run traces, tagging each with its keys (e.g. encoder, dataset)."""
    frames = []
    for path, key in zip(paths, keys):
        frame = pd.read_parquet(path)
        for name, value in key.items():
            frame[name] = value
        frames.append(frame)
    if not frames:
        raise ValueError("no traces given")
    return pd.concat(frames, ignore_index=True)


COUNT_COLUMNS = ("items", "rows", "dim", "labels", "params", "classifier_params", "dropped_items")


def parameter_table(
    summary_paths: Iterable[str | Path],
    keys: Iterable[dict],
    vector_labels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per setup: items, unique rows, dim and parameter counts (from the real model objects).

    Seeds of one setup share these counts; a disagreement means a corrupted run and is an error.
    ``vector_labels`` (encoder name → what its vectors are, e.g. the offline GloVe 50-d stand-in
    for word2vec) adds a ``vectors`` column after ``encoder``, so no reader takes the stand-in
    for the paper's vectors. The caption (report/parameter_table.rst) says what each column is.
    """
    rows = []
    for path, key in zip(summary_paths, keys):
        summary = json.loads(Path(path).read_text())
        rows.append({**key, **{k: summary[k] for k in COUNT_COLUMNS}})
    table = pd.DataFrame(rows)
    group = [k for k in table.columns if k not in COUNT_COLUMNS]
    counts = table.groupby(group, sort=False).nunique()
    if (counts > 1).any().any():
        raise ValueError(f"runs of one setup disagree on their counts:\n{table}")
    table = table.drop_duplicates(subset=group).reset_index(drop=True)
    if vector_labels is not None and "encoder" in table.columns:
        vectors = table["encoder"].map(lambda name: vector_labels.get(name, name))
        table.insert(table.columns.get_loc("encoder") + 1, "vectors", vectors)
    return table


def correlation_table(
    traces: pd.DataFrame, by: list[str], bootstrap: BootstrapSettings | None = None
) -> pd.DataFrame:
    """Pearson r and Spearman rho between IsoScore and silhouette per setup.

    The two columns are the metric registry's correlated pair (:func:`registry.with_role`: the
    ``isotropy`` and the ``clusters`` metric). ``scope`` is ``all`` (every recorded step of every
    seed pooled) or ``seed<k>`` (one run).
    With ``bootstrap``, each r and rho gets a confidence interval (isotropy.bootstrap: seeds and
    blocks of steps resampled) and ``ci`` names how it was drawn.
    """
    x, y = registry.with_role("isotropy").name, registry.with_role("clusters").name
    rows = []
    measured = traces.dropna(subset=[x, y])
    for key, group in measured.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        scopes = [("all", group)] + [(f"seed{seed}", g) for seed, g in group.groupby("seed")]
        for scope, frame in scopes:
            if len(frame) < 3 or frame[x].nunique() < 2 or frame[y].nunique() < 2:
                pearson = spearman = (
                    np.nan
                )  # undefined on constant or tiny series; stated, not hidden
            else:
                pearson = stats.pearsonr(frame[x], frame[y]).statistic
                spearman = stats.spearmanr(frame[x], frame[y]).statistic
            row = {
                **dict(zip(by, key)),
                "scope": scope,
                "points": len(frame),
                "pearson_r": pearson,
                "spearman_rho": spearman,
            }
            if bootstrap is not None:
                row.update(_intervals(frame, bootstrap, (x, y)))
            rows.append(row)
    return pd.DataFrame(rows)


def _intervals(frame: pd.DataFrame, settings: BootstrapSettings, columns: tuple[str, str]) -> dict:
    """Bootstrap intervals of one scope's correlations of ``columns``, with the phrase naming them."""
    x, y = columns
    runs = [
        (run[x].to_numpy(), run[y].to_numpy())
        for _, run in frame.sort_values("step").groupby("seed", sort=True)
    ]
    return {
        **correlation_intervals(runs, settings),
        "ci": describe_interval(settings, max(len(run[0]) for run in runs), len(runs)),
    }
