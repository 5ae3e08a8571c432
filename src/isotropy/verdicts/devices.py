"""The committed main-study run repeated on another device, compared with it step by step.

``docs/data/main_traces_h100.csv.gz`` holds the same 20 runs as the committed CPU run (same
inputs, settings and code, on one H100: ``docs/data/main_h100_run.json``,
``benchmarks/main_on_device.py``). The page shows, per setup, the largest difference of each
recorded value over every step and seed, and the pooled correlations from each device's traces.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from isotropy.metrics import registry
from isotropy.summaries import correlation_table

H100_TRACES = Path("docs/data/main_traces_h100.csv.gz")
H100_RUN = Path("docs/data/main_h100_run.json")
KEYS = ["encoder", "dataset", "seed", "step"]
VALUES = list(registry.trace_columns())  # loss, accuracy, then every registered metric


def compare(cpu: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per setup: the largest |other − cpu| of each value over matching steps, the steps matched,
    and the pooled Pearson r and Spearman ρ of each. Steps present on one side only are refused:
    a partial repeat would compare less than it claims."""
    merged = cpu.merge(other, on=KEYS, how="outer", suffixes=("_cpu", "_other"), indicator=True)
    unmatched = merged[merged["_merge"] != "both"]
    if len(unmatched):
        first = unmatched.iloc[0]
        raise ValueError(
            f"{len(unmatched)} recorded steps are on one device only, e.g. "
            f"{first['dataset']} seed {first['seed']} step {first['step']}"
        )
    for value in VALUES:
        merged[value] = (merged[f"{value}_other"] - merged[f"{value}_cpu"]).abs()
    largest = merged.groupby(["encoder", "dataset"], sort=False)[VALUES].max()
    largest["steps"] = merged.groupby(["encoder", "dataset"], sort=False).size()
    by = ["encoder", "dataset"]
    for name, traces in (("cpu", cpu), ("other", other)):
        table = correlation_table(traces, by)
        table = table[table["scope"] == "all"].set_index(by)
        largest[f"pearson_r_{name}"] = table["pearson_r"]
        largest[f"spearman_rho_{name}"] = table["spearman_rho"]
    return largest.reset_index()


def block_lines(root: str | os.PathLike, cpu: pd.DataFrame) -> list[str]:
    """The page's section on the repeat, or nothing when no repeat is committed."""
    root = Path(root)
    if not (root / H100_TRACES).is_file():
        return []
    record = json.loads((root / H100_RUN).read_text(encoding="utf-8"))
    table = compare(cpu, pd.read_csv(root / H100_TRACES))
    lines = [
        "",
        f"The same runs on another device: {record['device']}, {record['date']}, "
        f"{record['wall_seconds_total']:.0f} s for all {len(record['wall_seconds_per_run'])} runs "
        f"({H100_TRACES.as_posix()}; {H100_RUN.as_posix()}). Largest difference over every "
        "recorded step and seed, and the pooled correlations from each device's traces:",
        "",
        "| setup | steps | max Δ loss | max Δ accuracy | max Δ IsoScore | max Δ silhouette "
        "| Pearson r: CPU / GPU | Spearman ρ: CPU / GPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, row in table.iterrows():
        lines.append(
            f"| {row['encoder']}/{row['dataset']} | {row['steps']} | {row['loss']:.1e} "
            f"| {row['accuracy']:.1e} | {row['isoscore']:.1e} | {row['silhouette']:.1e} "
            f"| {row['pearson_r_cpu']:.6f} / {row['pearson_r_other']:.6f} "
            f"| {row['spearman_rho_cpu']:.6f} / {row['spearman_rho_other']:.6f} |"
        )
    return lines
