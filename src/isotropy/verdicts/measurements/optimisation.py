"""The direct optimisation studies (the main study and GLUE): counts, correlations and the
traces' ends, per seed and pooled."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeAlias

import pandas as pd
from scipy import stats

from isotropy import paths
from isotropy.configuration.optimisation import PROTOCOL_KEYS
from isotropy.metrics import registry
from isotropy.standins import StandIns, encoder_paper_name
from isotropy.statistics import TREND_SESOI, TREND_SOURCE
from isotropy.verdicts.claims import Claim
from isotropy.verdicts.equivalence import series_moments
from isotropy.verdicts.measurements import (
    SEED_SPREAD_LIMIT,
    Config,
    Row,
    at_setup,
    joined,
    spread_test,
)

# each correlation column of the tables: its name in words, how it is computed
CORRELATIONS = {
    "pearson_r": ("Pearson r", stats.pearsonr),
    "spearman_rho": ("Spearman ρ", stats.spearmanr),
}
METRICS = ("silhouette", "isoscore")  # whose ends over a run are measured
Table: TypeAlias = pd.DataFrame | None  # an input table, None where this run has none


def _setup(study: str, encoder: str, dataset: str, config: Config, stand: StandIns, **fields):
    paper = dataset if study == "main" else f"{encoder_paper_name(config, encoder)}/{dataset}"
    kind = ((config.get("encoders") or {}).get(encoder) or {}).get("kind")
    labels = {"pos": stand.pos_labels, "supersense": stand.supersense_labels}.get(dataset, "")
    words = stand.word_vectors if kind == "word-vectors" else ""
    stand_in = joined(words, labels) if study == "main" else ""
    return at_setup(study, f"{encoder}/{dataset}", paper, stand_in=stand_in, **fields)


def table_names(study: str) -> tuple[str, ...]:
    tables = (paths.COUNT_TABLES[study], paths.CORRELATION_TABLES[study], "traces")
    return tuple(f"{study}_{table}" for table in tables)


ITEMS = "labelled items after dropping out-of-vocabulary words"
PARAMETERS = "unique rows × dim + classifier weights (+ bias)"


def optimisation_measurements(
    study: str, counts: Table, correlations: Table, traces: Table, config: Config, stand: StandIns
) -> list[Row]:
    """Counts, correlations and the curves' endpoints of one direct-optimisation study."""
    rows: list[Row] = []
    setup = partial(_setup, study, config=config, stand=stand)
    section = config.get(study) or {}  # the run's protocol, stated on its correlations and ends
    protocol = "; ".join(f"{k}={section[k]}" for k in PROTOCOL_KEYS if section.get(k) is not None)
    if counts is not None:  # Tables 1 and 2
        evidence = paths.study_file(f"{paths.COUNT_TABLES[study]}.csv", study)
        for _, r in counts.iterrows():
            at = setup(r["encoder"], r["dataset"], evidence=evidence)
            items, dim = f"{int(r['rows'])} unique rows", f"dim {int(r['dim'])}"
            rows.append(at("items", value=int(r["items"]), convention=ITEMS, note=items))
            rows.append(at("parameters", value=int(r["params"]), convention=PARAMETERS, note=dim))
    if correlations is not None:
        rows += _correlation_measurements(study, correlations, traces, setup, protocol)
    if traces is not None:
        rows += _trace_measurements(study, traces, setup, protocol)
    return rows


def per_seed_correlations(traces: pd.DataFrame) -> dict[tuple[str, str, str], tuple[float, ...]]:
    """(encoder, dataset, column) → each seed's Pearson r / Spearman ρ of IsoScore against
    silhouette over its recorded steps; (encoder, dataset, 'moments') → each seed's sums."""
    x, y = registry.with_role("isotropy").name, registry.with_role("clusters").name
    out: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    runs = traces.dropna(subset=[x, y]).groupby(["encoder", "dataset", "seed"], sort=True)
    for (encoder, dataset, _), run in runs:
        defined = len(run) >= 3 and run[x].nunique() > 1 and run[y].nunique() > 1
        for column, (_, method) in CORRELATIONS.items():
            value = float(method(run[x], run[y]).statistic) if defined else math.nan
            out[encoder, dataset, column].append(value)
        out[encoder, dataset, "moments"].append(series_moments(run[x], run[y]))
    return {key: tuple(values) for key, values in out.items()}


