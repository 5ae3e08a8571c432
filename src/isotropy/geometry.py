"""Cluster analyses of contextual embedding spaces (papers.md section 4).

Two studies, both built on the metrics engine (``isotropy.metrics``, ``isotropy.transforms``):

* Cai et al. (ICLR 2021), "Isotropy in the contextual embedding space: clusters and
  manifolds": token embeddings of every layer of a transformer on a text corpus; per layer the
  inter-type and intra-type cosine similarities (S_inter, S_intra), raw and after k-means
  cluster centring, and the local intrinsic dimension (LID); static word vectors for comparison.
* Rajaee & Pilehvar (ACL 2021), "A cluster-based approach for improving isotropy in contextual
  embedding space": mean-pooled last-layer sentence embeddings for semantic textual similarity,
  scored with cosine similarity before and after isotropy-enhancing transforms.

Everything here is a plain function of arrays and tables, so tests exercise it without
Snakemake; the scripts in ``scripts/geometry_*.py`` only read inputs and write outputs.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from isotropy.io import atomic_path, open_npz
from isotropy.logs import ProgressLog
from isotropy.models import ModelSpec

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Configuration helpers


def load_hidden_state_model(spec: ModelSpec, device: Any = "cpu"):
    """Load ``(tokenizer, model)`` in eval mode on ``device``, returning all hidden states.

    Decoder-only tokenizers without a padding token (GPT-2) pad with their end-of-text token;
    the attention mask keeps padding out of every statistic.
    """
    from transformers import AutoModel, AutoTokenizer

    from isotropy.embeddings import resolve_model_path

    if spec.path is not None:
        try:
            source = resolve_model_path(spec.path)  # a folder, or package:<module>
        except FileNotFoundError as error:
            raise FileNotFoundError(f"geometry.models.{spec.name}.path: {error}") from None
        kwargs: dict[str, Any] = {}
    else:
        source, kwargs = spec.model, {"revision": spec.revision}
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    model = AutoModel.from_pretrained(source, output_hidden_states=True, **kwargs)
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ValueError(
                f"tokenizer of {source} has neither a padding nor an end-of-text token; cannot batch"
            )
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device)
    model.eval()
    return tokenizer, model


def _encode_batch(tokenizer, sentences: Sequence[str], max_length: int):
    encoded = tokenizer(
        list(sentences),
        padding=True,
        truncation=True,
        max_length=max_length,
        return_tensors="pt",
        return_special_tokens_mask=True,
    )
    special = encoded.pop("special_tokens_mask")
    # Only the inputs the model declares (DistilBERT rejects token_type_ids).
    inputs = {key: value for key, value in encoded.items() if key in tokenizer.model_input_names}
    return inputs, special


def table_seeds(table: pd.DataFrame) -> list[int] | None:
    """The seeds of a geometry table's rows (for its provenance record); None without a seed column."""
    return sorted(int(seed) for seed in table["seed"].unique()) if "seed" in table else None


# ---------------------------------------------------------------------------------------------
# Token embeddings (Cai et al.)


@dataclass
class TokenEmbeddings:
    """Contextual embeddings of token instances at every layer.

    ``layers[l, i]`` is instance ``i`` at hidden-state layer ``l`` (0 = the embedding layer);
    ``token_ids[i]`` its vocabulary id (the token *type*), ``tokens[i]`` its string and
    ``sentence_index[i]`` the sentence it came from.
    """

    layers: np.ndarray
    token_ids: np.ndarray
    tokens: np.ndarray
    sentence_index: np.ndarray

    def __post_init__(self) -> None:
        if self.layers.ndim != 3:
            raise ValueError(
                f"layers must be (n_layers, n_tokens, dim); got shape {self.layers.shape}"
            )
        n = self.layers.shape[1]
        for name in ("token_ids", "tokens", "sentence_index"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"{name} has {len(getattr(self, name))} entries but layers hold {n} tokens"
                )

    @property
    def n_layers(self) -> int:
        return self.layers.shape[0]

    def save(self, path: str | os.PathLike) -> None:
        """Write all arrays to one ``.npz`` file, atomically."""
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(
                    handle,
                    layers=self.layers,
                    token_ids=self.token_ids,
                    tokens=np.asarray(self.tokens, dtype=str),
                    sentence_index=self.sentence_index,
                )

    @classmethod
    def load(cls, path: str | os.PathLike) -> TokenEmbeddings:
        with open_npz(path) as data:
            return cls(data["layers"], data["token_ids"], data["tokens"], data["sentence_index"])


