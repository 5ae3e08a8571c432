"""Appendix A (GLUE) of Mickus et al. (2024) at its configured scale, committed
(``docs/data/glue_*``), and docs/glue-study.md rendered from it by the verdict code in force."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed import optimisation
from isotropy.committed.main import CORRELATIONS, verdict_words
from isotropy.committed.optimisation import seed_ends, seeds_vary, signed
from isotropy.committed.record import CommittedRun, Page
from isotropy.io import checked_record
from isotropy.statistics import TREND_SESOI, TREND_SOURCE
from isotropy.verdicts.claims import verdict_cells
from isotropy.workflow.targets import every_nth_update

DOC = Path("docs/glue-study.md")
PACKAGES = ("torch", "transformers", "sentence-transformers")  # the versions the page names


def _table3(verdicts: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """Per setup: each correlation pooled over seeds, per seed, and its verdict."""
    rows = verdicts[verdicts["quantity"].isin(list(CORRELATIONS)) & verdicts["our_value"].notna()]
    shown = pd.DataFrame({"setup": sorted(set(rows["setup"]))}).set_index("setup")
    for quantity, name in CORRELATIONS.items():
        ours = rows[rows["quantity"] == quantity].sort_values("setup")  # as ``shown``
        shown[f"{name} (pooled; per seed)"] = [
            f"{signed(r['our_value'], 3)}; {r['note'].removeprefix('per seed: ')}".replace("-", "−")
            for _, r in ours.iterrows()
        ]
        shown[f"{name}: verdict"] = [verdict_words(r, traces) for _, r in ours.iterrows()]
    return shown.reset_index()


def _table2(verdicts: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The counts measured beside the printed ones, and those not measured, by why."""
    counts = verdicts[verdicts["quantity"].isin(["items", "parameters"])]
    ran = counts[counts["our_value"].notna()]
    named = {"setup": "setup (ours)", "quantity": "count", "printed": "paper"}
    ours = ran["our_value"].map(lambda v: f"{int(v):,}")
    shown = ran.assign(ours=ours, verdict="**" + ran["verdict"] + "**")
    shown = shown[[*named, "ours", "verdict"]].rename(columns=named)
    absent = counts[counts["our_value"].isna()]
    why = absent["note"].astype(str).str.partition("; ")[2].replace("", "not configured here")
    return shown, [f"- {n}: {reason}" for reason, n in why.value_counts(sort=False).items()]


def parts(root: Path) -> list[Any]:
    record = checked_record(root, optimisation.checksums("glue").path)
    run, glue = record["run"], record["config"]["glue"]
    encoders, models = record["config"]["encoders"], record["config"]["models"]
    named = [f"{e} ({models[encoders[e]['model']]['model']})" for e in glue["encoders"]]
    packages = record["packages"] or {}
    versions = ", ".join(f"{p} {packages[p]}" for p in PACKAGES if p in packages)
    traces = optimisation.committed_tables("glue", root)["glue_traces"]
    verdicts = optimisation.committed_claims("glue", root, claims=False)
    counts, absent = _table2(verdicts)
    claims = optimisation.committed_claims("glue", root)
    claims = claims.assign(cell=verdict_cells(claims))  # a row per setup, a column per claim
    by_setup = claims.pivot(index="setup", columns="claim", values="cell")
    return [
        "Mickus et al. (2024), appendix A: §3's direct optimisation on GLUE training splits; every "
        "verdict from the committed run by the main study's code ([verdicts.md](verdicts.md)).\n",
        f"Run: {record['what']}; code {record['code_commit'][:12]}, device {record['device'][0]}, "
        f"{versions or 'package versions in the record'}; {run.get('started', '?')} to "
        f"{run.get('ended', '?')} UTC, {run.get('wall', '?')} wall against "
        f"{run.get('printed', '?')} printed before it started ({run.get('machine', '?')}).\n",
        f"Settings: encoders {', '.join(named)}; tasks {', '.join(glue['tasks'])}; "
        f"{glue.get('updates')} updates at learning rate {glue.get('learning_rate')}, metrics "
        f"after {every_nth_update(glue.get('metric_stride') or 1)} on a sample of "
        f"{glue.get('metric_sample_size')} items; seeds "
        f"{', '.join(map(str, glue.get('seeds', [])))}.\n",
        "## Table 3's counterpart: IsoScore against the silhouette\n",
        "The table's values are lost from our copy of the paper; its text says every run's "
        "correlation is strongly negative (our reading: below −0.5 in every seed).\n",
        _table3(verdicts, traces),
        "## Figure 4's counterpart: IsoScore and the silhouette over training\n",
        "Each seed's first and last recorded values (once where all seeds print the same; every "
        "step: `docs/data/glue_traces.csv.gz`; the run's figure: `results/glue/figure4.png`), then "
        "the claims judged over seeds (Holm over the study's family; trends beyond "
        f"{TREND_SESOI:g}, {TREND_SOURCE}; seeds vary {seeds_vary('glue', traces)}):\n",
        seed_ends(traces).drop(columns="steps recorded"),
        by_setup[list(dict.fromkeys(claims["claim"]))].reset_index(),
        "## Table 2's counterpart: items and parameters\n",
        counts,
        "Printed numbers without a counterpart here, by why:\n",
        *absent,
    ]


COMMITTED = CommittedRun(
    name="glue",
    records=(optimisation.checksums("glue", claims=True),),
    pages=(Page(DOC, parts, whole=("glue", "Appendix A (GLUE) at its configured scale")),),
    copy=functools.partial(optimisation.copy, "glue"),
    sources="results/glue (a finished glue_study)",
    effective_config="logs/effective-config/glue_study.yaml",
)
