"""Every quantity the two pages judge, measured once from this run's result tables.

:func:`measure` turns the result tables into one long table, one row per quantity × setup:
``value`` (NaN with ``missing`` saying why when it cannot be measured), ``spread`` (standard
deviation across seeds, NaN for one seed), ``per_seed`` (each seed's value, where the verdict
needs them: correlations, LID, STS), ``seed_free`` (True where no seed changes the value),
``p_less`` / ``p_greater`` (raw one-sided p-values of a seed test; the pages adjust them),
``moments`` (each seed's sums for a pooled correlation), ``protocol`` (the run's settings the
numbers depend on), ``n`` (points it was measured on), ``paper_setup``
(the paper's name of the setup, which :mod:`isotropy.verdicts.comparison` joins on), unit,
convention, stand-in, evidence (the file) and a note. Both the claims page
(:mod:`isotropy.verdicts.claims`) and the comparison with the papers read this table only.
The geometry study's quantities (Cai et al.; Rajaee & Pilehvar): LID with n, k and the
per-type cap, the cluster-adjusted S_inter, STS correlations and I(W) per method. Cai et al.'s
Table 3 is cosine LID (their slides: "A comparison of LIDs (using cosine similarity)"), so
``lid_cosine`` is the cosine estimate; the Euclidean one on their code's squared-distance scale
(their Figure 9) is stated in the note.

Rules ``check_claims`` and ``compare_with_papers`` (rules/provenance.smk): loading the result
tables for :func:`measure`. Their inputs are
:func:`isotropy.workflow.inputs.workflow_inputs`, the configuration they read
:func:`isotropy.workflow.inputs.config_subset`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from isotropy import paths
from isotropy.defaults import setting_or_default
from isotropy.metrics import registry
from isotropy.traces import read_result_table, read_traces
from isotropy.verdicts.equivalence import series_moments
from isotropy.verdicts.learning import learning_test
from isotropy.verdicts.standins import (
    CAI_MODELS,
    ISTAR_MODELS,
    StandIns,
    encoder_paper_name,
    hub_name,
    model_stand_in,
    paper_name,
)

COLUMNS = [
    "study",
    "quantity",
    "setup",
    "paper_setup",
    "value",
    "spread",
    "seeds",
    "n",
    "k",
    "per_type_cap",
    "unit",
    "convention",
    "stand_in",
    "evidence",
    "note",
    "missing",
    "not_learned",
    "per_seed",
    "seed_free",
    "p_less",
    "p_greater",
    "moments",
    "protocol",
]
_NUMBERS = ("value", "spread", "seeds", "n", "k", "p_less", "p_greater")
CORRELATION_TABLES = {"main": "correlations", "glue": "table3"}
COUNT_TABLES = {"main": "table1", "glue": "table2"}


def measurement(
    study: str, quantity: str, setup: str, paper_setup: str, value: Any = None, **rest: Any
) -> dict[str, Any]:
    """One measurement row; absent numbers are NaN, absent text ''."""
    row: dict[str, Any] = {column: "" for column in COLUMNS}
    row.update(study=study, quantity=quantity, setup=setup, paper_setup=paper_setup)
    for column in _NUMBERS:
        row[column] = math.nan
    row.update(per_seed=(), seed_free=False, moments=None)
    row["value"] = math.nan if value is None else float(value)
    for key, item in rest.items():
        if key not in row:
            raise KeyError(f"unknown measurement column {key!r}")
        row[key] = math.nan if item is None and key in _NUMBERS else item
    row["per_seed"] = tuple(float(v) for v in row["per_seed"])
    return row


def seed_std(values: pd.Series) -> float:
    """Standard deviation across seeds (ddof 1), NaN with fewer than two."""
    values = values.dropna()
    return float(values.std(ddof=1)) if len(values) >= 2 else math.nan


def _endpoints(trace: pd.DataFrame, metric: str) -> tuple[float, float]:
    """The metric at the first and at the last recorded step of one run (NaN rows skipped)."""
    rows = trace.dropna(subset=[metric]).sort_values("step")
    if rows.empty:
        raise ValueError(f"run has no recorded {metric}: every value is NaN")
    return float(rows[metric].iloc[0]), float(rows[metric].iloc[-1])


def _paper_setup(study: str, encoder: str, dataset: str, config: Mapping[str, Any]) -> str:
    if study == "main":
        return dataset
    return f"{encoder_paper_name(config, encoder)}/{dataset}"


def _stand_in(
    study: str, encoder: str, dataset: str, config: Mapping[str, Any], stand: StandIns
) -> str:
    if study != "main":
        return ""
    kind = ((config.get("encoders") or {}).get(encoder) or {}).get("kind")
    parts = (
        stand.word_vectors if kind == "word-vectors" else "",
        stand.pos_labels if dataset == "pos" else "",
        stand.supersense_labels if dataset == "supersense" else "",
    )
    return "; ".join(s for s in parts if s)


def optimisation_measurements(
    study: str,
    *,
    counts: pd.DataFrame | None,
    correlations: pd.DataFrame | None,
    traces: pd.DataFrame | None,
    config: Mapping[str, Any],
    stand: StandIns,
) -> list[dict[str, Any]]:
    """Counts, correlations and the curves' endpoints of one direct-optimisation study."""
    rows: list[dict[str, Any]] = []
    if counts is not None:
        rows += _count_measurements(study, counts, config, stand)
    if correlations is not None:
        rows += _correlation_measurements(study, correlations, traces, config, stand)
    if traces is not None:
        rows += _trace_measurements(study, traces, config, stand)
    return rows


