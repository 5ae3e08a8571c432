"""Our numbers beside the papers': ``results/paper_comparison.{csv,md}``.

The claims check (:mod:`isotropy.claims`) asks whether the papers' qualitative claims hold on
our results. This module is the quantitative side: every number the seed papers print (as
recorded in ``docs/papers.md``), each beside the value this run measured for it, with the
convention both follow, the stand-in we used where our setup differs from the paper's, and a
verdict with the tolerance it used.

Rules:

* A paper value comes from ``docs/papers.md`` (the section is cited in ``source``). Where
  papers.md gives no number (e.g. the paper's Table 2 counts), ``paper_value`` is empty and
  ``paper_says`` quotes what it does say; the verdict then judges that statement, or is
  ``no paper number``.
* A number this run cannot produce (study not configured, model not run) still gets its row,
  with verdict ``not run`` and the reason.
* Verdicts: ``agrees`` / ``differs`` (a number, within / beyond the stated tolerance),
  ``consistent`` / ``not consistent`` (a statement without a number), ``no paper number``,
  ``not run``. A stand-in is named in ``stand_in``: a verdict about a stand-in says how our
  stand-in compares with the paper's model, not that the paper is (not) reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

COLUMNS = [
    "source",
    "quantity",
    "setup",
    "paper_value",
    "paper_says",
    "our_value",
    "unit",
    "convention",
    "stand_in",
    "tolerance",
    "verdict",
    "note",
]
AGREES, DIFFERS, CONSISTENT, NOT_CONSISTENT, NO_NUMBER, NOT_RUN = (
    "agrees",
    "differs",
    "consistent",
    "not consistent",
    "no paper number",
    "not run",
)

# Tolerances: counts exactly; Cai's LID within 20 % (one decimal printed, sampling of tokens);
# STS correlations within 2 points ×100 (their k-means is unseeded); I(W) within a factor 2.
LID_RELATIVE_TOLERANCE = 0.2
STS_POINTS_TOLERANCE = 2.0
ISOTROPY_FACTOR_TOLERANCE = 2.0

MICKUS = "Mickus et al. 2024"
CAI = "Cai et al. 2021"
RAJAEE = "Rajaee & Pilehvar 2021"
ISTAR = "Rudman & Eickhoff 2024"

# papers.md §1: items of the paper's section 3 setups (Table 1).
TABLE1_ITEMS = {"polarity": 10_662, "snli": 9_842, "pos": 11_462, "supersense": 2_275}
# papers.md §4: Cai et al.'s Table 3, LID (Euclidean, on their code's squared-distance scale).
CAI_TABLE3_LID = {
    "BERT": 5.6,
    "DistilBERT": 7.3,
    "GPT": 6.8,
    "GPT-2": 7.0,
    "ELMo": 9.1,
    "GloVe": 18.0,
}
# papers.md §4: Rajaee & Pilehvar, pre-trained BERT-base on STS-B, before and after the method.
RAJAEE_STSB = {
    ("none", "pearson"): 56.16, ("none", "spearman"): 54.09, ("cluster-based", "pearson"): 70.75,
    ("cluster-based", "spearman"): 67.50, ("none", "isotropy"): 3.36e-5, ("cluster-based", "isotropy"): 0.64,
}  # fmt: skip
GLUE_TASKS = ("cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst2", "wnli")
GLUE_ENCODERS = ("mpnet", "roberta", "miniLM")
# Hub names of the models Cai et al. studied, as the configuration names them.
_PAPER_MODELS = (
    ("distilbert", "DistilBERT"),
    ("bert-base", "BERT"),
    ("openai-gpt", "GPT"),
    ("gpt2", "GPT-2"),
    ("elmo", "ELMo"),
)


def row(source: str, quantity: str, setup: str, *, paper_value: float | None = None, paper_says: str = "", our_value: float | None = None,
        unit: str = "", convention: str = "", stand_in: str = "", tolerance: str = "", verdict: str, note: str = "") -> dict[str, Any]:  # fmt: skip
    """One comparison row; missing numbers are NaN in the table."""
    nan = float("nan")
    return {
        "source": source, "quantity": quantity, "setup": setup,
        "paper_value": nan if paper_value is None else float(paper_value), "paper_says": paper_says,
        "our_value": nan if our_value is None else float(our_value), "unit": unit, "convention": convention,
        "stand_in": stand_in, "tolerance": tolerance, "verdict": verdict, "note": note,
    }  # fmt: skip


def not_run(source: str, quantity: str, setup: str, why: str, **paper: Any) -> dict[str, Any]:
    """A row for a number this run cannot produce, and why (``paper``: what the paper gives)."""
    return row(source, quantity, setup, verdict=NOT_RUN, note=why, **paper)


def within(
    ours: float,
    paper: float,
    *,
    absolute: float | None = None,
    relative: float | None = None,
    factor: float | None = None,
) -> str:
    """``agrees`` when ``ours`` is within the one tolerance given of ``paper``, else ``differs``."""
    if ours is None or not math.isfinite(ours):
        return DIFFERS
    if absolute is not None:
        close = abs(ours - paper) <= absolute
    elif relative is not None:
        close = abs(ours - paper) <= relative * abs(paper)
    elif factor is not None:
        close = ours > 0 and 1 / factor <= ours / paper <= factor
    else:
        close = ours == paper
    return AGREES if close else DIFFERS


# ---------------------------------------------------------------------------------------------
# Stand-ins: what this configuration uses where the paper used something else


@dataclass(frozen=True)
class StandIns:
    """Descriptions of this run's stand-ins, from the configuration (rule params)."""

    word_vectors: str = ""  # the vectors used for the paper's word2vec / GloVe
    word_vectors_label: str = ""  # the same in two words, for figure panels ("GloVe 50-d")
    pos_labels: str = ""
    supersense_labels: str = ""
    corpus: str = ""  # Cai et al.'s WikiText-2 / PTB
    sts_split: str = ""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], mirror: str | None) -> StandIns:
        """Stand-ins of a validated configuration; ``mirror`` is the mirror folder in use (or None)."""
        return cls(**describe_stand_ins(config, mirror))