def _correlation_measurements(
    study: str, table: pd.DataFrame, traces: Table, setup: Callable, protocol: str
) -> list[Row]:
    """Pearson r and Spearman ρ of IsoScore against silhouette per setup, seeds pooled, with
    each seed's value (from the traces where given, else the table's seed rows)."""
    rows: list[Row] = []
    evidence = paths.study_file(f"{paths.CORRELATION_TABLES[study]}.csv", study)
    from_traces = {} if traces is None else per_seed_correlations(traces)
    for (encoder, dataset), group in table.groupby(["encoder", "dataset"], sort=True):
        overall = group[group["scope"] == "all"]
        at = setup(encoder, dataset, evidence=evidence)
        if overall.empty:
            missing = "no 'all' row for this setup in the correlation table"
            rows += [at(column, missing=missing) for column in CORRELATIONS]
            continue
        seed_rows = group[group["scope"].astype(str).str.startswith("seed")]
        points = int(overall["points"].iloc[0]) if "points" in overall else None
        one_seed = "seeds" in overall and int(overall["seeds"].iloc[0]) == 1
        at = partial(at, n=points, protocol=protocol)
        moments = {"pearson_r": from_traces.get((encoder, dataset, "moments"))}
        for column, (name, _) in CORRELATIONS.items():
            value = float(overall[column].iloc[0])
            tabled = tuple(seed_rows[column].astype(float)) or ((value,) if one_seed else ())
            per_seed = from_traces.get((encoder, dataset, column), tabled)  # never empty there
            listed = f"per seed: {', '.join(f'{v:+.3f}' for v in per_seed)}" if per_seed else ""
            convention = POOLED.format(name, points)
            note = joined("" if math.isfinite(value) else CONSTANT, listed)
            seeded = {"seeds": len(per_seed), "per_seed": per_seed, "moments": moments.get(column)}
            rows.append(at(column, value=value, convention=convention, note=note, **seeded))
    return rows


POOLED = "{} of IsoScore vs silhouette, all recorded steps of all seeds pooled ({} points)"
CONSTANT = "undefined: a constant series (see the correlation table)"


def _trace_measurements(study: str, traces: pd.DataFrame, setup: Callable, protocol: str):
    """How far silhouette and IsoScore move over a run, and how much the seeds spread."""
    rows: list[Row] = []
    for (encoder, dataset), group in traces.groupby(["encoder", "dataset"], sort=True):
        evidence = paths.optimisation_run_file("trace.parquet", study, encoder, dataset, "*")
        seeds = group["seed"].nunique()
        at = setup(encoder, dataset, seeds=seeds, evidence=evidence, protocol=protocol)
        # per seed (rows) and metric: the value at the first and at the last recorded step
        ends = group.sort_values("step").groupby("seed")[list(METRICS)].agg(["first", "last"])
        for metric in METRICS:
            if ends[metric].isna().any(axis=None):
                raise ValueError(f"run has no recorded {metric}: every value is NaN")
            first, last = ends[metric, "first"].mean(), ends[metric, "last"].mean()
            change = ends[metric, "last"] - ends[metric, "first"]
            listed = ", ".join(f"{v:+.4f}" for v in change)
            note = f"{first:.4f} → {last:.4f} over {seeds} seed(s); per seed: {listed}"
            rows.append(at(f"{metric}_change", value=last - first, per_seed=change, note=note))
        rows.append(_spread_row({m: ends[m] for m in METRICS}, seeds, at))
    return rows