def extract_token_embeddings(
    sentences: Sequence[str],
    tokenizer,
    model,
    *,
    device: Any = "cpu",
    batch_size: int = 32,
    max_length: int = 128,
    max_per_type: int | None = None,
    max_tokens: int | None = None,
    progress: bool = True,
) -> TokenEmbeddings:
    """Hidden states of every layer for the token instances of ``sentences``.

    Special tokens ([CLS], [SEP], padding) are skipped. At most ``max_per_type`` instances of
    any one token type are kept (the first ones in corpus order), so frequent function words
    do not swamp the sample; extraction stops once ``max_tokens`` instances are kept.
    """
    import torch
    from tqdm.auto import tqdm

    if not sentences:
        raise ValueError("no sentences to embed")
    if max_per_type is not None and max_per_type < 1:
        raise ValueError(f"max_per_type must be at least 1 (or None); got {max_per_type}")
    counts: Counter[int] = Counter()
    chunks: list[np.ndarray] = []
    kept_ids: list[int] = []
    kept_sentences: list[int] = []
    n_kept = 0
    logged = ProgressLog(
        len(sentences), "token embeddings, sentences read"
    )  # time left, in the log
    # One progress measure: the bar shows the log's share of the work (sentences read, or kept
    # tokens against max_tokens when that cap is nearer), never a second count of its own.
    with tqdm(
        total=100,
        desc="token embeddings, share of the work",
        bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
        disable=not progress,
    ) as bar:
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start : start + batch_size]
            inputs, special = _encode_batch(tokenizer, batch, max_length)
            keep = inputs["attention_mask"].bool() & ~special.bool()
            input_ids = inputs["input_ids"]
            rows: list[int] = []
            cols: list[int] = []
            for b, t in keep.nonzero().tolist():  # row-major: corpus order
                token_id = int(input_ids[b, t])
                if max_per_type is not None and counts[token_id] >= max_per_type:
                    continue
                if max_tokens is not None and n_kept + len(rows) >= max_tokens:
                    break
                counts[token_id] += 1
                rows.append(b)
                cols.append(t)
                kept_ids.append(token_id)
                kept_sentences.append(start + b)
            if rows:
                with torch.inference_mode():
                    outputs = model(**{key: value.to(device) for key, value in inputs.items()})
                hidden = torch.stack(outputs.hidden_states)  # (layers, batch, time, dim)
                picked = hidden[
                    :,
                    torch.tensor(rows, device=hidden.device),
                    torch.tensor(cols, device=hidden.device),
                    :,
                ]
                chunks.append(picked.float().cpu().numpy())
                n_kept += len(rows)
            # Extraction stops at max_tokens: the work done is whichever limit is nearer.
            read = (start + len(batch)) / len(sentences)
            share = min(1.0, max(read, n_kept / max_tokens) if max_tokens else read)
            logged.update(len(batch), share=share if max_tokens else None)
            bar.update(100 * share - bar.n)
            if max_tokens is not None and n_kept >= max_tokens:
                break
    if not chunks:
        raise ValueError(
            f"no token left after skipping special tokens in {len(sentences)} sentences"
        )
    layers = np.concatenate(chunks, axis=1).astype(np.float32, copy=False)
    if not np.isfinite(layers).all():
        raise ValueError("the model produced non-finite hidden states")
    ids = np.asarray(kept_ids, dtype=np.int64)
    log.info(
        "kept %d token instances of %d types from the first %d of %d sentences, %d layers (dim %d)",
        layers.shape[1], len(counts), max(kept_sentences) + 1, len(sentences), layers.shape[0], layers.shape[2],
    )  # fmt: skip
    return TokenEmbeddings(
        layers,
        ids,
        np.asarray(tokenizer.convert_ids_to_tokens(ids.tolist()), dtype=str),
        np.asarray(kept_sentences, dtype=np.int64),
    )


# ---------------------------------------------------------------------------------------------
# Per-layer geometry (Cai et al.)


def _sample_rows(n: int, sample_size: int | None, seed: int) -> np.ndarray:
    if sample_size is None or sample_size >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=sample_size, replace=False))


