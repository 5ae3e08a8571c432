"""The papers' claims as checks on our results: measured value, threshold, verdict.

Each claim of the replicated papers (see ``docs/papers.md``) becomes one row per setup with the
value we measured, the threshold it is held to, and a verdict: ``supported``, ``not supported``
or ``not run`` (the study or the setup is absent from this run, or there is too little to
measure, e.g. the spread across seeds of a single seed). A claim whose measurement is undefined
(a correlation of a constant series) is ``not supported`` and says why in ``note``.

Claims
------
Direct optimisation (main study, Mickus et al. §3, Figures 2-3; GLUE, appendix A, Figure 4 and
Table 3), per setup (encoder × data set), metrics as mean over seeds:

* ``silhouette_rises``  – silhouette at the last recorded step − at step 0  > 0
* ``isoscore_falls``    – IsoScore at the last recorded step − at step 0  < 0
* ``spearman_strongly_negative`` – Spearman rho(IsoScore, silhouette), all steps and seeds  < −0.5
* ``pearson_negative``  – Pearson r, same scope  < 0
* ``seeds_agree``       – largest std across seeds of the final IsoScore and silhouette  < 0.05

I-STAR (Rudman & Eickhoff 2024, Figures 5-6), per model × task, seed means:

* ``negative_lambda_lowers_isoscore`` – max over λ < 0 of IsoScore*(I-STAR, λ) − IsoScore*(baseline)  < 0
* ``negative_lambda_not_worse``       – best over λ < 0 of metric(I-STAR, λ) − metric(baseline)  ≥ 0

Cluster-based isotropy enhancement (Rajaee & Pilehvar 2021), per model × STS data set:

* ``cluster_based_raises_isotropy`` – I(W) after the cluster-based method / I(W) without  > 1
* ``cluster_based_raises_sts``      – Spearman ×100 with the method − without  > 0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = [
    "claim",
    "study",
    "setup",
    "statement",
    "measured",
    "threshold",
    "verdict",
    "paper",
    "evidence",
    "note",
]
SUPPORTED, NOT_SUPPORTED, NOT_RUN = "supported", "not supported", "not run"
SPEARMAN_LIMIT = -0.5
SEED_SPREAD_LIMIT = 0.05


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: what it says, the measured quantity's threshold, where it is stated."""

    name: str
    statement: str
    threshold: str
    holds: Callable[[float], bool]
    paper: str


def _below(limit: float) -> Callable[[float], bool]:
    return lambda value: value < limit


def _above(limit: float) -> Callable[[float], bool]:
    return lambda value: value > limit


def _at_least(limit: float) -> Callable[[float], bool]:
    return lambda value: value >= limit


OPTIMISATION_PAPER = {
    "main": {
        "curves": "Mickus et al. 2024, §3 and Figure 2",
        "correlation": "Mickus et al. 2024, §3 and Figure 3",
        "seeds": "Mickus et al. 2024, §3",
    },
    "glue": {
        "curves": "Mickus et al. 2024, appendix A, Figure 4",
        "correlation": "Mickus et al. 2024, appendix A, Table 3",
        "seeds": "Mickus et al. 2024, §3 / appendix A",
    },
}


def optimisation_claims(study: str) -> list[Claim]:
    paper = OPTIMISATION_PAPER.get(study, OPTIMISATION_PAPER["main"])
    return [
        Claim(
            "silhouette_rises",
            "silhouette rises over training (last step − step 0, mean over seeds)",
            "> 0",
            _above(0.0),
            paper["curves"],
        ),
        Claim(
            "isoscore_falls",
            "IsoScore falls over training (last step − step 0, mean over seeds)",
            "< 0",
            _below(0.0),
            paper["curves"],
        ),
        Claim(
            "spearman_strongly_negative",
            "Spearman rho between IsoScore and silhouette is strongly negative (all steps, all seeds)",
            f"< {SPEARMAN_LIMIT}",
            _below(SPEARMAN_LIMIT),
            paper["correlation"],
        ),
        Claim(
            "pearson_negative",
            "Pearson r between IsoScore and silhouette is negative (all steps, all seeds)",
            "< 0",
            _below(0.0),
            paper["correlation"],
        ),
        Claim(
            "seeds_agree",
            "the spread across seeds is negligible (largest std of final IsoScore, silhouette)",
            f"< {SEED_SPREAD_LIMIT}",
            _below(SEED_SPREAD_LIMIT),
            paper["seeds"],
        ),
    ]