def _spread_row(ends: Mapping[str, pd.DataFrame], seeds: int, at: Callable[..., Row]) -> Row:
    """The seeds' spread where they end, relative to how far they move."""
    if seeds < 2:
        missing = "one seed only: no spread to measure"
        return at("seed_spread", stand_in="", protocol="", missing=missing)
    change = {m: ends[m]["last"] - ends[m]["first"] for m in METRICS}
    spread = {m: ends[m]["last"].std(ddof=1) for m in METRICS}
    ratios = {m: spread[m] / abs(change[m].mean()) for m in METRICS}
    worst = max(ratios, key=lambda m: ratios[m])
    note = f"{seeds} seeds, largest for {worst}; " + "; ".join(
        f"{m}: std of final {spread[m]:.4g} / |mean change| {abs(change[m].mean()):.4g}"
        for m in METRICS
    )
    # negligible for both metrics (intersection-union), or for neither (Bonferroni)
    below, above = zip(*(spread_test(ends[m]["last"], change[m]) for m in METRICS))
    p_less, p_greater = max(below), min(1.0, len(above) * min(above))
    return at("seed_spread", value=ratios[worst], p_less=p_less, p_greater=p_greater, note=note)


SEEDS_VARY = "only the classifier's start and any metric sample: the same starting embeddings"
# Each claim's statement ({rho}, {r}, {why}, {limit}: the study's levels)
STATEMENTS = {
    "silhouette_rises": "silhouette rises over training (last step − step 0) in every seed",
    "isoscore_falls": "IsoScore falls over training (last step − step 0) in every seed",
    "spearman_strongly_negative": "Spearman ρ between IsoScore and silhouette is below {rho:g} "
    "in every seed",
    "pearson_negative": "Pearson r between IsoScore and silhouette is below {r:g} in every seed "
    "({why})",
    "seeds_agree": "the spread across seeds is negligible against the change (std of the final "
    "IsoScore and silhouette below {limit:g} of its mean change)",
}
SPREAD_TEST = (
    "confidence bounds of std / |mean change| (chi-square, t) over {seeds} seeds, both metrics"
)


def optimisation_claims(
    study: str, curves: str, spearman: str, seeds: str, rho: float, r: float, why: str, pearson: str
) -> tuple[Claim, ...]:
    """The five claims of one optimisation study; ``r``: the Pearson level, ``why``: its source,
    ``pearson``: the paper's Pearson statement (``spearman``: its Spearman one)."""

    def claim(name: str, quantity: str, bound: str, paper: str, rule: str, **more: Any) -> Claim:
        said = STATEMENTS[name].format(rho=rho, r=r, why=why, limit=SEED_SPREAD_LIMIT)
        return Claim(name, study, quantity, said, bound, paper, rule, seeds_vary=SEEDS_VARY, **more)

    trend = partial(claim, sesoi=TREND_SESOI, sesoi_source=TREND_SOURCE)
    bound = partial(claim, sesoi=0.0, sesoi_source="the bound's")
    spread = f"seeds_below:{SEED_SPREAD_LIMIT}"
    return (
        trend("silhouette_rises", "silhouette_change", "above:0", curves, "direction"),
        trend("isoscore_falls", "isoscore_change", "below:0", curves, "direction"),
        bound("spearman_strongly_negative", "spearman_rho", f"below:{rho}", spearman, "every_run"),
        bound("pearson_negative", "pearson_r", f"below:{r}", pearson, "direction"),
        bound("seeds_agree", "seed_spread", spread, seeds, "seeds", test=SPREAD_TEST),
    )


MAIN_CLAIMS = optimisation_claims(
    "main",
    "Mickus et al. 2024, §3 and Figure 2",
    "Mickus et al. 2024, §3.2 (ρ always below −0.998)",
    "Mickus et al. 2024, §3",
    -0.998,
    -0.8,
    "the paper's own level: its weakest printed r, −0.808, to one decimal",
    "Mickus et al. 2024, §3.2 (Pearson r from −0.808 to −0.978)",
)