def cluster_cosine_statistics(
    points: np.ndarray,
    types: np.ndarray | None,
    *,
    max_per_type: int | None = None,
    k_range: tuple[int, int] = (2, 15),
    silhouette_threshold: float = 0.1,
    silhouette_sample_size: int = 5000,
    seed: int = 0,
) -> tuple[dict[str, float], np.ndarray]:
    """S_inter, S_intra and the average random cosine, raw and after k-means cluster centring.

    Clusters come from ``kmeans_by_silhouette`` (one cluster when the silhouette never reaches
    the threshold, as in Cai et al.). The "adjusted" S_inter and S_intra follow Cai et al.'s code
    (``--cluster_cos --center``): each cluster centred on its own mean, pairs inside a cluster
    only, unweighted mean over clusters (:func:`isotropy.metrics.per_cluster_cosine_statistics`).
    The ``_adjusted_pooled`` values, and ``average_cosine_adjusted``, pool the whole centred space
    instead (all pairs, whatever their cluster): our earlier convention, kept as an extra.
    With ``types=None`` (static vectors: one vector per word) every word is its own type: S_inter
    is the exact mean cosine over all pairs of different words (raw, pooled and per cluster
    alike; ``average_cosine`` stays the sampled estimate) and S_intra is undefined, so it is
    left out.
    Returns the statistics and the cluster labels.
    """
    from isotropy.metrics import (
        average_cosine_similarity,
        cluster_centred,
        kmeans_by_silhouette,
        per_cluster_cosine_statistics,
        s_inter,
        s_intra,
    )

    clusters = np.asarray(
        kmeans_by_silhouette(
            points,
            k_range=tuple(k_range),
            threshold=silhouette_threshold,
            seed=seed,
            sample_size=silhouette_sample_size,
        )
    )
    centred = cluster_centred(points, clusters)
    stats: dict[str, float] = {"n_clusters": int(len(np.unique(clusters)))}
    for suffix, space in (("", points), ("_adjusted_pooled", centred)):
        stats[f"average_cosine{suffix}"] = float(average_cosine_similarity(space, seed=seed))
        if types is None:
            # every word its own type: the exact mean over all pairs of different words, the
            # definition of the contextual rows and of the per-cluster value below (so one
            # cluster gives s_inter_adjusted == s_inter_adjusted_pooled)
            stats[f"s_inter{suffix}"] = float(s_inter(space, np.arange(len(space)), seed=seed))
        else:
            stats[f"s_inter{suffix}"] = float(
                s_inter(space, types, max_per_type=max_per_type, seed=seed)
            )
            stats[f"s_intra{suffix}"] = float(
                s_intra(space, types, max_per_type=max_per_type, seed=seed)
            )
    stats["average_cosine_adjusted"] = stats.pop("average_cosine_adjusted_pooled")
    # static vectors: every word its own type, so S_inter is the mean over all pairs in a cluster
    per_cluster = per_cluster_cosine_statistics(
        points,
        np.arange(len(points)) if types is None else types,
        clusters,
        max_per_type=max_per_type,
        seed=seed,
        statistics=("s_inter",) if types is None else ("s_inter", "s_intra"),
    )
    stats["s_inter_adjusted"] = per_cluster["s_inter"]
    if types is not None:
        stats["s_intra_adjusted"] = per_cluster["s_intra"]
    return stats, clusters


def cosine_by_layer(
    embeddings: TokenEmbeddings,
    *,
    model: str,
    corpus: str,
    seed: int = 0,
    max_per_type: int | None = None,
    k_range: tuple[int, int] = (2, 15),
    silhouette_threshold: float = 0.1,
    silhouette_sample_size: int = 5000,
    progress: bool = True,
    return_clusters: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, list[np.ndarray]]:
    """One row per layer: S_inter, S_intra, average cosine (raw and cluster-adjusted), cluster count.

    With ``return_clusters`` also the k-means labels of every layer (for :func:`pca_view`).
    """
    from tqdm.auto import tqdm

    rows = []
    labels = []
    for layer in tqdm(range(embeddings.n_layers), desc=f"{model} layers", disable=not progress):
        stats, clusters = cluster_cosine_statistics(
            embeddings.layers[layer],
            embeddings.token_ids,
            max_per_type=max_per_type,
            k_range=k_range,
            silhouette_threshold=silhouette_threshold,
            silhouette_sample_size=silhouette_sample_size,
            seed=seed,
        )
        n, dim = embeddings.layers[layer].shape
        rows.append(
            {
                "model": model,
                "kind": "contextual",
                "corpus": corpus,
                "seed": seed,
                "layer": layer,
                "n": n,
                "n_types": int(len(np.unique(embeddings.token_ids))),
                "dim": dim,
                **stats,
            }
        )
        labels.append(clusters)
        log.info(
            "%s layer %d: %s", model, layer, {key: round(value, 4) for key, value in stats.items()}
        )
    table = pd.DataFrame(rows, columns=COSINE_COLUMNS)
    return (table, labels) if return_clusters else table


COSINE_COLUMNS = [
    "model", "kind", "corpus", "seed", "layer", "n", "n_types", "dim", "n_clusters",
    "s_inter", "s_intra", "average_cosine", "s_inter_adjusted", "s_intra_adjusted", "average_cosine_adjusted",
    "s_inter_adjusted_pooled", "s_intra_adjusted_pooled",
]  # fmt: skip
# lid_cai_scale: Cai et al.'s code (Euclidean: squared distances, half the MLE, their Figure 9;
# cosine: their Table 3);
# lid_true_distances: the Levina–Bickel MLE on distances. Equal for the cosine metric.
LID_COLUMNS = [
    "model",
    "kind",
    "corpus",
    "seed",
    "layer",
    "metric",
    "k",
    "n",
    "dim",
    "lid_cai_scale",
    "lid_true_distances",
]