ISTAR_CLAIMS = [
    Claim(
        "negative_lambda_lowers_isoscore",
        "I-STAR with negative λ gives lower IsoScore* than no regulariser (max over λ < 0 of the seed-mean difference)",
        "< 0",
        _below(0.0),
        "Rudman & Eickhoff 2024, Figure 5",
    ),
    Claim(
        "negative_lambda_not_worse",
        "I-STAR with negative λ performs at least as well as no regulariser (best λ < 0, seed means)",
        ">= 0",
        _at_least(0.0),
        "Rudman & Eickhoff 2024, Figure 6",
    ),
]

GEOMETRY_CLAIMS = [
    Claim(
        "cluster_based_raises_isotropy",
        "the cluster-based method raises isotropy I(W) over the raw embeddings (ratio)",
        "> 1",
        _above(1.0),
        "Rajaee & Pilehvar 2021, Table 1 (I(W))",
    ),
    Claim(
        "cluster_based_raises_sts",
        "the cluster-based method raises STS Spearman correlation (×100) over the raw embeddings",
        "> 0",
        _above(0.0),
        "Rajaee & Pilehvar 2021, Table 1",
    ),
]


def _row(
    claim: Claim,
    study: str,
    setup: str,
    measured: float | None,
    evidence: str,
    note: str = "",
    verdict: str | None = None,
) -> dict[str, Any]:
    if verdict is None:
        if measured is None or not math.isfinite(measured):
            verdict = NOT_SUPPORTED
            note = note or "measurement undefined"
        else:
            verdict = SUPPORTED if claim.holds(measured) else NOT_SUPPORTED
    return {
        "claim": claim.name,
        "study": study,
        "setup": setup,
        "statement": claim.statement,
        "measured": float(measured) if measured is not None else float("nan"),
        "threshold": claim.threshold,
        "verdict": verdict,
        "paper": claim.paper,
        "evidence": evidence,
        "note": note,
    }


def not_run_rows(
    claims: Sequence[Claim], study: str, reason: str, setup: str = "all"
) -> list[dict[str, Any]]:
    """One ``not run`` row per claim, when a study (or a setup) has no results in this run."""
    return [_row(c, study, setup, None, "", reason, verdict=NOT_RUN) for c in claims]


# ---------------------------------------------------------------------------------------------
# Direct optimisation (main study, GLUE)


def _endpoints(trace: pd.DataFrame, metric: str) -> tuple[float, float]:
    """The metric at the first and at the last recorded step of one run (NaN rows skipped)."""
    rows = trace.dropna(subset=[metric]).sort_values("step")
    if rows.empty:
        raise ValueError(f"run has no recorded {metric}: every value is NaN")
    return float(rows[metric].iloc[0]), float(rows[metric].iloc[-1])


