"""The main study's run at the paper's protocol and its repeat on a GPU, committed, and
docs/main-study.md's table and the README's headline lines rendered from them."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed import optimisation
from isotropy.committed import record as committed
from isotropy.committed.optimisation import seed_ends, seeds_vary, signed
from isotropy.io import checked_record
from isotropy.metrics import registry
from isotropy.statistics import AGREES, CONSISTENT, TREND_SESOI, TREND_SOURCE
from isotropy.summaries import correlation_table
from isotropy.verdicts.tolerances import NEAR_GUARANTEED, near_guaranteed
from isotropy.workflow.targets import every_nth_update

RUN = optimisation.checksums("main").path
DOC = Path("docs/main-study.md")
# The committed run's §3.2 verdicts, for the report to show beside a run's own (rule
# copy_committed_verdicts copies it into the results folder).
VERDICTS = committed.DATA / "main_verdicts.csv"
README = Path("README.md")
# The comparison rows this page reports: §3.2's correlations of IsoScore with the silhouette.
CORRELATIONS = {"pearson_r": "Pearson r", "spearman_rho": "Spearman ρ"}
TRENDS = ("silhouette_rises", "isoscore_falls", "seeds_agree")
# The same runs repeated on one H100, compared with the committed CPU run step by step.
H100_TRACES = committed.DATA / "main_traces_h100.csv.gz"
H100_RUN = committed.DATA / "main_h100_run.json"
VALUES = list(registry.trace_columns())  # loss, accuracy, then every registered metric


def verdicts(root: str | os.PathLike = ".", claims: bool = False) -> pd.DataFrame:
    """§3.2's comparison rows judged now, on the committed run, by the verdict code in force;
    with ``claims``, §3's trends (in the main study's one family of claims)."""
    table = optimisation.committed_claims("main", root, claims)
    column, kept = ("claim", TRENDS) if claims else ("quantity", list(CORRELATIONS))
    return table[table[column].isin(kept)].reset_index(drop=True)


def verdict_words(row: pd.Series, traces: pd.DataFrame) -> str:
    """The verdict with an equivalence row's margin on D = paper − ours (the printed value's
    rounding included), or what monotone traces guarantee a Spearman ρ row by themselves."""
    words = f"**{row['verdict']}**"
    low, high = row.get("band_low"), row.get("band_high")
    if pd.notna(low) and pd.notna(high):
        unit = {"pearson_r": "r"}.get(row["quantity"], row["quantity"])
        range_ = f"{signed(low, 3)} to {signed(high, 3)} in {unit}"
        if row["verdict"] == AGREES:
            return f"{words} within {range_} (D = paper − ours)"
        return f"{words} (margin {range_}, D = paper − ours)"
    if row["quantity"] == "spearman_rho" and row["verdict"] == CONSISTENT:
        return f"{words} ({_monotone_words(traces, row['setup'])})"
    return f"{words} ({NEAR_GUARANTEED})" if near_guaranteed(row) else words


def _monotone_words(traces: pd.DataFrame, setup: str) -> str:
    """How near to guaranteed a ρ near ±1 is (±1 for any two strictly monotone series): each
    series' updates against its own trend, in the seed with most."""
    runs = traces[traces["encoder"] + "/" + traces["dataset"] == setup].sort_values("step")
    by_seed = runs.groupby("seed")[["isoscore", "silhouette"]]
    trend = by_seed.transform(lambda run: run.iloc[-1] - run.iloc[0])
    against = (by_seed.diff() * trend < 0).groupby(runs["seed"]).sum().max()
    steps = by_seed.size().iloc[-1] - 1
    if not against.any():  # the words every page gives the row, then why
        return f"{NEAR_GUARANTEED}; both series are strictly monotone in every seed"
    iso, sil = against
    return (
        f"{NEAR_GUARANTEED}; in the worst seed IsoScore goes against its trend "
        f"at {iso} of {steps} updates, the silhouette at {sil}"
    )


def judged_table(root: str | os.PathLike = ".") -> pd.DataFrame:
    """Each §3.2 row judged on the committed run, with the paper's row and the rule as applied
    (the page's; the README drops both)."""
    table = verdicts(root)
    traces = optimisation.committed_tables("main", root)["main_traces"]
    return pd.DataFrame(
        {
            "setup (ours)": table["setup"],
            "statistic": table["quantity"].map(CORRELATIONS),
            "paper row": table["paper"] + ", " + table["source"],
            "paper": [signed(v, 3) for v in table["paper_value"]],
            "ours (seeds pooled)": table["our_value"].map(signed),
            "D = paper − ours": (table["paper_value"] - table["our_value"]).map(signed),
            "verdict": [verdict_words(row, traces) for _, row in table.iterrows()],
            "the rule as applied": table["tolerance"].fillna("").str.replace("\n", " "),
        }
    )


