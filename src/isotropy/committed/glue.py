"""Appendix A (GLUE) of Mickus et al. (2024) at its configured scale, committed
(``docs/data/glue_*``: :mod:`isotropy.committed.optimisation`, as the main study's run is), and
docs/glue-study.md rendered from it: Table 3's and Figure 4's counterparts and Table 2's counts
beside the paper's printed numbers (config/published_values.csv), and the study's claims, each
judged now by the verdict code of the main study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed import optimisation
from isotropy.committed.main import verdict_words
from isotropy.committed.optimisation import seed_ends, signed
from isotropy.committed.record import COMMAND, CommittedRun, Page
from isotropy.io import checked_record, markdown_table
from isotropy.verdicts.claims import verdict_cell

DOC = Path("docs/glue-study.md")
CORRELATIONS = {"pearson_r": "Pearson r", "spearman_rho": "Spearman ρ"}
COUNTS = ("items", "parameters")


def _run_lines(record: dict[str, Any]) -> list[str]:
    """Who ran it, on what, with which settings, and how long it took."""
    run, glue = record["run"], record["config"]["glue"]
    encoders = record["config"].get("encoders") or {}
    models = record["config"].get("models") or {}
    named = [
        f"{e} ({models.get(encoders.get(e, {}).get('model'), {}).get('model', e)})"
        for e in glue["encoders"]
    ]
    packages = record.get("packages") or {}
    versions = ", ".join(
        f"{p} {packages[p]}"
        for p in ("torch", "transformers", "sentence-transformers")
        if p in packages
    )
    device = record.get("device") or ["?"]
    stride = glue.get("metric_stride")
    return [
        f"Run: {record['what']}; code {record['code_commit'][:12]}, device {device[0]}, "
        f"{versions or 'package versions in the record'}; {run.get('started', '?')} to "
        f"{run.get('ended', '?')} UTC, {run.get('wall', '?')} wall against "
        f"{run.get('printed', '?')} printed before it started ({run.get('machine', '?')}).",
        "",
        f"Settings: encoders {', '.join(named)}; tasks {', '.join(glue['tasks'])}; "
        f"{glue.get('updates')} updates at learning rate {glue.get('learning_rate')}, metrics "
        f"after every {'update' if stride in (1, None) else f'{stride}th update'} on a sample of "
        f"{glue.get('metric_sample_size')} items; seeds "
        f"{', '.join(map(str, glue.get('seeds', [])))}.",
    ]


def _table3(verdicts: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    rows = verdicts[verdicts["quantity"].isin(list(CORRELATIONS)) & verdicts["our_value"].notna()]
    return pd.DataFrame(
        {
            "setup (ours)": rows["setup"],
            "statistic": rows["quantity"].map(CORRELATIONS),
            "paper": rows["printed"].where(rows["printed"] != "", "not printed"),
            "ours (seeds pooled)": [signed(v) for v in rows["our_value"]],
            "per seed": rows["note"].str.removeprefix("per seed: "),
            "verdict": [verdict_words(row, traces) for _, row in rows.iterrows()],
            "the rule as applied": rows["tolerance"].str.replace("\n", " "),
        }
    )


def _table2(verdicts: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The counts this run measured beside the printed ones, and what it did not run, by why."""
    counts = verdicts[verdicts["quantity"].isin(COUNTS)]
    ran = counts[counts["our_value"].notna()]
    shown = pd.DataFrame(
        {
            "setup (ours)": ran["setup"],
            "count": ran["quantity"],
            "paper row": ran["source"],
            "paper": ran["printed"],
            "ours": [f"{int(v):,}" for v in ran["our_value"]],
            "verdict": "**" + ran["verdict"] + "**",
        }
    )
    absent: dict[str, list[str]] = {}
    for _, row in counts[counts["our_value"].isna()].iterrows():
        why = str(row["note"]).partition("; ")[2] or "not in this run's configuration"
        absent.setdefault(why, []).append(f"{row['setup']} {row['quantity']}")
    return shown, [f"{why}: {', '.join(found)}." for why, found in absent.items()]


def _claims(claims: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "setup": claims["setup"],
            "claim": "`" + claims["claim"] + "`",
            "measured": [signed(v) for v in claims["measured"]],
            "verdict": [verdict_cell(v, n) for v, n in zip(claims["verdict"], claims["note"])],
            "paper": claims["paper"],
            "note": claims["note"].fillna(""),
        }
    )


def page(root: Path = Path(".")) -> str:
    """docs/glue-study.md as the committed run renders it."""
    record = checked_record(root, optimisation.run_file("glue"))
    traces = optimisation.committed_tables("glue", root)["glue_traces"]
    verdicts = optimisation.verdicts("glue", root)
    counts, absent = _table2(verdicts)
    lines = [
        "# Appendix A (GLUE) at its configured scale",
        "",
        f"<!-- generated by `{COMMAND} glue` from docs/data/glue_*; do not edit by hand -->",
        "",
        "Mickus et al. (2024), appendix A, repeat §3's direct optimisation on GLUE training "
        "splits: Table 2's counts, Table 3's correlations of IsoScore with the silhouette, Figure "
        "4's curves. The run is committed under `docs/data/glue_*` with its record; every verdict "
        "below is computed again from it by the verdict code of the main study "
        "([verdicts.md](verdicts.md)): the paper comparison of `config/published_values.csv` and "
        "the study's claims.",
        "",
        *_run_lines(record),
        "",
        "## Table 3's counterpart: IsoScore against the silhouette",
        "",
        "The table's values are lost from our copy of the paper; its text says every run's "
        "correlation is strongly negative (our reading: below −0.5 in every seed).",
        "",
        markdown_table(_table3(verdicts, traces)),
        "## Figure 4's counterpart: IsoScore and the silhouette over training",
        "",
        "Each seed's first and last recorded values (every recorded step: "
        "`docs/data/glue_traces.csv.gz`; the run's own figure: `results/glue/figure4.png`):",
        "",
        markdown_table(seed_ends(traces)),
        "The study's claims (Figure 4's directions, Table 3's bound, the seeds' spread), judged "
        "over seeds with Holm over the study's family:",
        "",
        markdown_table(_claims(optimisation.committed_claims("glue", root))),
        "## Table 2's counterpart: items and parameters",
        "",
        markdown_table(counts),
        "Printed numbers without a counterpart in this run, by why:",
        "",
        *(f"- {line}" for line in absent),
    ]
    return "\n".join(lines).rstrip() + "\n"


def copy(root: Path, sources: list[Path], facts: dict[str, Any], config: Path, into) -> None:
    (results,) = sources
    optimisation.write_data("glue", results, config, facts, root, claims=True)


COMMITTED = CommittedRun(
    name="glue",
    records=(optimisation.checksums("glue", claims=True),),
    pages=(Page(DOC, page),),
    copy=copy,
    sources="results/glue (a finished glue_study)",
    effective_config="logs/effective-config/glue_study.yaml",
)