def optimisation_rows(
    study: str,
    traces: pd.DataFrame,
    correlations: pd.DataFrame,
    *,
    trace_source: str = "",
    correlation_source: str = "",
) -> list[dict[str, Any]]:
    """The five optimisation claims for every setup (encoder × dataset) of one study.

    ``traces``: per-step rows with columns encoder, dataset, seed, step, isoscore, silhouette;
    ``correlations``: the study's correlation table (encoder, dataset, scope, pearson_r, spearman_rho).
    """
    needed = {"encoder", "dataset", "seed", "step", "isoscore", "silhouette"}
    if missing := needed - set(traces.columns):
        raise ValueError(f"traces lack columns {sorted(missing)}; found {list(traces.columns)}")
    needed_corr = {"encoder", "dataset", "scope", "pearson_r", "spearman_rho"}
    if missing := needed_corr - set(correlations.columns):
        raise ValueError(
            f"correlation table lacks columns {sorted(missing)}; found {list(correlations.columns)}"
        )
    claims = {c.name: c for c in optimisation_claims(study)}
    rows = []
    for (encoder, dataset), setup_traces in traces.groupby(["encoder", "dataset"], sort=True):
        setup = f"{encoder}/{dataset}"
        ends = {}
        for metric in ("silhouette", "isoscore"):
            per_seed = pd.DataFrame(
                [_endpoints(run, metric) for _, run in setup_traces.groupby("seed")],
                columns=["first", "last"],
            )
            ends[metric] = per_seed
        n_seeds = setup_traces["seed"].nunique()
        evidence = trace_source or f"results/{study}/{encoder}/{dataset}/seed*/trace.parquet"
        for metric, claim in (
            ("silhouette", claims["silhouette_rises"]),
            ("isoscore", claims["isoscore_falls"]),
        ):
            first, last = ends[metric]["first"].mean(), ends[metric]["last"].mean()
            rows.append(
                _row(
                    claim,
                    study,
                    setup,
                    last - first,
                    evidence,
                    f"{first:.4f} → {last:.4f} over {n_seeds} seed(s)",
                )
            )
        overall = correlations[
            (correlations["encoder"] == encoder)
            & (correlations["dataset"] == dataset)
            & (correlations["scope"] == "all")
        ]
        corr_evidence = correlation_source or f"results/{study}/correlations.csv"
        for column, claim in (
            ("spearman_rho", claims["spearman_strongly_negative"]),
            ("pearson_r", claims["pearson_negative"]),
        ):
            if overall.empty:
                rows.append(
                    _row(
                        claim,
                        study,
                        setup,
                        None,
                        corr_evidence,
                        "no 'all' row for this setup in the correlation table",
                        verdict=NOT_RUN,
                    )
                )
                continue
            value = float(overall[column].iloc[0])
            note = f"{int(overall['points'].iloc[0])} points" if "points" in overall else ""
            if not math.isfinite(value):
                note = "undefined: a constant series (see the correlation table)"
            rows.append(_row(claim, study, setup, value, corr_evidence, note))
        if n_seeds < 2:
            rows.append(
                _row(
                    claims["seeds_agree"],
                    study,
                    setup,
                    None,
                    evidence,
                    "one seed only: no spread to measure",
                    verdict=NOT_RUN,
                )
            )
        else:
            spread = max(ends[m]["last"].std(ddof=1) for m in ("silhouette", "isoscore"))
            rows.append(
                _row(claims["seeds_agree"], study, setup, spread, evidence, f"{n_seeds} seeds")
            )
    return rows


# ---------------------------------------------------------------------------------------------
# I-STAR


def istar_rows(
    runs: pd.DataFrame, *, source: str = "results/istar/runs.csv"
) -> list[dict[str, Any]]:
    """The two I-STAR claims per model × task, from runs.csv (one row per fine-tuning run)."""
    needed = {"model", "task", "regulariser", "lambda", "seed", "metric", "isoscore_star"}
    if missing := needed - set(runs.columns):
        raise ValueError(
            f"I-STAR runs table lacks columns {sorted(missing)}; found {list(runs.columns)}"
        )
    lowers, not_worse = ISTAR_CLAIMS
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=True):
        setup = f"{model}/{task}"
        baseline = group[group["regulariser"] == "none"]
        negative = group[(group["regulariser"] == "istar") & (group["lambda"].astype(float) < 0)]
        if baseline.empty or negative.empty:
            lacking = (
                "no baseline (regulariser none)" if baseline.empty else "no I-STAR run with λ < 0"
            )
            rows += not_run_rows(ISTAR_CLAIMS, "istar", lacking, setup)
            continue
        base_iso, base_metric = baseline["isoscore_star"].mean(), baseline["metric"].mean()
        per_lambda = negative.groupby(negative["lambda"].astype(float))[
            ["isoscore_star", "metric"]
        ].mean()
        worst = per_lambda["isoscore_star"].idxmax()
        rows.append(
            _row(
                lowers,
                "istar",
                setup,
                per_lambda["isoscore_star"].max() - base_iso,
                source,
                f"baseline {base_iso:.4f}; λ<0: "
                + ", ".join(f"{lam:g}: {v:.4f}" for lam, v in per_lambda["isoscore_star"].items())
                + f" (closest: λ={worst:g})",
            )
        )
        best = per_lambda["metric"].idxmax()
        rows.append(
            _row(
                not_worse,
                "istar",
                setup,
                per_lambda["metric"].max() - base_metric,
                source,
                f"baseline {base_metric:.4f}; best λ={best:g}: {per_lambda['metric'].max():.4f}",
            )
        )
    if not rows:
        rows = not_run_rows(ISTAR_CLAIMS, "istar", "runs.csv holds no runs")
    return rows


