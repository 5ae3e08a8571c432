"""The geometry study's measurements (Cai et al.; Rajaee & Pilehvar): LID with n, k and the
per-type cap, the cluster-adjusted S_inter, STS correlations and I(W) per method.

Rows as :func:`isotropy.verdicts.measurements.measurement` builds them. Cai et al.'s Table 3 is
cosine LID (their slides: "A comparison of LIDs (using cosine similarity)"), so ``lid_cosine``
is the cosine estimate; the Euclidean one on their code's squared-distance scale (their
Figure 9) is stated in the note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from isotropy.verdicts.measurements import measurement, seed_std
from isotropy.verdicts.standins import StandIns, model_stand_in, paper_model
from isotropy.workflow import paths

LID_FILE, COSINE_FILE, STS_FILE = paths.GEOMETRY_LID, paths.GEOMETRY_COSINE, paths.GEOMETRY_STS
# STS methods no seed enters (no k-means / GMM clustering): one run is the whole measurement.
SEED_FREE_METHODS = ("none", "centring", "all-but-the-top")
QUANTITY_OF_STS = {"pearson": "sts_pearson", "spearman": "sts_spearman", "isotropy": "isotropy_iw"}


def _models(config: Mapping[str, Any], part: str) -> dict[str, str]:
    """Configured models of ``geometry.<part>.models`` → hub name."""
    geometry = config.get("geometry") or {}
    known = geometry.get("models") or {}
    return {name: (known.get(name) or {}).get("model") or name for name in (geometry.get(part) or {}).get("models", [])}  # fmt: skip


def _cai_setup(name: str, hub: str) -> str:
    """The Table 3 row a model is compared with: its own, or BERT (the paper's main model) for a
    model the paper did not study."""
    return paper_model(hub) or "BERT"


def _cap(config: Mapping[str, Any]) -> str:
    clusters = (config.get("geometry") or {}).get("clusters") or {}
    cap = clusters.get("max_per_type", 20)
    return "none" if cap is None else str(cap)


def _lid_seed_free(config: Mapping[str, Any], kind: str) -> bool:
    """Whether no seed changes the LID: every point indexed (no seeded sample)."""
    clusters = (config.get("geometry") or {}).get("clusters") or {}
    if kind == "static":
        return (clusters.get("static") or {}).get("sample_size", 10000) is None
    return "lid_sample_size" in clusters and clusters["lid_sample_size"] is None


def lid_measurements(lid: pd.DataFrame, config: Mapping[str, Any], stand: StandIns) -> list[dict[str, Any]]:  # fmt: skip
    """Per model (last layer) and for the static vectors: cosine LID (with each seed's value),
    its n and k, and the dimension."""
    models = _models(config, "clusters")
    rows = []
    keys = ["kind", "model"]
    for (kind, name), group in lid.groupby(keys, sort=False):
        last = group if kind == "static" else group[group["layer"] == group["layer"].max()]
        cosine, euclidean = last[last["metric"] == "cosine"], last[last["metric"] == "euclidean"]
        if kind == "static":
            setup, paper, cap = "static word vectors", "GloVe", "one vector per word"
            stand_in = stand.word_vectors.replace("for NLPL word2vec model 222 (300-d)", "for the paper's GloVe") if stand.word_vectors else ""  # fmt: skip
            layers = ""
        else:
            hub = models.get(name, name)
            paper = _cai_setup(name, hub)
            setup, cap = f"{name}, last layer ({int(last['layer'].iloc[0])})", _cap(config)
            stand_in = "; ".join(s for s in (model_stand_in(name, hub, paper), stand.corpus) if s)
            per_layer = group[group["metric"] == "cosine"].groupby("layer")["lid_cai_scale"].mean()
            layers = f"cosine LID over layers {per_layer.min():.2f}–{per_layer.max():.2f}; Table 3 does not say which layer, the last is compared" if len(per_layer) else ""  # fmt: skip
        source = last.iloc[0]
        n, k, dim = int(source["n"]), int(source["k"]), int(source["dim"])
        common = dict(n=n, k=k, per_type_cap=cap, stand_in=stand_in, evidence=LID_FILE)
        euclid = f"Euclidean on Cai's squared-distance scale (their Figure 9) {euclidean['lid_cai_scale'].mean():.2f}, true-distance MLE {euclidean['lid_true_distances'].mean():.2f}" if len(euclidean) else ""  # fmt: skip
        if cosine.empty:
            rows.append(measurement("geometry", "lid_cosine", setup, paper, missing="no cosine LID in lid.csv (geometry.clusters.lid_metrics)", **common))  # fmt: skip
        else:
            per_seed = tuple(cosine.groupby("seed")["lid_cai_scale"].mean())
            rows.append(measurement("geometry", "lid_cosine", setup, paper, cosine["lid_cai_scale"].mean(), spread=seed_std(cosine["lid_cai_scale"]), seeds=cosine["seed"].nunique(),
                                    per_seed=per_seed, seed_free=_lid_seed_free(config, kind),
                                    unit="dimensions", convention=f"Levina–Bickel MLE, cosine distance, k = {k}, neighbours within a sample of n = {n} (per-type cap {cap})",
                                    note="; ".join(s for s in (euclid, layers) if s), **common))  # fmt: skip
        rows.append(measurement("geometry", "lid_n", setup, paper, n, unit="tokens", convention="points indexed and queried (the LID sample)", **common))  # fmt: skip
        rows.append(measurement("geometry", "dim", setup, paper, dim, unit="dimensions", convention="embedding dimension", **common))  # fmt: skip
    return rows


def cosine_measurements(cosine: pd.DataFrame, config: Mapping[str, Any], stand: StandIns) -> list[dict[str, Any]]:  # fmt: skip
    """Per model: the largest |S_inter| after cluster-mean removal over layers (raw S_inter and
    S_intra ranges in the note)."""
    models = _models(config, "clusters")
    rows = []
    for name, group in cosine[cosine["kind"] == "contextual"].groupby("model", sort=False):
        hub = models.get(name, name)
        paper = _cai_setup(name, hub)
        per_layer = group.groupby("layer")[["s_inter", "s_intra", "s_inter_adjusted", "s_intra_adjusted"]].mean()  # fmt: skip
        note = "; ".join(
            f"{label} {per_layer[column].min():.3f}–{per_layer[column].max():.3f}"
            for column, label in (("s_inter", "raw S_inter"), ("s_intra", "raw S_intra"), ("s_intra_adjusted", "S_intra adjusted"))
        )  # fmt: skip
        rows.append(measurement("geometry", "s_inter_adjusted_max", f"{name}, layers {int(per_layer.index.min())}–{int(per_layer.index.max())}", paper,
                                float(per_layer["s_inter_adjusted"].abs().max()), unit="|mean cosine| (maximum over layers)",
                                convention="per cluster: centred on its own mean, pairs inside the cluster, unweighted mean over clusters (Cai et al.'s --cluster_cos --center)",
                                stand_in="; ".join(s for s in (model_stand_in(name, hub, paper), stand.corpus) if s), evidence=COSINE_FILE, note=note))  # fmt: skip
    return rows


def sts_measurements(sts: pd.DataFrame, config: Mapping[str, Any], stand: StandIns, *, enhanced: str = "cluster-based") -> list[dict[str, Any]]:  # fmt: skip
    """Per model × STS data set × method: Pearson ×100, Spearman ×100 and I(W) (seed means);
    per model × data set, the cluster-based method's I(W) ratio and Spearman gain over none."""
    needed = {"model", "dataset", "method", "spearman", "isotropy"}
    if missing := needed - set(sts.columns):
        raise ValueError(f"STS table lacks columns {sorted(missing)}; found {list(sts.columns)}")
    models = _models(config, "sts")
    rows = []
    for (name, dataset), group in sts.groupby(["model", "dataset"], sort=True):
        split = str(group["split"].iloc[0]) if "split" in group else ""
        setup = f"{name}, {dataset} {split}".strip()
        stand_in = "; ".join(s for s in (model_stand_in(name, models.get(name, name), "BERT"), stand.sts_split if dataset == "stsb" else "") if s)  # fmt: skip
        pipeline = str(group["pipeline"].iloc[0]) if "pipeline" in group else "mean-pooled sentence vectors transformed"  # fmt: skip
        for method, runs in group.groupby("method", sort=False):
            first = runs.iloc[0]
            setting = f"{int(first['n_clusters'])} clusters, {int(first['n_directions'])} directions" if method != "none" and "n_clusters" in runs else ""  # fmt: skip
            for column, quantity in QUANTITY_OF_STS.items():
                if column not in runs:
                    continue
                sign_free = f"sign-free I(W) {runs['isotropy_sign_free'].mean():.3g}" if column == "isotropy" and "isotropy_sign_free" in runs else ""  # fmt: skip
                convention = f"I(W) with the eigenvectors' signs as numpy returns them (Rajaee's isotropy()); {pipeline}" if column == "isotropy" else f"cosine of sentence vectors vs gold; {pipeline}"  # fmt: skip
                per_seed = tuple(runs.groupby("seed")[column].mean()) if "seed" in runs else (runs[column].mean(),)  # fmt: skip
                rows.append(measurement("geometry", quantity, setup, f"{dataset}/{method}", runs[column].mean(), spread=seed_std(runs[column]), seeds=runs["seed"].nunique() if "seed" in runs else None,
                                        per_seed=per_seed, seed_free=method in SEED_FREE_METHODS,
                                        n=int(first["n_pairs"]) if "n_pairs" in runs else None, unit="ratio (1 = isotropic)" if column == "isotropy" else "correlation ×100",
                                        convention=convention, stand_in=stand_in, evidence=STS_FILE, note="; ".join(s for s in (setting, sign_free) if s)))  # fmt: skip
        means = group.groupby("method")[["spearman", "isotropy"]].mean()
        claim_setup = f"{name}/{dataset}"
        if "none" not in means.index or enhanced not in means.index:
            for quantity in ("sts_isotropy_ratio", "sts_spearman_gain"):
                rows.append(measurement("geometry", quantity, claim_setup, claim_setup, evidence=STS_FILE, missing=f"sts.csv lacks method 'none' or {enhanced!r}"))  # fmt: skip
            continue
        before, after = means.loc["none"], means.loc[enhanced]
        ratio = after["isotropy"] / before["isotropy"] if before["isotropy"] > 0 else float("nan")
        rows.append(measurement("geometry", "sts_isotropy_ratio", claim_setup, claim_setup, ratio, unit="ratio", evidence=STS_FILE, note=f"I(W) {before['isotropy']:.3g} → {after['isotropy']:.3g}"))  # fmt: skip
        # sts.csv stores correlations ×100 (isotropy.geometry.evaluate_sts), as the paper reports them.
        rows.append(measurement("geometry", "sts_spearman_gain", claim_setup, claim_setup, after["spearman"] - before["spearman"], unit="Spearman ×100 difference",
                                evidence=STS_FILE, note=f"Spearman×100 {before['spearman']:.2f} → {after['spearman']:.2f}"))  # fmt: skip
    return rows


def geometry_measurements(tables: Mapping[str, pd.DataFrame | None], config: Mapping[str, Any], stand: StandIns) -> list[dict[str, Any]]:  # fmt: skip
    rows: list[dict[str, Any]] = []
    if tables.get("geometry_lid") is not None:
        rows += lid_measurements(tables["geometry_lid"], config, stand)
    if tables.get("geometry_cosine") is not None:
        rows += cosine_measurements(tables["geometry_cosine"], config, stand)
    if tables.get("geometry_sts") is not None:
        rows += sts_measurements(tables["geometry_sts"], config, stand)
    return rows