def lid_table(
    points: np.ndarray,
    *,
    k: int = 100,
    metrics: Sequence[str] = ("euclidean", "cosine"),
    sample_size: int | None = 10000,
    seed: int = 0,
    **labels: Any,
) -> list[dict[str, Any]]:
    """Mean MLE local intrinsic dimension per distance, on a seeded sample.

    Two columns: ``lid_cai_scale`` as Cai et al.'s code computes it (squared Euclidean
    distances from a faiss L2 index, so half the MLE, the scale of their Figure 9; for cosine the
    same as ours, the convention of their Table 3) and
    ``lid_true_distances``, the Levina–Bickel estimate on distances. Neighbours are searched
    within the sample, so ``n`` (recorded) is the sample size.
    """
    from isotropy.metrics import cai_local_intrinsic_dimension, local_intrinsic_dimension

    sample = points[_sample_rows(len(points), sample_size, seed)]
    if len(sample) <= k:
        raise ValueError(
            f"LID with k={k} needs more than {k} points; got {len(sample)} (lower geometry.clusters.lid_k or embed more tokens)"
        )
    rows = []
    for metric in metrics:
        values = {
            "lid_cai_scale": cai_local_intrinsic_dimension(sample, k=k, metric=metric),
            "lid_true_distances": local_intrinsic_dimension(sample, k=k, metric=metric),
        }
        rows.append(
            {
                **labels,
                "seed": seed,
                "metric": metric,
                "k": k,
                "n": len(sample),
                "dim": sample.shape[1],
                **values,
            }
        )
    return rows


def lid_by_layer(
    embeddings: TokenEmbeddings,
    *,
    model: str,
    corpus: str,
    seed: int = 0,
    k: int = 100,
    metrics: Sequence[str] = ("euclidean", "cosine"),
    sample_size: int | None = 10000,
    progress: bool = True,
) -> pd.DataFrame:
    """LID of every layer's token embeddings (the same token sample at every layer)."""
    from tqdm.auto import tqdm

    rows: list[dict[str, Any]] = []
    for layer in tqdm(range(embeddings.n_layers), desc=f"{model} LID", disable=not progress):
        rows.extend(
            lid_table(
                embeddings.layers[layer],
                k=k,
                metrics=metrics,
                sample_size=sample_size,
                seed=seed,
                model=model,
                kind="contextual",
                corpus=corpus,
                layer=layer,
            )
        )
    return pd.DataFrame(rows, columns=LID_COLUMNS)