def describe_stand_ins(config: Mapping[str, Any], mirror: str | None) -> dict[str, str]:
    """Plain strings (so they can be rule params) naming each stand-in of this configuration."""
    out = {
        "word_vectors": "",
        "word_vectors_label": "",
        "pos_labels": "",
        "supersense_labels": "",
        "corpus": "",
        "sts_split": "",
    }
    source = (config.get("sources") or {}).get("word2vec") or {}
    if mirror and source.get("mirror"):
        files = ", ".join(source["mirror"])
        name = "GloVe" if "glove" in files.lower() else "word vectors"
        dims = [
            part
            for part in files.replace(".", " ").split()
            if part.endswith("d") and part[:-1].isdigit()
        ]
        label = f"{name} {dims[0][:-1]}-d" if dims else name
        out["word_vectors"] = f"{label} (mirror file {files}) for NLPL word2vec model 222 (300-d)"
        out["word_vectors_label"] = label
    if config.get("pos_source") == "wordnet":
        out["pos_labels"] = (
            f"WordNet POS labels of the {config.get('pos_standin_size', '')} most frequent words (pos_source: wordnet) for CoDWoE"
        )
    out["supersense_labels"] = (
        "Tikhonov et al.'s word list labelled with WordNet noun supersenses here (the paper's 2,275 items are not reproduced)"
    )
    geometry = config.get("geometry") or {}
    corpus = (geometry.get("clusters") or {}).get("corpus") or {}
    if corpus.get("format") == "lines":  # a sentence-per-line file in place of the hub's WikiText-2
        out["corpus"] = (
            f"{corpus.get('name')} sentences ({corpus.get('source')}/{corpus.get('file')}) for WikiText-2"
        )
    split = ((geometry.get("sts") or {}).get("splits") or {}).get("stsb")
    if split:
        out["sts_split"] = (
            f"STS-B {split} split (the authors' notebook reads dev.tsv)"
            if split != "validation"
            else ""
        )
    return out