def doc_parts(root: str | os.PathLike = ".") -> list[Any]:
    record = checked_record(root, RUN)
    h100, other = committed.committed_files(root, H100_RUN, H100_TRACES)
    traces = optimisation.committed_tables("main", root)["main_traces"]
    table = device_differences(traces, other)
    device = table.assign(setup=table["encoder"] + "/" + table["dataset"])[["setup", "steps"]]
    for value, name in zip(VALUES, ("loss", "accuracy", "IsoScore", "silhouette")):
        device[f"max Δ {name}"] = table[value].map("{:.1e}".format)
    for value, name in CORRELATIONS.items():
        cells = zip(table[f"{value}_cpu"], table[f"{value}_other"])
        device[f"{name}: CPU / GPU"] = [f"{a:.6f} / {b:.6f}" for a, b in cells]
    trends, run = verdicts(root, claims=True), record["run"]
    return [
        f"Run: {record['what']}, code {record['code_commit'][:12]}, {run.get('machine', '')}; "
        f"{run.get('started', '?')} to {run.get('ended', '?')} UTC, {run.get('wall', '?')} wall "
        f"against {run.get('printed', '?')} printed before it started.",
        f"Settings: {_protocol(record)}.\n",
        judged_table(root),
        "§3's trends judged on this run by the claims page's code (one Holm family with the "
        f"study's other claims; last step − step 0 beyond {TREND_SESOI:g}, {TREND_SOURCE}; "
        "`seeds_agree`: the larger std / |mean change| below 0.05; the seeds vary "
        f"{seeds_vary('main', traces)}):\n",
        trends[["claim", "setup", "measured", "verdict"]]
        .assign(
            claim="`" + trends["claim"] + "`",
            measured=trends["measured"].map(signed),
            verdict="**" + trends["verdict"] + "**",
        )
        .rename(columns={"measured": "measured (seeds' mean)"}),
        "Each seed's ends (one value where every seed prints the same, else each in seed order):\n",
        seed_ends(traces),
        f"The same runs on another device: {h100['device']}, {h100['date']}, "
        f"{h100['wall_seconds_total']:.0f} s for all {len(h100['wall_seconds_per_run'])} runs "
        f"({H100_TRACES.as_posix()}; {H100_RUN.as_posix()}). Largest difference over all "
        "recorded steps and seeds; each device's pooled correlations:\n",
        device,
    ]


def device_differences(cpu: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per setup: the largest |other − cpu| of each value, the steps matched, and each side's
    pooled r and ρ. A step on one side only is refused: it would compare less than it claims."""
    by = ["encoder", "dataset"]
    merged = cpu.merge(
        other, "outer", [*by, "seed", "step"], suffixes=("_cpu", "_other"), indicator=True
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
    largest = merged.groupby(by, sort=False)[VALUES].max()
    largest["steps"] = merged.groupby(by, sort=False).size()
    for name, traces in (("cpu", cpu), ("other", other)):
        table = correlation_table(traces, by)
        table = table[table["scope"] == "all"].set_index(by)[list(CORRELATIONS)]
        largest = largest.join(table.add_suffix(f"_{name}"))
    return largest.reset_index()


def _protocol(record: dict[str, Any]) -> str:
    """The committed run's seeds, updates and metric stride, in words."""
    main = record["config"].get("main", {})
    return (
        f"{len(main.get('seeds', []))} seeds, {main.get('updates')} updates, metrics after "
        f"{every_nth_update(main.get('metric_stride') or 1)}"
    )


def readme_parts(root: str | os.PathLike = ".") -> list[Any]:
    """The README's headline: each §3.2 row of the committed run with its verdict."""
    record = checked_record(root, RUN)
    run = record["run"]
    return [
        f"What §3.2 of Mickus et al. (2024) replicates, judged on the committed `make run` "
        f"({_protocol(record)}; [docs/main-study.md](docs/main-study.md)):\n",
        judged_table(root).drop(columns=["paper row", "the rule as applied"]),
        f"The run took {run.get('wall', '?')} on {run.get('machine', '?')}, against "
        f"{run.get('printed', '?')} printed by `make run` before it started.\n",
    ]


def committed_verdicts(root: str | os.PathLike = ".") -> str:
    """:data:`VERDICTS`: each §3.2 row's values and verdict, and in ``run`` what made them."""
    record, table = checked_record(root, RUN), verdicts(root)
    run = (
        f"the committed make run (code {record['code_commit'][:12]}; {_protocol(record)}; "
        f"{RUN.as_posix()})"
    )
    columns = ["setup", "quantity", "paper_value", "our_value", "verdict"]
    return table[columns].assign(run=run).to_csv(index=False, float_format="%.6g")


COMMITTED = committed.CommittedRun(
    name="main",
    records=(optimisation.checksums("main"), committed.Checksums(H100_RUN, (H100_TRACES,))),
    pages=(
        committed.Page(DOC, doc_parts, committed.page_markers("headline table")),
        committed.Page(README, readme_parts, committed.page_markers("headline lines")),
        committed.Page(VERDICTS, lambda root: [committed_verdicts(root)]),
    ),
    copy=functools.partial(optimisation.copy, "main"),
    sources="results/main (a finished `make run`)",
    effective_config="logs/effective-config/main_study.yaml",
)
