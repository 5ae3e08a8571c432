"""The main study's run at the paper's protocol, committed: its data in ``docs/data/main_*``, and
the page and README lines generated from it (``python -m isotropy.verdicts.headline``).

A finished ``make run`` (every seed, every update) is copied beside the docs with its checksums
and provenance: the traces (gzip, byte-stable), ``table1.csv``, ``correlations.csv`` and a record
of the run (code commit, the settings the verdicts read, the stand-ins by name, its wall time
against the estimate it printed). The verdicts are not stored: they are computed again from the
committed data by the project's own verdict code (:func:`isotropy.verdicts.measurements.measure`
and :func:`isotropy.verdicts.comparison.compare`, as ``results/paper_comparison.csv`` does), so
docs/main-study.md and the README's headline lines say what the code in force says of this run,
and a test fails when either is stale (tests/test_headline.py).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import io
import json
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from isotropy.io import (
    atomic_path,
    checked_record,
    commit_files,
    markdown_table,
    markers,
    sha256_file,
    write_block,
)
from isotropy.metrics import registry
from isotropy.provenance import single_commit
from isotropy.summaries import correlation_table
from isotropy.traces import read_trace
from isotropy.verdicts.tolerances import AGREES, CONSISTENT, NOT_CONSISTENT

DATA = Path("docs/data")
TRACES = DATA / "main_traces.csv.gz"
TABLE1 = DATA / "main_table1.csv"
CORRELATIONS = DATA / "main_correlations.csv"
RUN = DATA / "main_run.json"
# The committed run's §3.2 verdicts, for the report to show beside a run's own (rule
# copy_committed_verdicts copies it into the results folder).
VERDICTS = DATA / "main_verdicts.csv"
DOC = Path("docs/main-study.md")
README = Path("README.md")
DOC_BEGIN, DOC_END = markers("headline table", "python -m isotropy.verdicts.headline")
README_BEGIN, README_END = markers("headline lines", "python -m isotropy.verdicts.headline")
# The comparison rows this page reports: §3.2's correlations of IsoScore with the silhouette.
QUANTITIES = ("pearson_r", "spearman_rho")
# What the verdicts read of the run's configuration (the measurements' protocol and stand-ins).
KEYS = ("encoder", "dataset", "seed")
# The same runs repeated on one H100, compared with the committed CPU run step by step.
H100_TRACES = DATA / "main_traces_h100.csv.gz"
H100_RUN = DATA / "main_h100_run.json"
VALUES = list(registry.trace_columns())  # loss, accuracy, then every registered metric
CONFIG_KEYS = ("main", "encoders", "datasets", "word_vectors", "pos_source", "supersense_source")


def _trace_files(results: Path) -> list[tuple[dict[str, Any], Path]]:
    """Each run's trace below ``results`` (``<encoder>/<dataset>/seed<k>/trace.parquet``), in key
    order."""
    found = []
    for trace in sorted(results.glob("*/*/seed*/trace.parquet")):
        encoder, dataset, seed = trace.parts[-4], trace.parts[-3], trace.parts[-2]
        key = dict(encoder=encoder, dataset=dataset, seed=int(seed.removeprefix("seed")))
        found.append((key, trace))
    if not found:
        raise FileNotFoundError(f"no traces below {results}: run `make run` first")
    return sorted(found, key=lambda item: tuple(item[0].values()))


def _gzip_bytes(text: str) -> bytes:
    """``text`` gzip-compressed with no name and no time stamp, so equal text gives equal bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as out:
        out.write(text.encode("utf-8"))
    return buffer.getvalue()