def static_geometry(
    vectors: np.ndarray,
    *,
    name: str,
    seed: int = 0,
    sample_size: int | None = 10000,
    lid_k: int = 100,
    lid_metrics: Sequence[str] = ("euclidean", "cosine"),
    k_range: tuple[int, int] = (2, 15),
    silhouette_threshold: float = 0.1,
    silhouette_sample_size: int = 5000,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cosine statistics and LID of a seeded sample of static word vectors (the comparison rows).

    One vector per word: S_inter is the average cosine between different words; S_intra is
    undefined and left empty.
    """
    sample = vectors[_sample_rows(len(vectors), sample_size, seed)].astype(np.float32)
    stats, _ = cluster_cosine_statistics(
        sample,
        None,
        k_range=k_range,
        silhouette_threshold=silhouette_threshold,
        silhouette_sample_size=silhouette_sample_size,
        seed=seed,
    )
    labels = {"model": name, "kind": "static", "corpus": "", "layer": pd.NA}
    cosine = pd.DataFrame(
        [
            {
                **labels,
                "seed": seed,
                "n": len(sample),
                "n_types": len(sample),
                "dim": sample.shape[1],
                **stats,
            }
        ],
        columns=COSINE_COLUMNS,
    )
    lid = pd.DataFrame(
        lid_table(sample, k=lid_k, metrics=lid_metrics, sample_size=None, seed=seed, **labels),
        columns=LID_COLUMNS,
    )
    return cosine, lid


def pca_view(
    embeddings: TokenEmbeddings,
    layer: int,
    *,
    sample_size: int | None = 5000,
    k_range: tuple[int, int] = (2, 15),
    silhouette_threshold: float = 0.1,
    silhouette_sample_size: int = 5000,
    seed: int = 0,
    clusters: np.ndarray | None = None,
) -> pd.DataFrame:
    """First three principal components of one layer's tokens, with their k-means clusters.

    ``layer`` may be negative (``-1`` = last layer). Clusters (found here on the full layer
    unless given) label a seeded sample of projected points (a plot needs no more).
    """
    from sklearn.decomposition import PCA

    from isotropy.metrics import kmeans_by_silhouette

    try:
        index = range(embeddings.n_layers)[layer]
    except IndexError:
        raise ValueError(
            f"layer {layer} does not exist: the model has {embeddings.n_layers} hidden-state layers"
        ) from None
    points = embeddings.layers[index]
    if clusters is not None:
        if len(clusters) != len(points):
            raise ValueError(f"{len(clusters)} cluster labels for {len(points)} points")
    else:
        clusters = np.asarray(
            kmeans_by_silhouette(
                points,
                k_range=tuple(k_range),
                threshold=silhouette_threshold,
                seed=seed,
                sample_size=silhouette_sample_size,
            )
        )
    clusters = np.asarray(clusters)
    pca = PCA(n_components=3, random_state=seed).fit(points)
    rows = _sample_rows(len(points), sample_size, seed)
    projected = pca.transform(points[rows])
    table = pd.DataFrame(projected, columns=["pc1", "pc2", "pc3"])
    table.insert(0, "layer", index)
    table["cluster"] = clusters[rows]
    table["token"] = embeddings.tokens[rows]
    for i, ratio in enumerate(pca.explained_variance_ratio_, start=1):
        table[f"variance_ratio_pc{i}"] = float(ratio)
    return table


# ---------------------------------------------------------------------------------------------
# Semantic textual similarity (Rajaee & Pilehvar)

STS_METHODS = (
    "none",
    "centring",
    "all-but-the-top",
    "kmeans-centring",
    "cluster-based",
    "cluster-based-gmm",
)
# isotropy: I(W) as Rajaee & Pilehvar's code computes it (eigenvectors with numpy's signs);
# isotropy_sign_free: each eigenvector with both signs (independent of the solver).
STS_COLUMNS = [
    "model",
    "dataset",
    "split",
    "seed",
    "pipeline",
    "method",
    "n_pairs",
    "n_sentences",
    "n_tokens",
    "dim",
    "n_clusters",
    "n_directions",
    "pearson",
    "spearman",
    "isotropy",
    "isotropy_sign_free",
]
PIPELINE_TOKENS = (
    "tokens without [CLS]/[SEP] transformed, then mean-pooled (Rajaee & Pilehvar); I(W) on tokens"
)
PIPELINE_SENTENCES = "mean-pooled sentence vectors transformed; I(W) on sentences"


def sts_sentence_index(table: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Unique sentences of an STS table and, per pair, the row of each side."""
    position: dict[str, int] = {}
    for sentence in pd.concat([table["sentence1"], table["sentence2"]]).astype(str):
        position.setdefault(sentence, len(position))
    first = np.array([position[s] for s in table["sentence1"].astype(str)], dtype=np.int64)
    second = np.array([position[s] for s in table["sentence2"].astype(str)], dtype=np.int64)
    return list(position), first, second


def mean_pooled_embeddings(
    sentences: Sequence[str],
    tokenizer,
    model,
    *,
    device: Any = "cpu",
    batch_size: int = 32,
    max_length: int = 128,
    layer: int = -1,
    progress: bool = True,
) -> np.ndarray:
    """Sentence embeddings: the mean of one layer's hidden states over the attended tokens.

    Special tokens are included, as in sentence-transformers' mean pooling. Sentences are
    batched by length (less padding); rows come back in input order.
    """
    import torch
    from tqdm.auto import tqdm

    if not sentences:
        raise ValueError("no sentences to embed")
    order = np.argsort([len(s) for s in sentences], kind="stable")
    result: np.ndarray | None = None
    logged = ProgressLog(len(sentences), "sentence embeddings")  # time left, in the log
    for start in tqdm(
        range(0, len(order), batch_size),
        desc="sentence embeddings",
        unit="batch",
        disable=not progress,
    ):
        rows = order[start : start + batch_size]
        inputs, _ = _encode_batch(tokenizer, [sentences[i] for i in rows], max_length)
        inputs = {key: value.to(device) for key, value in inputs.items()}
        with torch.inference_mode():
            hidden = model(**inputs).hidden_states[layer]
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = ((hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)).float().cpu().numpy()
        if result is None:
            result = np.empty((len(sentences), pooled.shape[1]), dtype=np.float32)
        result[rows] = pooled
        logged.update(len(rows))
    assert result is not None
    if not np.isfinite(result).all():
        raise ValueError("the model produced non-finite sentence embeddings")
    return result


def enhance(
    points: np.ndarray,
    method: str,
    *,
    n_clusters: int = 27,
    n_directions: int = 12,
    abtt_directions: int = 12,
    seed: int = 0,
) -> np.ndarray:
    """Apply one isotropy-enhancement method of the STS comparison to a set of embeddings.

    ``none``; ``centring`` (subtract the mean); ``all-but-the-top`` (centring + removing the top
    ``abtt_directions`` principal directions, Mu & Viswanath 2018); ``kmeans-centring`` (subtract
    each k-means cluster's mean); ``cluster-based`` (that, then remove each cluster's top
    ``n_directions`` directions: Rajaee & Pilehvar); ``cluster-based-gmm`` (the same with a
    Gaussian mixture instead of k-means).
    """
    from isotropy import transforms

    if method == "none":
        return points
    if method == "centring":
        return transforms.centre(points)
    if method == "all-but-the-top":
        return transforms.all_but_the_top(points, abtt_directions)
    if method == "kmeans-centring":
        return transforms.cluster_based_isotropy(
            points, n_clusters=n_clusters, n_directions=0, seed=seed, method="kmeans"
        )
    if method == "cluster-based":
        return transforms.cluster_based_isotropy(
            points, n_clusters=n_clusters, n_directions=n_directions, seed=seed, method="kmeans"
        )
    if method == "cluster-based-gmm":
        return transforms.cluster_based_isotropy(
            points, n_clusters=n_clusters, n_directions=n_directions, seed=seed, method="gmm"
        )
    raise ValueError(f"unknown enhancement method {method!r}; expected one of {STS_METHODS}")


def pair_cosines(vectors: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Cosine similarity of each pair (rows ``first[i]`` and ``second[i]`` of ``vectors``)."""
    norms = np.linalg.norm(vectors, axis=1)
    if (norms == 0).any():
        raise ValueError(
            f"{int((norms == 0).sum())} embeddings are zero vectors after the transform; cosine is undefined"
        )
    unit = vectors / norms[:, None]
    return np.einsum("ij,ij->i", unit[first], unit[second])


@dataclass
class StsEmbeddings:
    """Vectors of an STS data set's unique sentences; sentences ``first[i]`` and ``second[i]``
    form pair ``i`` with gold score ``gold[i]``. ``available=False`` marks an optional data set
    that could not be had (all arrays empty).

    With ``offsets`` (n_sentences + 1 entries), ``vectors`` are *token* states: sentence j's
    tokens are rows ``offsets[j]:offsets[j+1]`` (Rajaee & Pilehvar's pipeline, what the workflow
    stores). Without (an empty array), ``vectors`` holds one pooled vector per sentence.
    """

    vectors: np.ndarray
    first: np.ndarray
    second: np.ndarray
    gold: np.ndarray
    dataset: str
    split: str
    available: bool = True
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    @property
    def token_level(self) -> bool:
        return len(self.offsets) > 0

    @classmethod
    def unavailable(cls, dataset: str, split: str) -> StsEmbeddings:
        empty = np.empty(0, dtype=np.int64)
        return cls(
            np.empty((0, 0), dtype=np.float32),
            empty,
            empty,
            np.empty(0),
            dataset,
            split,
            available=False,
        )

    def save(self, path: str | os.PathLike) -> None:
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(
                    handle,
                    vectors=self.vectors,
                    first=self.first,
                    second=self.second,
                    gold=self.gold,
                    dataset=self.dataset,
                    split=self.split,
                    available=self.available,
                    offsets=self.offsets,
                )

    @classmethod
    def load(cls, path: str | os.PathLike) -> StsEmbeddings:
        with open_npz(path) as data:
            offsets = data["offsets"] if "offsets" in data else np.empty(0, dtype=np.int64)
            return cls(
                data["vectors"],
                data["first"],
                data["second"],
                data["gold"],
                str(data["dataset"]),
                str(data["split"]),
                bool(data["available"]),
                offsets,
            )


def sts_table(
    embeddings: StsEmbeddings, *, model: str, seed: int = 0, **settings: Any
) -> pd.DataFrame:
    """The STS table of stored vectors: :func:`evaluate_sts_tokens` for token states (the
    authors' pipeline), :func:`evaluate_sts` for sentence vectors; an empty table (header only)
    when the data set was unavailable."""
    if not embeddings.available:
        log.warning(
            "STS data set %s (%s) was unavailable; writing an empty table",
            embeddings.dataset,
            embeddings.split,
        )
        return pd.DataFrame(columns=STS_COLUMNS)
    labels = {
        "seed": seed,
        "model": model,
        "dataset": embeddings.dataset,
        "split": embeddings.split,
    }
    if embeddings.token_level:
        table = evaluate_sts_tokens(
            embeddings.vectors,
            embeddings.offsets,
            embeddings.first,
            embeddings.second,
            embeddings.gold,
            **labels,
            **settings,
        )
    else:
        table = evaluate_sts(
            embeddings.vectors,
            embeddings.first,
            embeddings.second,
            embeddings.gold,
            **labels,
            **settings,
        )
    return table[STS_COLUMNS]


def _sts_row(
    method: str,
    transformed: np.ndarray,
    cosines: np.ndarray,
    gold: np.ndarray,
    *,
    n_clusters: int,
    n_directions: int,
    abtt_directions: int,
) -> dict[str, Any]:
    """Correlations (x100) of one method's pair cosines with the gold scores, and I(W) of the
    space it transformed (Rajaee & Pilehvar's signs, and sign-free)."""
    from scipy.stats import pearsonr, spearmanr

    from isotropy.metrics import partition_isotropy

    return {
        "method": method,
        "n_clusters": n_clusters if method.startswith(("kmeans", "cluster")) else 1,
        "n_directions": {
            "all-but-the-top": abtt_directions,
            "cluster-based": n_directions,
            "cluster-based-gmm": n_directions,
        }.get(method, 0),
        "pearson": 100 * float(pearsonr(cosines, gold).statistic),
        "spearman": 100 * float(spearmanr(cosines, gold).statistic),
        "isotropy": partition_isotropy(transformed, signs="solver"),
        "isotropy_sign_free": partition_isotropy(transformed, signs="both"),
    }


def _check_pairs(first: np.ndarray, second: np.ndarray, gold: np.ndarray) -> np.ndarray:
    gold = np.asarray(gold, dtype=float)
    if not (len(first) == len(second) == len(gold)):
        raise ValueError(
            f"pair arrays disagree in length: {len(first)}, {len(second)}, {len(gold)} gold scores"
        )
    if np.ptp(gold) == 0:
        raise ValueError("all gold scores are equal; correlation is undefined")
    return gold


def evaluate_sts(
    vectors: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    gold: np.ndarray,
    *,
    methods: Sequence[str] = STS_METHODS,
    n_clusters: int = 27,
    n_directions: int = 12,
    abtt_directions: int = 12,
    seed: int = 0,
    **labels: Any,
) -> pd.DataFrame:
    """Pearson and Spearman (x100) of pair cosines vs. gold scores, and I(W), per method, on
    *sentence* vectors.

    Each transform is fitted on the given sentence vectors (one per unique sentence) and I(W) is
    measured on them. This is NOT Rajaee & Pilehvar's pipeline, which transforms token vectors
    and pools afterwards (:func:`evaluate_sts_tokens`, what the workflow runs); it is kept for
    sentence encoders whose pooled output is the object of study.
    """
    gold = _check_pairs(first, second, gold)
    return _sts_table(
        vectors,
        lambda transformed: pair_cosines(transformed, first, second),
        gold,
        methods=methods,
        transform={
            "n_clusters": n_clusters,
            "n_directions": n_directions,
            "abtt_directions": abtt_directions,
        },
        seed=seed,
        fixed={
            **labels,
            "seed": seed,
            "n_pairs": len(gold),
            "n_sentences": len(vectors),
            "n_tokens": 0,
            "dim": vectors.shape[1],
            "pipeline": PIPELINE_SENTENCES,
        },
        pipeline_name="sentences",
    )


def _sts_table(
    points: np.ndarray,
    score_pairs,
    gold: np.ndarray,
    *,
    methods: Sequence[str],
    transform: dict[str, int],
    seed: int,
    fixed: dict[str, Any],
    pipeline_name: str,
) -> pd.DataFrame:
    """One STS row per method: fit the transform on ``points``, score the pairs with
    ``score_pairs(transformed)`` (their cosines) and measure I(W) on the transformed points."""
    rows = []
    for method in methods:
        transformed = np.asarray(enhance(points, method, seed=seed, **transform), dtype=np.float64)
        row = _sts_row(method, transformed, score_pairs(transformed), gold, **transform)
        rows.append({**fixed, **row})
        log.info(
            "STS %s (%s): pearson %.2f spearman %.2f I(W) %.3g",
            method,
            pipeline_name,
            row["pearson"],
            row["spearman"],
            row["isotropy"],
        )
    return pd.DataFrame(rows, columns=[c for c in STS_COLUMNS if c in rows[0]])


def pair_side_tokens(
    offsets: np.ndarray, first: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the token matrix for every pair side in Rajaee & Pilehvar's order (first sentence
    of pair 0, second of pair 0, first of pair 1, ...; a sentence in several pairs is repeated,
    as in their code), and the start of each side's block in that order."""
    sides = np.empty(2 * len(first), dtype=np.int64)
    sides[0::2], sides[1::2] = first, second
    lengths = offsets[sides + 1] - offsets[sides]
    if (lengths == 0).any():
        raise ValueError(
            f"{int((lengths == 0).sum())} STS sentences have no token left after removing special tokens; check the data set's sentences"
        )
    rows = np.concatenate([np.arange(offsets[s], offsets[s + 1]) for s in sides])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return rows, starts


def evaluate_sts_tokens(
    tokens: np.ndarray,
    offsets: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    gold: np.ndarray,
    *,
    methods: Sequence[str] = STS_METHODS,
    n_clusters: int = 27,
    n_directions: int = 12,
    abtt_directions: int = 12,
    seed: int = 0,
    **labels: Any,
) -> pd.DataFrame:
    """Rajaee & Pilehvar's STS pipeline: transform *token* vectors, then mean-pool, then cosine.

    ``tokens`` holds the last-layer states of each unique sentence's tokens without [CLS]/[SEP]
    (sentence i: rows ``offsets[i]:offsets[i+1]``). As in their notebook, the token set is the
    tokens of every pair side in pair order (repeated sentences repeated); each transform is
    fitted on it; each side's sentence vector is the mean of its transformed tokens; a pair is
    scored by the cosine of its two sentence vectors. I(W) is measured on the transformed
    tokens, with numpy's eigenvector signs (``isotropy``, their number) and sign-free.
    """
    gold = _check_pairs(first, second, gold)
    rows_of_sides, starts = pair_side_tokens(
        np.asarray(offsets), np.asarray(first), np.asarray(second)
    )
    side_tokens = np.asarray(tokens[rows_of_sides], dtype=np.float64)
    lengths = np.diff(np.append(starts, len(side_tokens)))
    pair_first, pair_second = np.arange(0, 2 * len(gold), 2), np.arange(1, 2 * len(gold), 2)

    def score_pairs(transformed: np.ndarray) -> np.ndarray:
        sentences = np.add.reduceat(transformed, starts, axis=0) / lengths[:, None]
        return pair_cosines(sentences, pair_first, pair_second)

    return _sts_table(
        side_tokens,
        score_pairs,
        gold,
        methods=methods,
        transform={
            "n_clusters": n_clusters,
            "n_directions": n_directions,
            "abtt_directions": abtt_directions,
        },
        seed=seed,
        fixed={
            **labels,
            "seed": seed,
            "n_pairs": len(gold),
            "n_sentences": len(offsets) - 1,
            "n_tokens": len(side_tokens),
            "dim": tokens.shape[1],
            "pipeline": PIPELINE_TOKENS,
        },
        pipeline_name="tokens",
    )


def token_states_by_sentence(
    sentences: Sequence[str],
    tokenizer,
    model,
    *,
    device: Any = "cpu",
    batch_size: int = 32,
    max_length: int = 128,
    layer: int = -1,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """One layer's hidden states of every sentence's tokens, special tokens ([CLS], [SEP]) and
    padding removed, as Rajaee & Pilehvar feed them to the cluster-based method.

    Returns ``(tokens, offsets)``: float32 (T, d), sentence i's tokens at ``offsets[i]:offsets[i+1]``.
    """
    import torch
    from tqdm.auto import tqdm

    if not sentences:
        raise ValueError("no sentences to embed")
    per_sentence: list[np.ndarray | None] = [None] * len(sentences)
    order = np.argsort([len(s) for s in sentences], kind="stable")  # less padding
    for start in tqdm(
        range(0, len(order), batch_size),
        desc="STS token states",
        unit="batch",
        disable=not progress,
    ):
        rows = order[start : start + batch_size]
        inputs, special = _encode_batch(tokenizer, [sentences[i] for i in rows], max_length)
        keep = (inputs["attention_mask"].bool() & ~special.bool()).numpy()
        with torch.inference_mode():
            hidden = (
                model(**{key: value.to(device) for key, value in inputs.items()})
                .hidden_states[layer]
                .float()
                .cpu()
                .numpy()
            )
        for b, i in enumerate(rows):
            per_sentence[i] = hidden[b][keep[b]]
    lengths = np.array([len(t) for t in per_sentence], dtype=np.int64)
    tokens = np.concatenate(per_sentence).astype(np.float32, copy=False)
    if not np.isfinite(tokens).all():
        raise ValueError("the model produced non-finite hidden states")
    return tokens, np.concatenate([[0], np.cumsum(lengths)])


# ---------------------------------------------------------------------------------------------
# Tables and workflow targets


TABLE_COLUMNS = {"cosine": COSINE_COLUMNS, "lid": LID_COLUMNS, "sts": STS_COLUMNS}


def write_table(table: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a CSV atomically."""
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)


def concatenate_tables(paths: Sequence[str | os.PathLike], columns: Sequence[str]) -> pd.DataFrame:
    """Concatenate per-model CSVs (empty ones, e.g. an unavailable SICK-R, contribute nothing)."""
    frames = [pd.read_csv(p) for p in paths]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=list(columns))
    table = pd.concat(frames, ignore_index=True)[list(columns)]
    if "layer" in table.columns:  # static rows have no layer: keep the column integer, not float
        table["layer"] = table["layer"].astype("Int64")
    return table