def paper_model(hub_name: str) -> str | None:
    """Cai et al.'s name for a configured hub model, or None when the paper did not study it."""
    lowered = hub_name.lower()
    return next((paper for key, paper in _PAPER_MODELS if key in lowered), None)


def _model_stand_in(name: str, hub: str, paper: str) -> str:
    """'' when the model is the paper's own, else 'name (hub) for paper'."""
    ours = paper_model(hub)
    return "" if ours == paper else f"{name} ({hub}) for {paper}"


# ---------------------------------------------------------------------------------------------
# Mickus et al. 2024: Tables 1-3, section 3


def _counts_rows(
    table1: pd.DataFrame | None, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    source = f"{MICKUS}, Table 1 (papers.md §1)"
    rows = []
    setups = ((config.get("main") or {}).get("setups") or {}) if table1 is not None else {}
    for setup, paper_items in TABLE1_ITEMS.items():
        if setup not in setups:
            rows.append(
                not_run(
                    source,
                    "items",
                    setup,
                    "setup not configured in main.setups"
                    if table1 is not None
                    else "main study not part of this run",
                    paper_value=paper_items,
                    unit="items",
                )
            )
            continue
        ours = table1[table1["dataset"] == setup]
        if ours.empty:
            rows.append(
                not_run(
                    source,
                    "items",
                    setup,
                    "no row for this setup in results/main/table1.csv",
                    paper_value=paper_items,
                    unit="items",
                )
            )
            continue
        first = ours.iloc[0]
        encoder = (config.get("encoders") or {}).get(setups[setup]["encoder"], {})
        stand_in = "; ".join(
            s
            for s in (
                stand.word_vectors if encoder.get("kind") == "word-vectors" else "",
                stand.pos_labels if setup == "pos" else "",
                stand.supersense_labels if setup == "supersense" else "",
            )
            if s
        )
        rows.append(
            row(
                source,
                "items",
                setup,
                paper_value=paper_items,
                our_value=int(first["items"]),
                unit="items",
                convention="labelled items after dropping out-of-vocabulary words",
                stand_in=stand_in,
                tolerance="exact",
                verdict=within(int(first["items"]), paper_items),
                note=f"{int(first['rows'])} unique rows",
            )
        )
        rows.append(
            row(
                source,
                "parameters",
                setup,
                paper_says="printed in the paper's Table 1, not recorded in papers.md",
                our_value=int(first["params"]),
                unit="parameters",
                convention="unique rows × dim + classifier weights (+ bias)",
                stand_in=stand_in,
                verdict=NO_NUMBER,
                note=f"dim {int(first['dim'])}",
            )
        )
    return rows


def _correlation_rows(
    table: pd.DataFrame | None,
    source: str,
    says: str,
    *,
    missing: str,
    stand: StandIns,
    config: Mapping[str, Any],
) -> list[dict[str, Any]]:
    if table is None:
        return [
            not_run(
                source,
                "Pearson r and Spearman ρ (IsoScore vs silhouette)",
                "all",
                missing,
                paper_says=says,
            )
        ]
    rows = []
    overall = table[table["scope"] == "all"]
    for _, ours in overall.iterrows():
        encoder = (config.get("encoders") or {}).get(ours["encoder"], {})
        stand_in = stand.word_vectors if encoder.get("kind") == "word-vectors" else ""
        for column, name, limit in (
            ("spearman_rho", "Spearman ρ", -0.5),
            ("pearson_r", "Pearson r", 0.0),
        ):
            value = float(ours[column])
            verdict = (
                (CONSISTENT if value < limit else NOT_CONSISTENT)
                if math.isfinite(value)
                else NOT_CONSISTENT
            )
            rows.append(row(source, f"{name}, IsoScore vs silhouette", f"{ours['encoder']}/{ours['dataset']}", paper_says=says, our_value=value, unit="correlation",
                            convention=f"all recorded steps of all seeds pooled ({int(ours['points'])} points)", stand_in=stand_in, tolerance=f"{name} < {limit:g}", verdict=verdict))  # fmt: skip
    return rows


def _glue_count_rows(table2: pd.DataFrame | None) -> list[dict[str, Any]]:
    source = f"{MICKUS}, appendix A, Table 2 (papers.md §1)"
    says = "items and parameters per model × task: printed in the paper, not recorded in papers.md"
    if table2 is None:
        return [
            not_run(
                source,
                "items, parameters",
                "all",
                "GLUE study not part of this run",
                paper_says=says,
            )
        ]
    rows = [
        row(
            source,
            "items",
            f"{r['encoder']}/{r['dataset']}",
            paper_says=says,
            our_value=int(r["items"]),
            unit="items",
            verdict=NO_NUMBER,
            note=f"{int(r['params'])} parameters",
        )
        for _, r in table2.iterrows()
    ]
    missing = sorted(
        {f"{e}/{t}" for e in GLUE_ENCODERS for t in GLUE_TASKS}
        - {f"{r['encoder']}/{r['dataset']}" for _, r in table2.iterrows()}
    )
    if missing:
        rows.append(
            not_run(
                source,
                "items, parameters",
                ", ".join(missing),
                "model × task not configured (glue.encoders, glue.tasks)",
                paper_says=says,
            )
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Cai et al. 2021: Table 3 (LID), S_inter / S_intra


def _geometry_models(config: Mapping[str, Any], part: str) -> dict[str, str]:
    """Configured models of ``geometry.<part>.models`` → hub name."""
    geometry = config.get("geometry") or {}
    return {
        name: geometry["models"][name]["model"]
        for name in (geometry.get(part) or {}).get("models", [])
    }


def _lid_rows(
    lid: pd.DataFrame | None, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    source = f"{CAI}, Table 3 (papers.md §4)"
    convention = "Levina–Bickel MLE, k nearest neighbours, Euclidean, on squared distances as Cai et al.'s faiss L2 search returns them (half the MLE on distances)"
    rows = []
    models = _geometry_models(config, "clusters") if lid is not None else {}
    for paper, value in CAI_TABLE3_LID.items():
        if lid is None:
            rows.append(
                not_run(
                    source,
                    "LID",
                    paper,
                    "geometry study (clusters) not part of this run",
                    paper_value=value,
                    unit="dimensions",
                )
            )
            continue
        euclidean = lid[lid["metric"] == "euclidean"]
        if paper == "GloVe":
            ours = euclidean[euclidean["kind"] == "static"]
            stand_in = (
                stand.word_vectors.replace(
                    "for NLPL word2vec model 222 (300-d)", "for the paper's GloVe"
                )
                if stand.word_vectors
                else "NLPL word2vec model 222 (300-d) for the paper's GloVe"
            )
            setup, layer_note = "static word vectors", ""
        else:
            own = [name for name, hub in models.items() if paper_model(hub) == paper]
            # a model the paper did not study stands in for BERT (the paper's first and main model)
            others = (
                [name for name, hub in models.items() if paper_model(hub) is None]
                if paper == "BERT"
                else []
            )
            chosen = (own or others)[:1]
            if not chosen:
                rows.append(
                    not_run(
                        source,
                        "LID",
                        paper,
                        f"no model of geometry.clusters.models is {paper}",
                        paper_value=value,
                        unit="dimensions",
                    )
                )
                continue
            name = chosen[0]
            per_layer = (
                euclidean[(euclidean["kind"] == "contextual") & (euclidean["model"] == name)]
                .groupby("layer")["lid_cai_scale"]
                .mean()
            )
            ours = euclidean[
                (euclidean["kind"] == "contextual")
                & (euclidean["model"] == name)
                & (euclidean["layer"] == per_layer.index.max())
            ]
            stand_in = _model_stand_in(name, models[name], paper)
            setup = f"{name}, last layer ({int(per_layer.index.max())})"
            layer_note = f"layers {per_layer.min():.2f}–{per_layer.max():.2f}; papers.md does not say which layer Table 3 reports, the last is compared"
        if ours.empty:
            rows.append(
                not_run(
                    source,
                    "LID",
                    paper,
                    "no matching row in results/geometry/lid.csv",
                    paper_value=value,
                    unit="dimensions",
                )
            )
            continue
        value_ours = float(ours["lid_cai_scale"].mean())
        true = float(ours["lid_true_distances"].mean())
        k, n = int(ours["k"].iloc[0]), int(ours["n"].iloc[0])
        corpus = stand.corpus if paper != "GloVe" else ""
        rows.append(row(source, "LID", f"{paper}: {setup}", paper_value=value, our_value=value_ours, unit="dimensions", convention=f"{convention}; k = {k}, n = {n}",
                        stand_in="; ".join(s for s in (stand_in, corpus) if s), tolerance=f"±{LID_RELATIVE_TOLERANCE:.0%}",
                        verdict=within(value_ours, value, relative=LID_RELATIVE_TOLERANCE), note="; ".join(s for s in (f"true-distance MLE {true:.2f}", layer_note) if s)))  # fmt: skip
    return rows


def _cosine_rows(
    cosine: pd.DataFrame | None, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    source = f"{CAI}, S_inter / S_intra by layer (papers.md §4)"
    if cosine is None:
        return [
            not_run(
                source,
                "S_inter, S_intra",
                "all",
                "geometry study (clusters) not part of this run",
                paper_says="high at every layer; nearly isotropic within clusters",
            )
        ]
    models = _geometry_models(config, "clusters")
    rows = []
    for name, group in cosine[cosine["kind"] == "contextual"].groupby("model", sort=False):
        stand_in = "; ".join(
            s
            for s in (
                _model_stand_in(
                    name, models.get(name, name), paper_model(models.get(name, "")) or "BERT"
                ),
                stand.corpus,
            )
            if s
        )
        per_layer = group.groupby("layer")[
            ["s_inter", "s_intra", "s_inter_adjusted", "s_intra_adjusted"]
        ].mean()
        layers = f"{name}, layers {int(per_layer.index.min())}–{int(per_layer.index.max())}"
        for column, quantity, says in (("s_inter", "S_inter, raw", "high at every layer (the space looks anisotropic globally)"),
                                       ("s_intra", "S_intra, raw", "high at every layer")):  # fmt: skip
            rows.append(row(source, quantity, layers, paper_says=says, our_value=float(per_layer[column].min()), unit="mean cosine (minimum over layers)",
                            convention="Cai et al.'s intercos / intracos (one random instance per type for S_inter)", stand_in=stand_in, verdict=NO_NUMBER, note=f"range {per_layer[column].min():.3f}–{per_layer[column].max():.3f}"))  # fmt: skip
        worst = float(per_layer["s_inter_adjusted"].abs().max())
        rows.append(row(source, "S_inter, cluster-adjusted", layers, paper_says="nearly isotropic within clusters once each cluster's mean is subtracted",
                        our_value=worst, unit="|mean cosine| (maximum over layers)", convention="per cluster: centred on its own mean, pairs inside the cluster, unweighted mean over clusters (Cai et al.'s --cluster_cos --center)",
                        stand_in=stand_in, tolerance="≤ 0.1 at every layer (our reading of 'nearly isotropic')", verdict=CONSISTENT if worst <= 0.1 else NOT_CONSISTENT,
                        note=f"S_intra adjusted {per_layer['s_intra_adjusted'].min():.3f}–{per_layer['s_intra_adjusted'].max():.3f}"))  # fmt: skip
    return rows


# ---------------------------------------------------------------------------------------------
# Rajaee & Pilehvar 2021: STS-B before/after, I(W)


def _sts_rows(
    sts: pd.DataFrame | None, config: Mapping[str, Any], stand: StandIns
) -> list[dict[str, Any]]:
    source = f"{RAJAEE}, STS-B with pre-trained BERT-base (papers.md §4)"
    models = _geometry_models(config, "sts") if sts is not None else {}
    stsb = sts[sts["dataset"] == "stsb"] if sts is not None else None
    rows = []
    for (method, column), value in RAJAEE_STSB.items():
        quantity = {"pearson": "Pearson ×100", "spearman": "Spearman ×100", "isotropy": "I(W)"}[
            column
        ] + f", {'before' if method == 'none' else 'after the cluster-based method'}"
        if stsb is None or stsb.empty:
            rows.append(
                not_run(
                    source,
                    quantity,
                    "BERT-base",
                    "no STS-B result in this run (geometry.sts)",
                    paper_value=value,
                )
            )
            continue
        for name, group in stsb.groupby("model", sort=False):
            ours = group[group["method"] == method]
            if ours.empty:
                rows.append(
                    not_run(
                        source,
                        quantity,
                        name,
                        f"method {method!r} not in geometry.sts.methods",
                        paper_value=value,
                    )
                )
                continue
            pipeline = (
                str(ours["pipeline"].iloc[0])
                if "pipeline" in ours
                else "mean-pooled sentence vectors transformed"
            )
            stand_in = "; ".join(
                s
                for s in (_model_stand_in(name, models.get(name, name), "BERT"), stand.sts_split)
                if s
            )
            our_value = float(ours[column].mean())
            if column == "isotropy":
                verdict, tolerance, unit = (
                    within(our_value, value, factor=ISOTROPY_FACTOR_TOLERANCE),
                    f"within a factor {ISOTROPY_FACTOR_TOLERANCE:g}",
                    "ratio (1 = isotropic)",
                )
                convention = f"I(W) with the eigenvectors' signs as numpy returns them (Rajaee's isotropy()); {pipeline}"
                note = (
                    f"sign-free I(W) {ours['isotropy_sign_free'].mean():.3g}"
                    if "isotropy_sign_free" in ours
                    else ""
                )
            else:
                verdict, tolerance, unit = (
                    within(our_value, value, absolute=STS_POINTS_TOLERANCE),
                    f"±{STS_POINTS_TOLERANCE:g} points",
                    "correlation ×100",
                )
                convention, note = f"cosine of sentence vectors vs gold; {pipeline}", ""
            n_clusters, n_directions = (
                int(ours["n_clusters"].iloc[0]),
                int(ours["n_directions"].iloc[0]),
            )
            setting = (
                f"{n_clusters} clusters, {n_directions} directions" if method != "none" else ""
            )
            rows.append(row(source, quantity, f"{name}, STS-B {ours['split'].iloc[0]}", paper_value=value, our_value=our_value, unit=unit, convention=convention,
                            stand_in=stand_in, tolerance=tolerance, verdict=verdict, note="; ".join(s for s in (setting, note) if s)))  # fmt: skip
    return rows


# ---------------------------------------------------------------------------------------------
# I-STAR: direction of effect


def _istar_rows(runs: pd.DataFrame | None, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    source = f"{ISTAR}, Figures 5-6 (papers.md §3)"
    says = "decreasing isotropy (λ < 0) improves performance"
    if runs is None:
        return [
            not_run(
                source,
                "direction of effect",
                "all",
                "I-STAR study not part of this run",
                paper_says=says,
            )
        ]
    models = {
        name: entry.get("model", name)
        for name, entry in ((config.get("istar") or {}).get("models") or {}).items()
    }
    rows = []
    for (model, task), group in runs.groupby(["model", "task"], sort=True):
        baseline = group[group["regulariser"] == "none"]
        negative = group[(group["regulariser"] == "istar") & (group["lambda"].astype(float) < 0)]
        hub = models.get(model, model)
        stand_in = (
            ""
            if any(key in hub.lower() for key in ("bert-base", "albert-base", "distilbert-base"))
            else f"{model} ({hub}) for BERT-base / ALBERT / DistilBERT"
        )
        if baseline.empty or negative.empty:
            rows.append(
                not_run(
                    source,
                    "direction of effect",
                    f"{model}/{task}",
                    "needs the unregularised baseline and λ < 0 runs",
                    paper_says=says,
                    stand_in=stand_in,
                )
            )
            continue
        per_lambda = negative.groupby(negative["lambda"].astype(float))[
            ["isoscore_star", "metric"]
        ].mean()
        iso_change = float(per_lambda["isoscore_star"].max() - baseline["isoscore_star"].mean())
        gain = float(per_lambda["metric"].max() - baseline["metric"].mean())
        seeds = group["seed"].nunique()
        rows.append(row(source, "IsoScore* (ζ = 0.75), λ < 0 minus no regulariser", f"{model}/{task}", paper_says="negative λ lowers isotropy", our_value=iso_change, unit="IsoScore* difference (largest over λ < 0)",
                        stand_in=stand_in, tolerance="< 0", verdict=CONSISTENT if iso_change < 0 else NOT_CONSISTENT, note=f"{seeds} seed(s)"))  # fmt: skip
        rows.append(row(source, "task metric, best λ < 0 minus no regulariser", f"{model}/{task}", paper_says=says, our_value=gain, unit="metric difference (0-1 scale)",
                        stand_in=stand_in, tolerance="≥ 0", verdict=CONSISTENT if gain >= 0 else NOT_CONSISTENT, note=f"{seeds} seed(s)"))  # fmt: skip
    return rows


# ---------------------------------------------------------------------------------------------
# The whole table


def _read(path: str | Path | None) -> pd.DataFrame | None:
    return pd.read_csv(path) if path else None


def compare_results(
    tables: Mapping[str, str | Path | None], config: Mapping[str, Any], stand: StandIns
) -> pd.DataFrame:
    """Every paper number beside ours. ``tables``: named result tables of this run (see
    :func:`workflow_inputs`); a name that is absent or None means its study is not part of the run."""
    get = lambda name: _read(tables.get(name))  # noqa: E731
    says_main = "strongly negative; ρ close to −1 (no number in papers.md)"
    rows = _counts_rows(get("main_table1"), config, stand)
    rows += _correlation_rows(
        get("main_correlations"),
        f"{MICKUS}, §3 (papers.md §1)",
        says_main,
        missing="main study not part of this run",
        stand=stand,
        config=config,
    )
    rows += _glue_count_rows(get("glue_table2"))
    rows += _correlation_rows(
        get("glue_table3"),
        f"{MICKUS}, appendix A, Table 3 (papers.md §1)",
        "all strongly negative (no number in papers.md)",
        missing="GLUE study not part of this run",
        stand=stand,
        config=config,
    )
    rows += _lid_rows(get("geometry_lid"), config, stand)
    rows += _cosine_rows(get("geometry_cosine"), config, stand)
    rows += _sts_rows(get("geometry_sts"), config, stand)
    rows += _istar_rows(get("istar_runs"), config)
    return pd.DataFrame(rows, columns=COLUMNS)


def _number(value: float) -> str:
    if value is None or not math.isfinite(value):
        return ""
    if value == int(value) and abs(value) >= 100:
        return f"{int(value):,}"
    return f"{value:.3g}" if abs(value) < 0.01 else f"{value:.4g}"


def comparison_markdown(table: pd.DataFrame) -> str:
    """The comparison as a markdown document: counts of verdicts, then one table per paper."""
    counts = table["verdict"].value_counts()
    lines = [
        "# Our numbers beside the papers'",
        "",
        "Every number the seed papers print (as recorded in docs/papers.md), beside the value this run measured. "
        "Verdicts: "
        + ", ".join(
            f"{counts.get(v, 0)} {v}"
            for v in (AGREES, DIFFERS, CONSISTENT, NOT_CONSISTENT, NO_NUMBER, NOT_RUN)
        )
        + ".",
        "A *stand-in* names what we used where the paper used something else: a verdict then compares the stand-in, not the paper's setup.",
        "",
    ]
    for paper in (MICKUS, CAI, RAJAEE, ISTAR):
        part = table[table["source"].str.startswith(paper)]
        if part.empty:
            continue
        lines += [
            f"## {paper}",
            "",
            "| source | quantity | setup | paper | ours | unit | tolerance | verdict | stand-in | convention / note |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for _, r in part.iterrows():
            paper_cell = _number(r["paper_value"]) or r["paper_says"]
            cells = [
                r["source"].removeprefix(paper).strip(", "),
                r["quantity"],
                r["setup"],
                paper_cell,
                _number(r["our_value"]),
                r["unit"],
                r["tolerance"],
                f"**{r['verdict']}**",
                r["stand_in"],
                "; ".join(s for s in (r["convention"], r["note"]) if isinstance(s, str) and s),
            ]
            lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Workflow helpers (rules/provenance.smk)


def workflow_inputs(config: Mapping[str, Any]) -> dict[str, str]:
    """The named inputs of rule ``compare_with_papers``: the result tables this run builds."""
    from isotropy.claims import configured_studies
    from isotropy.studies import study_runs

    studies = configured_studies(config)
    inputs: dict[str, str] = {}
    if "main" in studies and study_runs(dict(config), "main"):
        inputs.update(
            main_table1="results/main/table1.csv", main_correlations="results/main/correlations.csv"
        )
    if "glue" in studies and study_runs(dict(config), "glue"):
        inputs.update(glue_table2="results/glue/table2.csv", glue_table3="results/glue/table3.csv")
    if "geometry" in studies:
        from isotropy.studies import geometry_targets

        targets = geometry_targets(dict(config))
        for name, path in (
            ("geometry_lid", "results/geometry/lid.csv"),
            ("geometry_cosine", "results/geometry/cosine_by_layer.csv"),
            ("geometry_sts", "results/geometry/sts.csv"),
        ):
            if path in targets:
                inputs[name] = path
    if "istar" in studies:
        from isotropy.claims import workflow_inputs as claims_inputs

        if "istar_runs" in claims_inputs(config):
            inputs["istar_runs"] = "results/istar/runs.csv"
    return inputs


def config_subset(config: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of the configuration the comparison reads (rule params: a change re-runs it)."""
    geometry = config.get("geometry") or {}
    return {
        "encoders": dict(config.get("encoders") or {}),
        "main": {"setups": dict((config.get("main") or {}).get("setups") or {})},
        "geometry": {
            "models": dict(geometry.get("models") or {}),
            "clusters": {"models": list((geometry.get("clusters") or {}).get("models") or [])},
            "sts": {"models": list((geometry.get("sts") or {}).get("models") or [])},
        },
        "istar": {"models": dict((config.get("istar") or {}).get("models") or {})},
    }


def encoder_labels(config: Mapping[str, Any], stand: Mapping[str, str]) -> dict[str, str]:
    """Encoder name → what its vectors really are, for figure panels: the word-vector stand-in
    by name ("GloVe 50-d (stand-in for word2vec 300-d)", NLPL model 222 being 300-d), every
    other encoder by its configured name."""
    labels = {}
    for name, entry in (config.get("encoders") or {}).items():
        standing_in = (
            entry.get("kind") == "word-vectors"
            and entry.get("source") == "word2vec"
            and stand.get("word_vectors_label")
        )
        labels[name] = (
            f"{stand['word_vectors_label']} (stand-in for {name} 300-d)" if standing_in else name
        )
    return labels


def workflow_stand_ins(config: Mapping[str, Any]) -> dict[str, str]:
    """:func:`describe_stand_ins` with the mirror this run reads from ($ISOTROPY_MIRROR or config)."""
    from isotropy.download import resolve_mirror

    mirror = resolve_mirror(config.get("mirror"))
    return describe_stand_ins(config, str(mirror) if mirror else None)