def write_data(
    results: str | os.PathLike,
    effective_config: str | os.PathLike,
    run: Mapping[str, Any],
    root: str | os.PathLike = ".",
) -> dict[str, Any]:
    """Copy a finished main run (``results``: its ``results/main``) beside the docs with its
    record; ``run``: facts of the run no file holds (start, end, printed estimate, machine)."""
    from isotropy.standins import workflow_stand_ins

    results = Path(results)
    for needed in (results / "table1.csv", results / "correlations.csv"):
        if not needed.is_file():
            raise FileNotFoundError(f"{needed} is missing: the run has not finished")
    runs = _trace_files(results)
    config = yaml.safe_load(Path(effective_config).read_text(encoding="utf-8"))
    frames = [  # each checked against its provenance record
        read_trace(trace).assign(encoder=key["encoder"], dataset=key["dataset"])
        for key, trace in runs
    ]
    traces = pd.concat(frames, ignore_index=True)
    records = results.glob("*/*/seed*/trace.parquet.provenance.json")
    order = ["encoder", "dataset", "seed"] + [c for c in traces.columns if c not in KEYS]
    files: dict[Path, bytes | Path] = {
        TRACES: _gzip_bytes(traces[order].to_csv(index=False)),
        TABLE1: results / "table1.csv",
        CORRELATIONS: results / "correlations.csv",
    }
    facts = {
        "what": "`make run` on the offline mirror: the main study at the paper's protocol",
        "code_commit": single_commit(  # the one commit the traces' provenance records name
            (json.loads(r.read_text(encoding="utf-8")) for r in records), "the traces"
        ),
        "run": dict(run),
        "config": {key: config[key] for key in CONFIG_KEYS if key in config},
        "stand_ins": workflow_stand_ins(config),
        "sources_sha256": {
            str(trace.relative_to(results.parent.parent)): sha256_file(trace) for _, trace in runs
        },
    }
    return commit_files(root, RUN, files, facts)


def committed_tables(root: str | os.PathLike = ".") -> dict[str, pd.DataFrame]:
    """The committed run's tables under the names the verdicts read (``main_traces`` …)."""
    root = Path(root)
    return {
        "main_table1": pd.read_csv(root / TABLE1),
        "main_correlations": pd.read_csv(root / CORRELATIONS),
        "main_traces": pd.read_csv(root / TRACES),  # gzip, by its name
    }


def verdicts(root: str | os.PathLike = ".") -> pd.DataFrame:
    """§3.2's comparison rows judged now, on the committed run, by the verdict code in force."""
    from isotropy.standins import StandIns
    from isotropy.verdicts.comparison import compare, read_published
    from isotropy.verdicts.measurements.optimisation import optimisation_measurements, table_names
    from isotropy.verdicts.measurements.run import measure

    record = checked_record(root, RUN)
    # the main study's measures as its record gives them (verdicts cannot import the records)
    measures: dict[str | tuple[str, ...], Any] = {
        table_names("main"): functools.partial(optimisation_measurements, "main")
    }
    stand = StandIns(**record["stand_ins"])
    measured = measure(committed_tables(root), record["config"], stand, measures)
    table = compare(read_published(), measured, {"main"})
    rows = table[(table["study"] == "main") & table["quantity"].isin(QUANTITIES)]
    return rows.reset_index(drop=True)


def _num(value: Any, digits: int = 4) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return "–" if not math.isfinite(number) else f"{number:+.{digits}f}".replace("-", "−")


def verdict_words(row: pd.Series, traces: pd.DataFrame) -> str:
    """The verdict with what its rule can say: an equivalence row's margin as a range of
    D = paper − ours in the statistic's own units (the region *agrees* needs, the printed
    value's rounding included); a Spearman ρ row what monotone traces guarantee by themselves."""
    words = f"**{row['verdict']}**"
    low, high = row.get("band_low"), row.get("band_high")
    if pd.notna(low) and pd.notna(high):
        unit = {"pearson_r": "r"}.get(row["quantity"], row["quantity"])
        range_ = f"{_num(low, 3)} to {_num(high, 3)} in {unit}"
        if row["verdict"] == AGREES:
            return f"{words} within {range_} (D = paper − ours)"
        return f"{words} (margin {range_}, D = paper − ours)"
    if row["quantity"] == "spearman_rho" and row["verdict"] in (CONSISTENT, NOT_CONSISTENT):
        return f"{words} ({_monotone_words(traces, row['setup'])})"
    return words