def _count_measurements(
    study: str, counts: pd.DataFrame, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    """Items and parameters of every setup (Tables 1 and 2)."""
    rows: list[dict[str, Any]] = []
    counts_file = paths.study_file(f"{COUNT_TABLES[study]}.csv", study)
    for _, r in counts.iterrows():
        encoder, dataset = r["encoder"], r["dataset"]
        common = dict(
            evidence=counts_file, stand_in=_stand_in(study, encoder, dataset, config, stand)
        )
        setup, paper = f"{encoder}/{dataset}", _paper_setup(study, encoder, dataset, config)
        rows.append(
            measurement(
                study,
                "items",
                setup,
                paper,
                int(r["items"]),
                unit="items",
                convention="labelled items after dropping out-of-vocabulary words",
                note=f"{int(r['rows'])} unique rows",
                **common,
            )
        )
        rows.append(
            measurement(
                study,
                "parameters",
                setup,
                paper,
                int(r["params"]),
                unit="parameters",
                convention="unique rows × dim + classifier weights (+ bias)",
                note=f"dim {int(r['dim'])}",
                **common,
            )
        )
    return rows


def per_seed_correlations(
    traces: pd.DataFrame | None,
) -> dict[tuple[str, str, str], tuple[float, ...]]:
    """(encoder, dataset, column) → each seed's Pearson r / Spearman ρ of IsoScore against
    silhouette, computed here from the traces (every recorded step of that seed; NaN for a
    constant or tiny series), in seed order."""
    if traces is None:
        return {}
    x, y = registry.with_role("isotropy").name, registry.with_role("clusters").name
    out: dict[tuple[str, str, str], list[float]] = {}
    for (encoder, dataset, _), run in traces.dropna(subset=[x, y]).groupby(
        ["encoder", "dataset", "seed"], sort=True
    ):
        defined = len(run) >= 3 and run[x].nunique() > 1 and run[y].nunique() > 1
        for column, method in (("pearson_r", stats.pearsonr), ("spearman_rho", stats.spearmanr)):
            value = float(method(run[x], run[y]).statistic) if defined else math.nan
            out.setdefault((encoder, dataset, column), []).append(value)
    return {key: tuple(values) for key, values in out.items()}


def per_seed_moments(
    traces: pd.DataFrame | None,
) -> dict[tuple[str, str], tuple[tuple[float, ...], ...]]:
    """(encoder, dataset) → each seed's sums of IsoScore and silhouette (points, Σx, Σy, Σx²,
    Σy², Σxy), from which any pooling of seeds has its Pearson r
    (:func:`isotropy.verdicts.equivalence.pooled_r`)."""
    if traces is None:
        return {}
    x, y = registry.with_role("isotropy").name, registry.with_role("clusters").name
    out: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    for (encoder, dataset, _), run in traces.dropna(subset=[x, y]).groupby(
        ["encoder", "dataset", "seed"], sort=True
    ):
        out.setdefault((encoder, dataset), []).append(series_moments(run[x], run[y]))
    return {key: tuple(values) for key, values in out.items()}


def run_protocol(config: Mapping[str, Any], study: str) -> str:
    """The settings of a study's runs that its printed numbers depend on, ``key=value; …``
    (matched against the ``protocol`` column of config/published_values.csv)."""
    keys = ("metric_stride", "updates", "metric_sample_size")
    section = config.get(study) or {}
    values = {key: section.get(key) for key in keys}
    return "; ".join(f"{key}={value}" for key, value in values.items() if value is not None)


def _correlation_measurements(
    study: str,
    correlations: pd.DataFrame,
    traces: pd.DataFrame | None,
    config: Mapping[str, Any],
    stand: StandIns,
) -> list[dict[str, Any]]:
    """Pearson r and Spearman ρ of IsoScore against silhouette per setup, seeds pooled, with
    each seed's value (from the traces when given, else the table's ``seed<k>`` rows)."""
    rows: list[dict[str, Any]] = []
    corr_file = paths.study_file(f"{CORRELATION_TABLES[study]}.csv", study)
    needed = {"encoder", "dataset", "scope", "pearson_r", "spearman_rho"}
    if missing := needed - set(correlations.columns):
        raise ValueError(
            f"correlation table lacks columns {sorted(missing)}; found {list(correlations.columns)}"
        )
    from_traces = per_seed_correlations(traces)
    moments = per_seed_moments(traces)
    protocol = run_protocol(config, study)
    for (encoder, dataset), group in correlations.groupby(["encoder", "dataset"], sort=True):
        overall = group[group["scope"] == "all"]
        seed_rows = group[group["scope"].astype(str).str.startswith("seed")]
        setup, paper = f"{encoder}/{dataset}", _paper_setup(study, encoder, dataset, config)
        for column in ("pearson_r", "spearman_rho"):
            common = dict(
                unit="correlation",
                evidence=corr_file,
                stand_in=_stand_in(study, encoder, dataset, config, stand),
            )
            if overall.empty:
                rows.append(
                    measurement(
                        study,
                        column,
                        setup,
                        paper,
                        missing="no 'all' row for this setup in the correlation table",
                        **common,
                    )
                )
                continue
            per_seed = from_traces.get(
                (encoder, dataset, column), tuple(seed_rows[column].astype(float))
            )
            extra = dict(
                moments=moments.get((encoder, dataset)) if column == "pearson_r" else None,
                protocol=protocol,
                **common,
            )
            rows.append(_correlation_row(study, column, setup, paper, overall, per_seed, extra))
    return rows


def _correlation_row(
    study: str,
    column: str,
    setup: str,
    paper: str,
    overall: pd.DataFrame,
    per_seed: tuple,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """One setup's pooled correlation (``overall``: its 'all' row) with each seed's value."""
    name = "Pearson r" if column == "pearson_r" else "Spearman ρ"
    value = float(overall[column].iloc[0])
    # A one-seed table has no seed0 row: its pooled row is that seed.
    if not per_seed and "seeds" in overall and int(overall["seeds"].iloc[0]) == 1:
        per_seed = (value,)
    points = int(overall["points"].iloc[0]) if "points" in overall else None
    listed = ", ".join(f"{v:+.3f}" for v in per_seed)
    constant = "undefined: a constant series (see the correlation table)"
    undefined = "" if math.isfinite(value) else constant
    note = "; ".join(s for s in (undefined, f"per seed: {listed}" if per_seed else "") if s)
    convention = (
        f"{name} of IsoScore vs silhouette, all recorded steps of all seeds pooled "
        f"({points} points)"
    )
    spread = seed_std(pd.Series(per_seed, dtype=float))
    return measurement(
        study,
        column,
        setup,
        paper,
        value,
        spread=spread,
        seeds=len(per_seed),
        n=points,
        per_seed=per_seed,
        convention=convention,
        note=note,
        **extra,
    )


def _trace_measurements(
    study: str, traces: pd.DataFrame, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    """How far silhouette and IsoScore move over a run, and how much the seeds spread."""
    rows: list[dict[str, Any]] = []
    needed = {"encoder", "dataset", "seed", "step", "isoscore", "silhouette"}
    if missing := needed - set(traces.columns):
        raise ValueError(f"traces lack columns {sorted(missing)}; found {list(traces.columns)}")
    for (encoder, dataset), group in traces.groupby(["encoder", "dataset"], sort=True):
        setup, paper = f"{encoder}/{dataset}", _paper_setup(study, encoder, dataset, config)
        evidence = paths.optimisation_run_file("trace.parquet", study, encoder, dataset, "*")
        ends = {
            metric: pd.DataFrame(
                [_endpoints(run, metric) for _, run in group.groupby("seed")],
                columns=["first", "last"],
            )
            for metric in ("silhouette", "isoscore")
        }
        seeds = group["seed"].nunique()
        protocol, stand_in = (
            run_protocol(config, study),
            _stand_in(study, encoder, dataset, config, stand),
        )
        for metric in ("silhouette", "isoscore"):
            first, last = ends[metric]["first"].mean(), ends[metric]["last"].mean()
            change = tuple(ends[metric]["last"] - ends[metric]["first"])
            rows.append(
                measurement(
                    study,
                    f"{metric}_change",
                    setup,
                    paper,
                    last - first,
                    seeds=seeds,
                    unit=f"{metric} difference",
                    per_seed=change,
                    protocol=protocol,
                    stand_in=stand_in,
                    evidence=evidence,
                    note=f"{first:.4f} → {last:.4f} over {seeds} seed(s); per seed: "
                    f"{', '.join(f'{v:+.4f}' for v in change)}",
                )
            )
        rows.append(_spread_row(study, setup, paper, ends, seeds, protocol, stand_in, evidence))
    return rows


def _spread_row(
    study: str,
    setup: str,
    paper: str,
    ends: Mapping[str, pd.DataFrame],
    seeds: int,
    protocol: str,
    stand_in: str,
    evidence: str,
) -> dict[str, Any]:
    """The seeds' spread: where they end, relative to how far they move ("negligible" is about
    the effect, not an absolute number: 0.05 exceeds a final IsoScore of 0.03)."""
    if seeds < 2:
        missing = "one seed only: no spread to measure"
        return measurement(
            study, "seed_spread", setup, paper, seeds=seeds, evidence=evidence, missing=missing
        )
    spread = {m: ends[m]["last"].std(ddof=1) for m in ("silhouette", "isoscore")}
    change = {m: abs((ends[m]["last"] - ends[m]["first"]).mean()) for m in spread}
    ratios = {m: spread[m] / change[m] for m in spread}
    worst = max(ratios, key=lambda m: ratios[m])
    note = "; ".join(
        f"{m}: std of final {spread[m]:.4g} / |mean change| {change[m]:.4g}" for m in ratios
    )
    # negligible for both metrics (an intersection-union test: the larger p), not negligible
    # for either (Bonferroni over the two)
    tests = [spread_test(ends[m]["last"], ends[m]["last"] - ends[m]["first"]) for m in ratios]
    p_below = max(p for p, _ in tests)
    p_above = min(1.0, len(tests) * min(p for _, p in tests))
    unit = "std across seeds of the final value / |mean change|"
    return measurement(
        study,
        "seed_spread",
        setup,
        paper,
        ratios[worst],
        seeds=seeds,
        p_less=p_below,
        p_greater=p_above,
        unit=unit,
        protocol=protocol,
        stand_in=stand_in,
        evidence=evidence,
        note=f"{seeds} seeds, largest for {worst}; {note}",
    )


SEED_SPREAD_LIMIT = 0.05  # "negligible": the seeds' std below 5% of the mean change


# The one-sided levels a at which the spread test's bounds are evaluated: log-spaced, so the
# smallest a at which a bound holds is found to 1% (rounded up: the p-value errs large)
_LEVELS = np.geomspace(1e-12, 0.5, 2600)


def _ratio_bounds(final: np.ndarray, change: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) confidence bounds of std(final) / |mean(change)| at each level a of
    :data:`_LEVELS`: the std's at one-sided a (chi-square) over |mean|'s at a (t, two-sided, so
    either sign of the mean)."""
    n, a = final.size, _LEVELS
    s = final.std(ddof=1)
    half = stats.t.ppf(1 - a / 2, n - 1) * change.std(ddof=1) / math.sqrt(n)
    upper_s = s * np.sqrt((n - 1) / stats.chi2.ppf(a, n - 1))
    lower_s = s * np.sqrt((n - 1) / stats.chi2.ppf(1 - a, n - 1))
    low_mean, high_mean = np.maximum(0.0, abs(change.mean()) - half), abs(change.mean()) + half
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.where(upper_s == 0, 0.0, upper_s / low_mean)
        lower = lower_s / high_mean
    return upper, lower


def _p_value(holds: np.ndarray) -> float:
    """Twice the smallest level at which a bound holds (it holds from there on); 1 if never."""
    found = np.flatnonzero(holds)
    return min(1.0, 2 * float(_LEVELS[found[0]])) if found.size else 1.0


def spread_test(final, change, limit: float = SEED_SPREAD_LIMIT) -> tuple[float, float]:
    """(p that the seeds' std of the final value is below ``limit`` × |mean change|, p that it
    is above) over one metric's seeds: the ratio's confidence bounds, the std's (chi-square) and
    the mean change's (t) each at level a, so each p = 2a bounds its error (a union bound).
    NaN with fewer than two seeds. A test of spread against the effect, not a point ratio."""
    final = np.asarray(final, dtype=np.float64)
    change = np.asarray(change, dtype=np.float64)
    if final.size < 2:
        return math.nan, math.nan
    upper, lower = _ratio_bounds(final, change)
    return _p_value(upper < limit), _p_value(lower > limit)


def seed_test(
    treated: pd.DataFrame, baseline: pd.DataFrame, column: str
) -> tuple[float, int, float, float]:
    """(mean difference treated − baseline, seeds, one-sided p below 0, p above 0): a paired
    t-test over the seeds both have, else Welch's over the two groups; p NaN with one seed."""
    paired = (
        treated.groupby("seed")[column]
        .mean()
        .to_frame("t")
        .join(baseline.groupby("seed")[column].mean().rename("b"), how="inner")
    )
    if len(paired) >= 2:
        d = (paired["t"] - paired["b"]).to_numpy()
        tests = [stats.ttest_1samp(d, 0.0, alternative=a).pvalue for a in ("less", "greater")]
        p_less, p_greater = (float(p) for p in tests)
        return float(d.mean()), len(d), p_less, p_greater
    t, b = treated[column].dropna().to_numpy(), baseline[column].dropna().to_numpy()
    diff = float(t.mean() - b.mean())
    if min(len(t), len(b)) < 2:
        return diff, min(len(t), len(b)), math.nan, math.nan
    tests = [
        stats.ttest_ind(t, b, equal_var=False, alternative=a).pvalue for a in ("less", "greater")
    ]
    p_less, p_greater = (float(p) for p in tests)
    return diff, min(len(t), len(b)), p_less, p_greater


ISTAR_QUANTITIES = {
    "istar_isoscore_change": (
        "isoscore_star",
        "IsoScore* difference (λ minus no regulariser)",
        "IsoScore* (ζ = 0.75) of validation sentence embeddings",
    ),
    "istar_metric_gain": ("metric", "metric difference (0-1 scale)", "task metric"),
}


def istar_measurements(
    runs: pd.DataFrame, config: Mapping[str, Any], source: str = paths.ISTAR_RUNS
) -> list[dict[str, Any]]:
    """Per model × task × λ < 0: the IsoScore* change and the metric gain over the unregularised
    baseline, each tested over seeds (:func:`seed_test`), with raw one-sided p-values: each page
    Holm-adjusts them over its whole grid (every model × task × λ), so no best-of-several goes
    uncorrected."""
    needed = {"model", "task", "regulariser", "lambda", "seed", "metric", "isoscore_star"}
    if missing := needed - set(runs.columns):
        raise ValueError(
            f"I-STAR runs table lacks columns {sorted(missing)}; found {list(runs.columns)}"
        )
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=True):
        stand_in = (
            ""
            if paper_name(config, model) in ISTAR_MODELS
            else f"{model} ({hub_name(config, model)}) for BERT-base / ALBERT / DistilBERT"
        )
        baseline = group[group["regulariser"] == "none"]
        negative = group[(group["regulariser"] == "istar") & (group["lambda"].astype(float) < 0)]
        common = dict(seeds=int(group["seed"].nunique()), evidence=source, stand_in=stand_in)
        if baseline.empty or negative.empty:
            lacking = (
                "no baseline (regulariser none)" if baseline.empty else "no I-STAR run with λ < 0"
            )
            rows += [
                measurement(
                    "istar", q, f"{model}/{task}", f"{model}/{task}", missing=lacking, **common
                )
                for q in ISTAR_QUANTITIES
            ]
            continue
        lambdas = sorted(negative["lambda"].astype(float).unique())
        runs_at = {lam: negative[negative["lambda"].astype(float) == lam] for lam in lambdas}
        for quantity, (column, unit, convention) in ISTAR_QUANTITIES.items():
            tests = [seed_test(runs_at[lam], baseline, column) for lam in lambdas]
            p_less, p_greater = [t[2] for t in tests], [t[3] for t in tests]
            base = baseline[column].mean()
            for lam, (diff, seeds, _, _), low, high in zip(lambdas, tests, p_less, p_greater):
                setup = f"{model}/{task}, λ={lam:g}"
                rows.append(
                    measurement(
                        "istar",
                        quantity,
                        setup,
                        setup,
                        diff,
                        unit=unit,
                        p_less=low,
                        p_greater=high,
                        convention=f"{convention}, λ = {lam:g} minus no regulariser, {seeds} "
                        "seed(s); raw one-sided p (each page adjusts over its whole grid)",
                        note=f"baseline {base:.4f}; λ={lam:g}: {base + diff:.4f}",
                        not_learned=fine_tuned_not_learned(baseline, runs_at[lam], column=ACC),
                        **{**common, "seeds": seeds},
                    )
                )
    return rows


# ---- the geometry study ----------------------------------------------------------------------

LID_FILE, COSINE_FILE, STS_FILE = paths.GEOMETRY_LID, paths.GEOMETRY_COSINE, paths.GEOMETRY_STS
# STS methods no seed enters (no k-means / GMM clustering): one run is the whole measurement.
SEED_FREE_METHODS = ("none", "centring", "all-but-the-top")
QUANTITY_OF_STS = {"pearson": "sts_pearson", "spearman": "sts_spearman", "isotropy": "isotropy_iw"}


def _cai_setup(config: Mapping[str, Any], name: str) -> str:
    """The Table 3 row a model is compared with: its own, or BERT (the paper's main model) for a
    model the paper did not study."""
    paper = paper_name(config, name)
    return paper if paper in CAI_MODELS else "BERT"


def _cap(config: Mapping[str, Any]) -> str:
    cap = setting_or_default(config, "geometry", "clusters", "max_per_type")
    return "none" if cap is None else str(cap)


def _lid_seed_free(config: Mapping[str, Any], kind: str) -> bool:
    """Whether no seed changes the LID: every point indexed (no seeded sample)."""
    clusters = (config.get("geometry") or {}).get("clusters") or {}
    if kind == "static":
        return setting_or_default(config, "geometry", "clusters", "static", "sample_size") is None
    return "lid_sample_size" in clusters and clusters["lid_sample_size"] is None


def lid_measurements(
    lid: pd.DataFrame, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    """Per model (last layer) and for the static vectors: cosine LID (with each seed's value),
    its n and k, and the dimension."""
    rows = []
    keys = ["kind", "model"]
    for (kind, name), group in lid.groupby(keys, sort=False):
        last = group if kind == "static" else group[group["layer"] == group["layer"].max()]
        setup, paper, cap, stand_in, layers = _lid_setup(kind, name, group, last, config, stand)
        source = last.iloc[0]
        n, k, dim = int(source["n"]), int(source["k"]), int(source["dim"])
        common = dict(n=n, k=k, per_type_cap=cap, stand_in=stand_in, evidence=LID_FILE)
        rows.append(_lid_cosine_row(kind, last, setup, paper, layers, config, common))
        rows.append(
            measurement(
                "geometry",
                "lid_n",
                setup,
                paper,
                n,
                unit="tokens",
                convention="points indexed and queried (the LID sample)",
                **common,
            )
        )
        rows.append(
            measurement(
                "geometry",
                "dim",
                setup,
                paper,
                dim,
                unit="dimensions",
                convention="embedding dimension",
                **common,
            )
        )
    return rows


def _lid_setup(
    kind: str,
    name: str,
    group: pd.DataFrame,
    last: pd.DataFrame,
    config: Mapping[str, Any],
    stand: StandIns,
) -> tuple[str, str, str, str, str]:
    """(our setup, the paper's, the per-type cap, the stand-in, the layers' note) of one model
    or of the static vectors."""
    if kind == "static":
        glove = "for the paper's GloVe"
        replaced = stand.word_vectors.replace("for NLPL word2vec model 222 (300-d)", glove)
        stand_in = replaced if stand.word_vectors else ""
        return "static word vectors", "GloVe", "one vector per word", stand_in, ""
    paper = _cai_setup(config, name)
    setup, cap = f"{name}, last layer ({int(last['layer'].iloc[0])})", _cap(config)
    stand_in = "; ".join(s for s in (model_stand_in(config, name, paper), stand.corpus) if s)
    per_layer = group[group["metric"] == "cosine"].groupby("layer")["lid_cai_scale"].mean()
    layers = ""
    if len(per_layer):
        layers = (
            f"cosine LID over layers {per_layer.min():.2f}–{per_layer.max():.2f}; Table 3 "
            "does not say which layer, the last is compared"
        )
    return setup, paper, cap, stand_in, layers


def _lid_cosine_row(
    kind: str,
    last: pd.DataFrame,
    setup: str,
    paper: str,
    layers: str,
    config: Mapping[str, Any],
    common: dict[str, Any],
) -> dict[str, Any]:
    """The cosine LID of one model's last layer (or of the static vectors), with each seed's."""
    cosine, euclidean = last[last["metric"] == "cosine"], last[last["metric"] == "euclidean"]
    if cosine.empty:
        missing = "no cosine LID in lid.csv (geometry.clusters.lid_metrics)"
        return measurement("geometry", "lid_cosine", setup, paper, missing=missing, **common)
    euclid = ""
    if len(euclidean):
        euclid = (
            "Euclidean on Cai's squared-distance scale (their Figure 9) "
            f"{euclidean['lid_cai_scale'].mean():.2f}, true-distance MLE "
            f"{euclidean['lid_true_distances'].mean():.2f}"
        )
    n, k, cap = common["n"], common["k"], common["per_type_cap"]
    convention = (
        f"Levina–Bickel MLE, cosine distance, k = {k}, neighbours within a sample of n = {n} "
        f"(per-type cap {cap})"
    )
    return measurement(
        "geometry",
        "lid_cosine",
        setup,
        paper,
        cosine["lid_cai_scale"].mean(),
        spread=seed_std(cosine["lid_cai_scale"]),
        seeds=cosine["seed"].nunique(),
        per_seed=tuple(cosine.groupby("seed")["lid_cai_scale"].mean()),
        seed_free=_lid_seed_free(config, kind),
        unit="dimensions",
        convention=convention,
        note="; ".join(s for s in (euclid, layers) if s),
        **common,
    )


def cosine_measurements(
    cosine: pd.DataFrame, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    """Per model: the largest |S_inter| after cluster-mean removal over layers (raw S_inter and
    S_intra ranges in the note; Cai et al.'s own statistic, stated beside ours), and isotropy
    within clusters by a measure that can fail (:func:`_within_cluster_row`)."""
    rows = []
    for name, group in cosine[cosine["kind"] == "contextual"].groupby("model", sort=False):
        paper = _cai_setup(config, name)
        per_layer = group.groupby("layer")[
            ["s_inter", "s_intra", "s_inter_adjusted", "s_intra_adjusted"]
        ].mean()
        note = "; ".join(
            f"{label} {per_layer[column].min():.3f}–{per_layer[column].max():.3f}"
            for column, label in (
                ("s_inter", "raw S_inter"),
                ("s_intra", "raw S_intra"),
                ("s_intra_adjusted", "S_intra adjusted"),
            )
        )
        rows.append(
            measurement(
                "geometry",
                "s_inter_adjusted_max",
                f"{name}, layers {int(per_layer.index.min())}–{int(per_layer.index.max())}",
                paper,
                float(per_layer["s_inter_adjusted"].abs().max()),
                unit="|mean cosine| (maximum over layers)",
                convention="per cluster: centred on its own mean, pairs inside the cluster, "
                "unweighted mean over clusters (Cai et al.'s --cluster_cos --center)",
                stand_in="; ".join(
                    s for s in (model_stand_in(config, name, paper), stand.corpus) if s
                ),
                evidence=COSINE_FILE,
                note=note,
            )
        )
        rows.append(_within_cluster_row(name, group, paper, config, stand))
    return rows


def _within_cluster_row(
    name: str, group: pd.DataFrame, paper: str, config: Mapping[str, Any], stand: StandIns
) -> dict[str, Any]:
    """Isotropy within clusters by a measure that can fail: the smallest over layers of the
    clusters' IsoScore relative to an isotropic cloud of the same sizes
    (:func:`isotropy.geometry.layers.within_cluster_isotropy`). Layers where k-means found one
    cluster are named, not judged; a model with one cluster at every layer gets no value."""
    if "n_clusters" in group:
        per_layer = group.groupby("layer")[["n_clusters"]].max()
    else:  # a table made before the clusters were counted: no layer named single
        layers = pd.Index(sorted(group["layer"].unique()), name="layer")
        per_layer = pd.DataFrame({"n_clusters": math.nan}, index=layers)
    within = ["isoscore_within", "isoscore_within_ratio"]
    if set(within) <= set(group):
        per_layer = per_layer.join(group.groupby("layer")[within].mean())
    else:  # a table made before the within-cluster IsoScore was recorded
        per_layer = per_layer.assign(isoscore_within=math.nan, isoscore_within_ratio=math.nan)
    single = [int(layer) for layer, k in per_layer["n_clusters"].items() if k < 2]
    judged = per_layer.drop(index=single).dropna(subset=["isoscore_within_ratio"], how="any")
    layers = f"layers {int(per_layer.index.min())}–{int(per_layer.index.max())}"
    common = dict(
        unit="IsoScore within clusters / IsoScore of an isotropic cloud of the same sizes "
        "(minimum over layers with k ≥ 2)",
        convention="IsoScore of each cluster's points (k-means by silhouette, Cai et al.'s "
        "clusters), unweighted mean over clusters, divided by the same mean for isotropic "
        "Gaussian samples of the clusters' sizes and dimension",
        stand_in="; ".join(s for s in (model_stand_in(config, name, paper), stand.corpus) if s),
        evidence=COSINE_FILE,
    )
    one = f"k-means found one cluster (k = 1) at layers {', '.join(map(str, single))}"
    if judged.empty:
        missing = (
            "k-means found one cluster (k = 1) at every layer: 'within clusters' is the whole "
            "cloud, so isotropy within clusters is not judged"
        )
        if single != list(per_layer.index.astype(int)):
            missing = "no layer with k ≥ 2 clusters has a within-cluster IsoScore"
        return measurement(
            "geometry",
            "isoscore_within_ratio_min",
            f"{name}, {layers}",
            paper,
            missing=missing,
            **common,
        )
    note = (
        f"within-cluster IsoScore {judged['isoscore_within'].min():.3f}–"
        f"{judged['isoscore_within'].max():.3f} over {len(judged)} layers with k ≥ 2"
    )
    return measurement(
        "geometry",
        "isoscore_within_ratio_min",
        f"{name}, {layers}",
        paper,
        float(judged["isoscore_within_ratio"].min()),
        note="; ".join(s for s in (note, one if single else "") if s),
        **common,
    )


def sts_measurements(
    sts: pd.DataFrame,
    config: Mapping[str, Any],
    stand: StandIns,
    *,
    enhanced: str = "cluster-based",
) -> list[dict[str, Any]]:
    """Per model × STS data set × method: Pearson ×100, Spearman ×100 and I(W) (seed means);
    per model × data set, the cluster-based method's I(W) ratio and Spearman gain over none."""
    needed = {"model", "dataset", "method", "spearman", "isotropy"}
    if missing := needed - set(sts.columns):
        raise ValueError(f"STS table lacks columns {sorted(missing)}; found {list(sts.columns)}")
    rows = []
    for (name, dataset), group in sts.groupby(["model", "dataset"], sort=True):
        split = str(group["split"].iloc[0]) if "split" in group else ""
        setup = f"{name}, {dataset} {split}".strip()
        split_stand_in = stand.sts_split if dataset == "stsb" else ""
        stand_ins = (model_stand_in(config, name, "BERT"), split_stand_in)
        stand_in = "; ".join(s for s in stand_ins if s)
        pipeline = "mean-pooled sentence vectors transformed"
        if "pipeline" in group:
            pipeline = str(group["pipeline"].iloc[0])
        for method, runs in group.groupby("method", sort=False):
            where = (setup, f"{dataset}/{method}", stand_in, pipeline)
            rows += _sts_method_rows(method, runs, *where)
        rows += _sts_gain_rows(f"{name}/{dataset}", group, enhanced, stand_in)
    return rows


def _sts_method_rows(
    method: str, runs: pd.DataFrame, setup: str, paper: str, stand_in: str, pipeline: str
) -> list[dict[str, Any]]:
    """One model × data set × method: each STS quantity (seed means, with each seed's)."""
    rows = []
    first = runs.iloc[0]
    setting = ""
    if method != "none" and "n_clusters" in runs:
        setting = f"{int(first['n_clusters'])} clusters, {int(first['n_directions'])} directions"
    for column, quantity in QUANTITY_OF_STS.items():
        if column not in runs:
            continue
        sign_free = ""
        if column == "isotropy" and "isotropy_sign_free" in runs:
            sign_free = f"sign-free I(W) {runs['isotropy_sign_free'].mean():.3g}"
        convention = f"cosine of sentence vectors vs gold; {pipeline}"
        if column == "isotropy":
            convention = (
                "I(W) with the eigenvectors' signs as numpy returns them (Rajaee's "
                f"isotropy()); {pipeline}"
            )
        per_seed = (runs[column].mean(),)
        if "seed" in runs:
            per_seed = tuple(runs.groupby("seed")[column].mean())
        unit = "ratio (1 = isotropic)" if column == "isotropy" else "correlation ×100"
        rows.append(
            measurement(
                "geometry",
                quantity,
                setup,
                paper,
                runs[column].mean(),
                spread=seed_std(runs[column]),
                seeds=runs["seed"].nunique() if "seed" in runs else None,
                per_seed=per_seed,
                seed_free=method in SEED_FREE_METHODS,
                n=int(first["n_pairs"]) if "n_pairs" in runs else None,
                unit=unit,
                convention=convention,
                stand_in=stand_in,
                evidence=STS_FILE,
                note="; ".join(s for s in (setting, sign_free) if s),
            )
        )
    return rows


def _sts_gain_rows(
    claim_setup: str, group: pd.DataFrame, enhanced: str, stand_in: str = ""
) -> list[dict[str, Any]]:
    """The enhanced method's I(W) ratio and Spearman gain over none (one model × data set)."""
    means = group.groupby("method")[["spearman", "isotropy"]].mean()
    where = ("geometry",)
    if "none" not in means.index or enhanced not in means.index:
        missing = f"sts.csv lacks method 'none' or {enhanced!r}"
        return [
            measurement(
                *where, quantity, claim_setup, claim_setup, evidence=STS_FILE, missing=missing
            )
            for quantity in ("sts_isotropy_ratio", "sts_spearman_gain")
        ]
    before, after = means.loc["none"], means.loc[enhanced]
    ratio = after["isotropy"] / before["isotropy"] if before["isotropy"] > 0 else float("nan")
    # sts.csv stores correlations ×100 (isotropy.geometry.evaluate_sts), as the paper reports.
    return [
        measurement(
            "geometry",
            "sts_isotropy_ratio",
            claim_setup,
            claim_setup,
            ratio,
            unit="ratio",
            stand_in=stand_in,
            evidence=STS_FILE,
            note=f"I(W) {before['isotropy']:.3g} → {after['isotropy']:.3g}",
        ),
        measurement(
            "geometry",
            "sts_spearman_gain",
            claim_setup,
            claim_setup,
            after["spearman"] - before["spearman"],
            unit="Spearman ×100 difference",
            stand_in=stand_in,
            evidence=STS_FILE,
            note=f"Spearman×100 {before['spearman']:.2f} → {after['spearman']:.2f}",
        ),
    ]


CLASSIFICATION_FILE = paths.GEOMETRY_CLASSIFICATION
CLASSIFICATION_READINGS = {
    "pooled": "mean of the transformed last-layer tokens (the STS path's sentence vector)",
    "positions": "transformed last-layer tokens by position, flattened "
    "(the authors' classifier cell's input)",
}


# I(W) as a ratio and ×100 (our reading of the slides' "84.36"): quantity, scale, unit.
IW_READINGS = (("sst2_iw", 1, "ratio (1 = isotropic)"), ("sst2_iw_percent", 100, "I(W) ×100"))


def _classification_note(first: pd.Series, method: str) -> str:
    """The training sentences, the majority class and (cluster-based) what was fitted."""
    fitted = ""
    if method != "none":
        fitted = (
            f"{int(first['n_clusters'])} clusters, {int(first['n_directions'])} directions, "
            "fitted on the tokens of both splits"
        )
    train = (
        f"{int(first['n_train'])} training sentences (config geometry.classification.train_subset)"
    )
    majority = f"majority class {first['majority_accuracy']:.2f}"
    return "; ".join(s for s in (train, majority, fitted) if s)


def classification_measurements(
    table: pd.DataFrame, config: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Per model × reading × method (none, cluster-based): validation accuracy ×100 of the linear
    classifier, I(W) of the transformed tokens, and I(W) ×100 (our reading of the slides'
    "84.36")."""
    rows = []
    for (name, reading, method), runs in table.groupby(["model", "reading", "method"], sort=False):
        first = runs.iloc[0]
        setup = f"{name}, {first['task']} ({reading} features)"
        stand_in = model_stand_in(config, name, "BERT")
        seeds, n = runs["seed"].nunique(), int(first["n_validation"])
        common = dict(seeds=seeds, seed_free=method == "none", n=n, stand_in=stand_in)
        common["evidence"] = CLASSIFICATION_FILE
        features = CLASSIFICATION_READINGS.get(reading, reading)
        convention = f"logistic regression (C {first['C']:g}) on {features}; SST-2 validation"
        per_seed = runs.groupby("seed")
        rows.append(
            measurement(
                "geometry",
                "sst2_accuracy",
                setup,
                method,
                runs["accuracy"].mean(),
                spread=seed_std(runs["accuracy"]),
                per_seed=tuple(per_seed["accuracy"].mean()),
                unit="accuracy ×100",
                convention=convention,
                note=_classification_note(first, method),
                **common,
            )
        )
        iw = (
            f"I(W) of the transformed last-layer tokens ({int(first['n_tokens'])}), numpy's "
            "eigenvector signs; of the pooled sentences "
            f"{runs['isotropy_sentences'].mean():.3g}"
        )
        for quantity, scale, unit in IW_READINGS:
            value = scale * runs["isotropy"].mean()
            spread = scale * seed_std(runs["isotropy"])
            iw_per_seed = tuple(scale * per_seed["isotropy"].mean())
            rows.append(
                measurement(
                    "geometry",
                    quantity,
                    setup,
                    method,
                    value,
                    spread=spread,
                    per_seed=iw_per_seed,
                    unit=unit,
                    convention=iw,
                    **common,
                )
            )
    return rows


ACC = "score_accuracy"  # an I-STAR run's accuracy in runs.csv (tasks scored by accuracy)


def fine_tuned_not_learned(*groups: pd.DataFrame, column: str = "accuracy") -> str:
    """The guard's note when a group of fine-tuning runs (one setup's seeds; columns ``column``,
    majority_baseline, eval_sentences) is not above its majority baseline
    (:func:`isotropy.verdicts.learning.learning_test`), '' when every group learned or a group
    lacks ``column`` or a majority baseline (a metric other than accuracy)."""
    notes = []
    for runs in groups:
        if column not in runs or "majority_baseline" not in runs:
            continue  # another metric than accuracy, or runs from before the guard
        if runs["majority_baseline"].isna().any():
            continue
        tested = learning_test(
            list(runs[column].astype(float)),
            float(runs["majority_baseline"].iloc[0]),
            int(runs["eval_sentences"].iloc[0]),
        )
        if not tested.learned:
            notes.append(tested.note)
    return "; ".join(notes)


def rajaee_cls_measurements(table: pd.DataFrame, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per model × task × method (none, cluster): dev accuracy ×100 after fine-tuning with and
    without the cluster-based method on the CLS states, and I(W) of the last layer's dev CLS
    states as the head read them (after the method; the model's own without it)."""
    rows = []
    source = paths.rajaee_cls_file("runs.csv")
    for (name, task, method), runs in table.groupby(["model", "task", "method"], sort=False):
        first = runs.iloc[0]
        setup = f"{name}, {task} fine-tuned"
        paper_setup = "cluster-based" if method == "cluster" else method
        common = dict(
            seeds=runs["seed"].nunique(),
            n=int(first["eval_sentences"]),
            stand_in=model_stand_in(config, name, "BERT"),
            evidence=source,
            note=f"{int(first['train_examples'])} training examples, {int(first['epochs'])} "
            "epochs (config rajaee_cls.training)",
        )
        per_seed = runs.groupby("seed")
        common["not_learned"] = fine_tuned_not_learned(runs)
        accuracy = 100 * runs["accuracy"]
        rows.append(
            measurement(
                "geometry",
                f"{task}_finetuned_accuracy",
                setup,
                paper_setup,
                accuracy.mean(),
                spread=seed_std(accuracy),
                per_seed=tuple(100 * per_seed["accuracy"].mean()),
                unit="accuracy ×100",
                convention="dev accuracy after fine-tuning",
                **common,
            )
        )
        iw = runs["cls_iw_head_input"]
        rows.append(
            measurement(
                "geometry",
                f"{task}_finetuned_iw",
                setup,
                paper_setup,
                iw.mean(),
                spread=seed_std(iw),
                per_seed=tuple(per_seed["cls_iw_head_input"].mean()),
                unit="ratio (1 = isotropic)",
                convention="I(W) of the dev CLS states the head reads (after the method)",
                **common,
            )
        )
    return rows


def geometry_measurements(
    tables: Mapping[str, pd.DataFrame | None], config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if tables.get("geometry_classification") is not None:
        rows += classification_measurements(tables["geometry_classification"], config)
    if tables.get("geometry_lid") is not None:
        rows += lid_measurements(tables["geometry_lid"], config, stand)
    if tables.get("geometry_cosine") is not None:
        rows += cosine_measurements(tables["geometry_cosine"], config, stand)
    if tables.get("geometry_sts") is not None:
        rows += sts_measurements(tables["geometry_sts"], config, stand)
    if tables.get("rajaee_cls_runs") is not None:
        rows += rajaee_cls_measurements(tables["rajaee_cls_runs"], config)
    return rows


def measure(
    tables: Mapping[str, pd.DataFrame | None], config: Mapping[str, Any], stand: StandIns
) -> pd.DataFrame:
    """Every measurement of this run. ``tables``: result tables by name (``main_table1``,
    ``main_correlations``, ``main_traces``, the same for ``glue_`` with ``table2`` / ``table3``,
    ``geometry_lid``, ``geometry_cosine``, ``geometry_sts``, ``istar_runs``); an absent name
    means that table is not part of the run."""
    rows: list[dict[str, Any]] = []
    for study in ("main", "glue"):
        rows += optimisation_measurements(
            study,
            counts=tables.get(f"{study}_{COUNT_TABLES[study]}"),
            correlations=tables.get(f"{study}_{CORRELATION_TABLES[study]}"),
            traces=tables.get(f"{study}_traces"),
            config=config,
            stand=stand,
        )
    rows += geometry_measurements(tables, config, stand)
    if tables.get("istar_runs") is not None:
        rows += istar_measurements(tables["istar_runs"], config)
    return pd.DataFrame(rows, columns=COLUMNS)


def load_tables(
    inputs: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]],
    run_keys: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, pd.DataFrame]:
    """The result tables named by :func:`isotropy.workflow.inputs.workflow_inputs`, read (traces
    tagged with their keys)."""
    tables = {}
    for name, value in inputs.items():
        if name.endswith("_traces"):
            study = name.removesuffix("_traces")
            keys = run_keys[study]
            if isinstance(value, (str, os.PathLike)):  # a single trace file
                files = [str(value)]
            else:
                files = [str(v) for v in value]
            if len(keys) != len(files):
                raise ValueError(f"{study}: {len(keys)} run keys for {len(files)} traces")
            tables[name] = read_traces(
                files, [{k: v for k, v in key.items() if k != "seed"} for key in keys]
            )
        elif name not in ("published", "protocol_effects"):  # configuration, not results
            if not isinstance(value, (str, os.PathLike)):
                raise TypeError(f"{name}: one result table, got {value!r}")
            tables[name] = read_result_table(Path(value))
    return tables


def as_preview(table: pd.DataFrame, stamp: str) -> pd.DataFrame:
    """A verdict table (claims or paper comparison) measured on a preview's results as the main
    study's: its main-study rows only, evidence pointing at the preview's folder, and the preview's
    stamp in a first column ``preview`` on every row (as the preview's own tables have it)."""
    rows = table[table["study"] == "main"].reset_index(drop=True)
    if "evidence" in rows:
        main, preview = paths.study_file("", "main"), paths.study_file("", "preview")
        rows["evidence"] = rows["evidence"].astype(str).str.replace(main, preview, regex=False)
    rows.insert(0, "preview", stamp)
    return rows