# ---------------------------------------------------------------------------------------------
# Cluster-based isotropy enhancement on STS


def geometry_rows(
    sts: pd.DataFrame, *, source: str = "results/geometry/sts.csv", method: str = "cluster-based"
) -> list[dict[str, Any]]:
    """The two Rajaee & Pilehvar claims per model × STS data set, from sts.csv."""
    needed = {"model", "dataset", "method", "spearman", "isotropy"}
    if missing := needed - set(sts.columns):
        raise ValueError(f"STS table lacks columns {sorted(missing)}; found {list(sts.columns)}")
    raises_iso, raises_sts = GEOMETRY_CLAIMS
    rows = []
    for (model, dataset), group in sts.groupby(["model", "dataset"], sort=True):
        setup = f"{model}/{dataset}"
        means = group.groupby("method")[["spearman", "isotropy"]].mean()
        if "none" not in means.index or method not in means.index:
            rows += not_run_rows(
                GEOMETRY_CLAIMS, "geometry", f"sts.csv lacks method 'none' or {method!r}", setup
            )
            continue
        before, after = means.loc["none"], means.loc[method]
        ratio = after["isotropy"] / before["isotropy"] if before["isotropy"] > 0 else float("nan")
        rows.append(
            _row(
                raises_iso,
                "geometry",
                setup,
                ratio,
                source,
                f"I(W) {before['isotropy']:.3g} → {after['isotropy']:.3g}",
            )
        )
        # sts.csv stores correlations ×100 (isotropy.geometry.evaluate_sts), as the paper reports them.
        rows.append(
            _row(
                raises_sts,
                "geometry",
                setup,
                after["spearman"] - before["spearman"],
                source,
                f"Spearman×100 {before['spearman']:.2f} → {after['spearman']:.2f}",
            )
        )
    if not rows:
        rows = not_run_rows(GEOMETRY_CLAIMS, "geometry", "sts.csv holds no rows")
    return rows


# ---------------------------------------------------------------------------------------------
# The table and its markdown


def claims_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    table = pd.DataFrame(list(rows), columns=COLUMNS)
    bad = set(table["verdict"]) - {SUPPORTED, NOT_SUPPORTED, NOT_RUN}
    if bad:
        raise ValueError(f"unknown verdicts {sorted(bad)}")
    return table