def _monotone_words(traces: pd.DataFrame, setup: str) -> str:
    """How near to guaranteed a ρ near ±1 is: ρ = ±1 for any two strictly monotone series, so
    count each series' updates against its own trend in the seed with most."""
    encoder, dataset = setup.split("/")
    runs = traces[(traces["encoder"] == encoder) & (traces["dataset"] == dataset)]
    against = {"IsoScore": 0, "silhouette": 0}
    steps = 0
    for _, run in runs.groupby("seed"):
        run = run.sort_values("step")
        steps = len(run) - 1
        for name, column in (("IsoScore", "isoscore"), ("silhouette", "silhouette")):
            moves = run[column].diff().dropna().to_numpy()
            trend = run[column].iloc[-1] - run[column].iloc[0]
            against[name] = max(against[name], int((moves * trend < 0).sum()))
    if not any(against.values()):
        return "guaranteed by monotone traces: both series are strictly monotone in every seed"
    iso, sil = against.values()
    return (
        "near-guaranteed by monotone traces: ρ = ±1 for any two strictly monotone series, and in "
        f"the worst seed IsoScore goes against its trend at {iso} of {steps} updates, the "
        f"silhouette at {sil}"
    )


def judged_table(root: str | os.PathLike = ".", detail: bool = False) -> pd.DataFrame:
    """Each §3.2 row judged on the committed run (:func:`verdicts`), as the README shows it
    (``detail``, the page: with the stand-ins named, the paper's row and the rule as applied)."""
    table, traces = verdicts(root), committed_tables(root)["main_traces"]
    stand_ins = table["stand_in"].fillna("").astype(str) if detail else [""] * len(table)
    shown = pd.DataFrame(
        {
            "setup (ours)": table["setup"] + [f" (stand-in: {s})" if s else "" for s in stand_ins],
            "statistic": table["quantity"].map(
                {"pearson_r": "Pearson r", "spearman_rho": "Spearman ρ"}
            ),
            "paper row": table["paper"] + ", " + table["source"],
            "paper": [_num(v, 3) for v in table["paper_value"]],
            "ours (seeds pooled)": [_num(v) for v in table["our_value"]],
            "D = paper − ours": [
                _num(p - o) for p, o in zip(table["paper_value"], table["our_value"])
            ],
            "verdict": [verdict_words(row, traces) for _, row in table.iterrows()],
        }
    )
    if detail:
        shown["the rule as applied"] = table["tolerance"].fillna("").str.replace("\n", " ")
        return shown
    return shown.drop(columns="paper row")


def doc_block(root: str | os.PathLike = ".") -> str:
    """The page's generated block: the run's settings, each §3.2 row judged, each seed's ends."""
    record, traces = checked_record(root, RUN), committed_tables(root)["main_traces"]
    run, main = record["run"], record["config"].get("main", {})
    seed_list = ", ".join(str(seed) for seed in main.get("seeds", []))
    lines = [
        f"Run: {record['what']}, code {record['code_commit'][:12]}, {run.get('machine', '')}; "
        f"{run.get('started', '?')} to {run.get('ended', '?')} UTC, {run.get('wall', '?')} wall "
        f"against {run.get('printed', '?')} printed before it started.",
        f"Settings: {main.get('updates')} updates, metrics after every "
        f"{_stride_words(main.get('metric_stride'))}, seeds {seed_list}.",
        "",
        markdown_table(judged_table(root, detail=True)),
        markdown_table(seed_ends(traces)),
    ]
    return "\n".join(lines) + device_block(root, traces)


def seed_ends(traces: pd.DataFrame) -> pd.DataFrame:
    """Each seed's steps and its IsoScore and silhouette at the first and the last of them: the
    trend every seed shows (each seed's r and ρ are the committed correlation table's)."""
    rows = []
    for (encoder, dataset, seed), run in traces.sort_values("step").groupby(list(KEYS)):
        ends = {
            f"{name} first → last": f"{_num(run[column].iloc[0])} → {_num(run[column].iloc[-1])}"
            for column, name in (("isoscore", "IsoScore"), ("silhouette", "silhouette"))
        }
        rows.append({"setup": f"{encoder}/{dataset}", "seed": seed, "steps recorded": len(run)})
        rows[-1].update(ends)
    return pd.DataFrame(rows)


