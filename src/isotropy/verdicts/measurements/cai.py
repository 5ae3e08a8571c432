"""The geometry study after Cai et al.: LID with n, k and the per-type cap (Table 3 is cosine
LID), the cosine statistics by layer and the cluster-adjusted S_inter."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pandas as pd

from isotropy import paths
from isotropy.standins import CAI_MODELS, StandIns, model_stand_in, paper_name
from isotropy.verdicts.measurements import Config, Row, at_setup, joined, over_seeds


def _cai_setup(config: Config, name: str, stand: StandIns) -> tuple[str, str]:
    """The Table 3 row a model is compared with (its own, else BERT's) and the stand-ins."""
    paper = paper_name(config, name)
    paper = paper if paper in CAI_MODELS else "BERT"
    return paper, joined(model_stand_in(config, name, paper), stand.corpus)


def lid_measurements(lid: pd.DataFrame, config: Config, stand: StandIns) -> list[Row]:
    """Per model (last layer) and for the static vectors: cosine LID, its n, and the dimension."""
    rows = []
    clusters = config["geometry"]["clusters"]  # inputs.config_subset's: every key it reads
    for (kind, name), group in lid.groupby(["kind", "model"], sort=False):
        last = group if kind == "static" else group[group["layer"] == group["layer"].max()]
        n, k, dim = (int(last.iloc[0][column]) for column in ("n", "k", "dim"))
        if kind == "static":  # every point indexed when no seeded sample is drawn
            glove = "for the paper's GloVe"
            stand_in = stand.word_vectors.replace("for NLPL word2vec model 222 (300-d)", glove)
            setup, paper, cap, layers = "static word vectors", "GloVe", "one vector per word", ""
            seed_free = clusters["static"]["sample_size"] is None
        else:
            paper, stand_in = _cai_setup(config, name, stand)
            setup = f"{name}, last layer ({int(group['layer'].max())})"
            cap = "none" if clusters["max_per_type"] is None else str(clusters["max_per_type"])
            per_layer = group[group["metric"] == "cosine"].groupby("layer")["lid_cai_scale"].mean()
            layers = (  # used only where the last layer has a cosine LID: never empty
                f"cosine LID over layers {per_layer.min():.2f}–{per_layer.max():.2f}; Table 3 "
                "does not say which layer, the last is compared"
            )
            seed_free = clusters["lid_sample_size"] is None
        at = at_setup("geometry", setup, paper, n=n, k=k, per_type_cap=cap, stand_in=stand_in)
        at = partial(at, evidence=paths.GEOMETRY_LID)
        sample = f"k = {k}, neighbours within a sample of n = {n} (per-type cap {cap})"
        rows.append(_lid_cosine_row(last, layers, sample, seed_free, at))
        rows.append(at("lid_n", value=n, convention="points indexed and queried (the LID sample)"))
        rows.append(at("dim", value=dim, convention="embedding dimension"))
    return rows


def _lid_cosine_row(
    last: pd.DataFrame, layers: str, sample: str, seed_free: bool, at: Callable[..., Row]
) -> Row:
    """The cosine LID of one model's last layer or of the static vectors."""
    cosine, euclidean = last[last["metric"] == "cosine"], last[last["metric"] == "euclidean"]
    if cosine.empty:
        return at("lid_cosine", missing="no cosine LID in lid.csv (geometry.clusters.lid_metrics)")
    euclid = ""
    if len(euclidean):
        euclid = (
            "Euclidean on Cai's squared-distance scale (their Figure 9) "
            f"{euclidean['lid_cai_scale'].mean():.2f}, true-distance MLE "
            f"{euclidean['lid_true_distances'].mean():.2f}"
        )
    at = partial(at, seed_free=seed_free, note=joined(euclid, layers))
    convention = f"Levina–Bickel MLE, cosine distance, {sample}"
    return at("lid_cosine", **over_seeds(cosine, "lid_cai_scale"), convention=convention)


# cosine_by_layer.csv's column → its range over layers in a row's note
RANGES = {
    "s_inter": "raw S_inter",
    "s_intra": "raw S_intra",
    "s_intra_adjusted": "S_intra adjusted",
}
CLUSTER_COS = (
    "per cluster: centred on its own mean, pairs inside the cluster, unweighted mean over "
    "clusters (Cai et al.'s --cluster_cos --center)"
)


def cosine_measurements(cosine: pd.DataFrame, config: Config, stand: StandIns) -> list[Row]:
    """Per model: the largest |S_inter| over layers after cluster-mean removal; within-cluster."""
    rows = []
    for name, group in cosine[cosine["kind"] == "contextual"].groupby("model", sort=False):
        paper, stand_in = _cai_setup(config, name, stand)
        per_layer = group.groupby("layer")[[*RANGES, "s_inter_adjusted"]].mean()
        note = "; ".join(
            f"{label} {per_layer[column].min():.3f}–{per_layer[column].max():.3f}"
            for column, label in RANGES.items()
        )
        setup = f"{name}, layers {int(per_layer.index.min())}–{int(per_layer.index.max())}"
        at = at_setup("geometry", setup, paper, stand_in=stand_in, evidence=paths.GEOMETRY_COSINE)
        value = float(per_layer["s_inter_adjusted"].abs().max())
        rows.append(at("s_inter_adjusted_max", value=value, convention=CLUSTER_COS, note=note))
        rows.append(_within_cluster_row(group, at))
    return rows


WITHIN = (
    "IsoScore of each cluster's points (k-means by silhouette, Cai et al.'s clusters), unweighted "
    "mean over clusters, divided by the same mean for isotropic Gaussian samples of the clusters' "
    "sizes and dimension"
)


def _within_cluster_row(group: pd.DataFrame, at: Callable[..., Row]) -> Row:
    """The smallest over layers of the clusters' IsoScore relative to an isotropic cloud."""
    means = dict.fromkeys(("isoscore_within", "isoscore_within_ratio"), "mean")
    per_layer = group.groupby("layer").agg({"n_clusters": "max", **means})
    single = [int(layer) for layer, k in per_layer["n_clusters"].items() if k < 2]
    judged = per_layer.drop(index=single).dropna(subset=["isoscore_within_ratio"])
    at = partial(at, "isoscore_within_ratio_min", convention=WITHIN)
    if judged.empty and single != list(per_layer.index.astype(int)):
        return at(missing="no layer with k ≥ 2 clusters has a within-cluster IsoScore")
    if judged.empty:
        return at(
            missing="k-means found one cluster (k = 1) at every layer: 'within clusters' is the "
            "whole cloud, so isotropy within clusters is not judged"
        )
    spread = (
        f"within-cluster IsoScore {judged['isoscore_within'].min():.3f}–"
        f"{judged['isoscore_within'].max():.3f} over {len(judged)} layers with k ≥ 2"
    )
    one = f"k-means found one cluster (k = 1) at layers {', '.join(map(str, single))}"
    value = float(judged["isoscore_within_ratio"].min())
    return at(value=value, note=joined(spread, one if single else ""))