def _fmt(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{value:.4g}"


def claims_markdown(table: pd.DataFrame, title: str = "Claims check") -> str:
    """A short markdown summary: a tally per study and claim, then every row."""
    mark = {SUPPORTED: "✅ supported", NOT_SUPPORTED: "❌ not supported", NOT_RUN: "➖ not run"}
    lines = [
        f"# {title}",
        "",
        "Each claim of the replicated papers, checked on this run's results "
        "(`results/claims.csv` holds the same rows).",
        "",
    ]
    counts = table["verdict"].value_counts()
    lines.append(
        " · ".join(
            f"{mark[v]}: {int(counts.get(v, 0))}" for v in (SUPPORTED, NOT_SUPPORTED, NOT_RUN)
        )
    )
    lines += [
        "",
        "## By claim",
        "",
        "| study | claim | paper | supported | not supported | not run |",
        "|---|---|---|---|---|---|",
    ]
    for (study, claim), group in table.groupby(["study", "claim"], sort=False):
        tally = group["verdict"].value_counts()
        lines.append(
            f"| {study} | {claim} | {group['paper'].iloc[0]} | {int(tally.get(SUPPORTED, 0))} | {int(tally.get(NOT_SUPPORTED, 0))} | {int(tally.get(NOT_RUN, 0))} |"
        )
    lines += [
        "",
        "## Every check",
        "",
        "| study | setup | claim | measured | threshold | verdict | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples(index=False):
        note = str(row.note).replace("|", "\\|")
        lines.append(
            f"| {row.study} | {row.setup} | {row.claim} | {_fmt(row.measured)} | {row.threshold} | {mark[row.verdict]} | {note} |"
        )
    return "\n".join(lines) + "\n"


def check_results(
    *,
    traces: Mapping[str, Sequence[str]],
    correlations: Mapping[str, str],
    run_keys: Mapping[str, Sequence[Mapping[str, Any]]],
    istar_runs: str | None = None,
    geometry_sts: str | None = None,
) -> pd.DataFrame:
    """Every claim checked on the result files of one run.

    ``traces`` / ``correlations`` / ``run_keys``: per optimisation study (main, glue), its trace
    files, its correlation table and the key (encoder, dataset, seed) of each trace. A study
    missing from them, or a missing ``istar_runs`` / ``geometry_sts`` table, gives "not run" rows.
    """
    from isotropy.summaries import read_traces

    rows: list[dict[str, Any]] = []
    for study in ("main", "glue"):
        if study not in traces:
            rows += not_run_rows(
                optimisation_claims(study),
                study,
                f"the {study} study is not configured in this run",
            )
            continue
        keys = run_keys[study]
        if len(keys) != len(traces[study]):
            raise ValueError(f"{study}: {len(keys)} run keys for {len(traces[study])} traces")
        frame = read_traces(
            traces[study], [{k: v for k, v in key.items() if k != "seed"} for key in keys]
        )
        table = pd.read_csv(correlations[study])
        rows += optimisation_rows(study, frame, table, correlation_source=correlations[study])
    if istar_runs is None:
        rows += not_run_rows(
            ISTAR_CLAIMS, "istar", "the I-STAR study is not part of this run (config studies)"
        )
    else:
        rows += istar_rows(pd.read_csv(istar_runs), source=istar_runs)
    if geometry_sts is None:
        rows += not_run_rows(
            GEOMETRY_CLAIMS,
            "geometry",
            "results/geometry/sts.csv is not part of this run (make the geometry study first)",
        )
    else:
        rows += geometry_rows(pd.read_csv(geometry_sts), source=geometry_sts)
    return claims_table(rows)


# ---------------------------------------------------------------------------------------------
# Workflow helpers (rules/provenance.smk)

ISTAR_TABLE = "results/istar/runs.csv"
GEOMETRY_TABLE = "results/geometry/sts.csv"
CORRELATION_TABLES = {"main": "correlations", "glue": "table3"}


def configured_studies(config: Mapping[str, Any]) -> list[str]:
    """The studies this run builds: config ``studies`` (all four when absent) that have a section."""
    wanted = config.get("studies", ["main", "glue", "istar", "geometry"])
    return [study for study in wanted if config.get(study)]


def _optimisation_studies(config: Mapping[str, Any]) -> list[str]:
    from isotropy.studies import study_runs

    return [
        study
        for study in CORRELATION_TABLES
        if study in configured_studies(config) and study_runs(dict(config), study)
    ]


def _trace_files(config: Mapping[str, Any], study: str) -> list[str]:
    from isotropy.paths import optimisation_run_file
    from isotropy.studies import study_runs

    return [
        optimisation_run_file("trace.parquet", study, r["encoder"], r["dataset"], r["seed"])
        for r in study_runs(dict(config), study)
    ]


def workflow_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The named inputs of rule ``check_claims``: the result tables of the studies this run builds.

    A study counts when config ``studies`` lists it (see :func:`configured_studies`), so the
    claims always judge exactly what ``snakemake`` (rule all) made; the claims of a study left
    out are "not run". Absent istar/geometry sections are fine.
    """
    studies = configured_studies(config)
    inputs: dict[str, Any] = {}
    for study in _optimisation_studies(config):
        inputs[f"{study}_traces"] = _trace_files(config, study)
        inputs[f"{study}_correlations"] = f"results/{study}/{CORRELATION_TABLES[study]}.csv"
    if "istar" in studies:
        from isotropy.istar.grid import run_grid

        if run_grid(dict(config["istar"])):
            inputs["istar_runs"] = ISTAR_TABLE
    if "geometry" in studies:
        from isotropy.studies import geometry_targets

        if GEOMETRY_TABLE in geometry_targets(dict(config)):
            inputs["geometry_sts"] = GEOMETRY_TABLE
    return inputs


def workflow_run_keys(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per configured optimisation study, the key (encoder, dataset, seed) of each trace input."""
    from isotropy.studies import study_runs

    return {
        study: [dict(r) for r in study_runs(dict(config), study)]
        for study in _optimisation_studies(config)
    }