def device_differences(cpu: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per setup: the largest |other − cpu| of each value over matching steps, the steps matched,
    and the pooled Pearson r and Spearman ρ of each. Steps present on one side only are refused:
    a partial repeat would compare less than it claims."""
    merged = cpu.merge(
        other, on=[*KEYS, "step"], how="outer", suffixes=("_cpu", "_other"), indicator=True
    )
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


def device_block(root: str | os.PathLike, cpu: pd.DataFrame) -> str:
    """The page's section on the committed run repeated on another device (same inputs, settings
    and code: ``benchmarks/main_on_device.py``), or nothing when no repeat is committed."""
    root = Path(root)
    if not (root / H100_TRACES).is_file():
        return ""
    record = json.loads((root / H100_RUN).read_text(encoding="utf-8"))
    table = device_differences(cpu, pd.read_csv(root / H100_TRACES))
    shown = pd.DataFrame(
        {"setup": table["encoder"] + "/" + table["dataset"], "steps": table["steps"]}
    )
    for value, name in zip(VALUES, ("loss", "accuracy", "IsoScore", "silhouette")):
        shown[f"max Δ {name}"] = table[value].map("{:.1e}".format)
    for value, name in (("pearson_r", "Pearson r"), ("spearman_rho", "Spearman ρ")):
        cells = zip(table[f"{value}_cpu"], table[f"{value}_other"])
        shown[f"{name}: CPU / GPU"] = [f"{a:.6f} / {b:.6f}" for a, b in cells]
    return (
        f"\nThe same runs on another device: {record['device']}, {record['date']}, "
        f"{record['wall_seconds_total']:.0f} s for all {len(record['wall_seconds_per_run'])} runs "
        f"({H100_TRACES.as_posix()}; {H100_RUN.as_posix()}). Largest difference over every "
        "recorded step and seed, and the pooled correlations from each device's traces:\n\n"
        + markdown_table(shown)
    )


def _stride_words(stride: Any) -> str:
    return "update" if stride in (1, None) else f"{stride}th update"


def readme_block(root: str | os.PathLike = ".") -> str:
    """The README's headline: each §3.2 row of the committed run with its verdict."""
    record = checked_record(root, RUN)
    main, run = record["config"].get("main", {}), record["run"]
    return (
        f"What §3.2 of Mickus et al. (2024) replicates, judged on the committed `make run` "
        f"({len(main.get('seeds', []))} seeds, {main.get('updates')} updates, metrics after every "
        f"{_stride_words(main.get('metric_stride'))}; [docs/main-study.md](docs/main-study.md)):"
        f"\n\n{markdown_table(judged_table(root))}\n"
        f"The run took {run.get('wall', '?')} on {run.get('machine', '?')}, against "
        f"{run.get('printed', '?')} printed by `make run` before it started.\n"
    )


def committed_verdicts(root: str | os.PathLike = ".") -> str:
    """The CSV of :data:`VERDICTS`: each §3.2 row's paper and committed values and verdict, and
    in column ``run`` what made them (code commit and settings)."""
    record, table = checked_record(root, RUN), verdicts(root)
    main = record["config"].get("main", {})
    run = (
        f"the committed make run (code {record['code_commit'][:12]}; "
        f"{len(main.get('seeds', []))} seeds, {main.get('updates')} updates, metrics after every "
        f"{_stride_words(main.get('metric_stride'))}; {RUN.as_posix()})"
    )
    columns = ["setup", "quantity", "paper_value", "our_value", "verdict"]
    return table[columns].assign(run=run).to_csv(index=False, float_format="%.6g")


def main(argv: list[str] | None = None) -> int:
    """``python -m isotropy.verdicts.headline``: regenerate the page and the README's headline
    from the committed data; with ``--results``, first copy a finished run there."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--results", help="a finished run's results/main (copy it first)")
    parser.add_argument("--effective-config", default="logs/effective-config/main_study.yaml")
    parser.add_argument("--run", help="a JSON file of the run's facts (started, ended, wall, …)")
    args = parser.parse_args(argv)
    if args.results:
        facts = json.loads(Path(args.run).read_text(encoding="utf-8")) if args.run else {}
        write_data(args.results, args.effective_config, facts)
    write_block(DOC, doc_block(), DOC_BEGIN, DOC_END)
    write_block(README, readme_block(), README_BEGIN, README_END)
    with atomic_path(VERDICTS) as tmp:
        tmp.write_text(committed_verdicts(), encoding="utf-8")
    print(f"wrote {DOC}, {VERDICTS} and the headline of {README}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
