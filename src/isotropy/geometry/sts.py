"""Rajaee & Pilehvar (ACL 2021): mean-pooled sentence embeddings for semantic textual
similarity, scored by cosine before and after the isotropy-enhancing transforms of
:mod:`isotropy.transforms` (:func:`enhance` picks one by its name in the STS table).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from isotropy.configuration.geometry import STS_METHODS
from isotropy.embeddings.hidden_states import ArrayRecord
from isotropy.transforms import all_but_the_top, centre, cluster_based_isotropy

log = logging.getLogger(__name__)


# isotropy: I(W) as Rajaee & Pilehvar's code computes it (eigenvectors with numpy's signs);
# isotropy_sign_free: each eigenvector with both signs (independent of the solver).
STS_COLUMNS = [
    *("model", "dataset", "split", "seed", "pipeline", "method"),
    *("n_pairs", "n_sentences", "n_tokens", "dim", "n_clusters", "n_directions"),
    *("pearson", "spearman", "isotropy", "isotropy_sign_free"),
]
# The cluster-based methods and their clustering (kmeans-centring removes no direction).
CLUSTER_METHODS = {
    "kmeans-centring": "kmeans",
    "cluster-based": "kmeans",
    "cluster-based-gmm": "gmm",
}
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


def enhance(
    points: np.ndarray,
    method: str,
    *,
    n_clusters: int = 27,
    n_directions: int = 12,
    abtt_directions: int = 12,
    seed: int = 0,
) -> np.ndarray:
    """Apply one isotropy-enhancement method of the STS comparison (:mod:`isotropy.transforms`;
    ``kmeans-centring`` is ``cluster-based`` removing no direction)."""
    if method == "none":
        return points
    if method == "centring":
        return centre(points)
    if method == "all-but-the-top":
        return all_but_the_top(points, abtt_directions)
    if method in CLUSTER_METHODS:
        directions = 0 if method == "kmeans-centring" else n_directions
        return cluster_based_isotropy(points, n_clusters, directions, seed, CLUSTER_METHODS[method])
    raise ValueError(f"unknown enhancement method {method!r}; expected one of {STS_METHODS}")


def pair_cosines(vectors: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Cosine similarity of each pair (rows ``first[i]`` and ``second[i]`` of ``vectors``)."""
    norms = np.linalg.norm(vectors, axis=1)
    if (norms == 0).any():
        raise ValueError(
            f"{int((norms == 0).sum())} embeddings are zero vectors after the transform; "
            "cosine is undefined"
        )
    unit = vectors / norms[:, None]
    return np.einsum("ij,ij->i", unit[first], unit[second])


@dataclass
class StsEmbeddings(ArrayRecord):
    """Vectors of an STS data set's unique sentences; sentences ``first[i]`` and ``second[i]``
    form pair ``i`` with gold score ``gold[i]``; ``available=False``: an optional data set that
    could not be had. With ``offsets``, ``vectors`` are *token* states (sentence j: rows
    ``offsets[j]:offsets[j+1]``); without (empty), one pooled vector per sentence.
    """

    vectors: np.ndarray
    first: np.ndarray
    second: np.ndarray
    gold: np.ndarray
    dataset: str
    split: str
    available: bool = True
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def __post_init__(self) -> None:  # as read back from the file's 0-d arrays
        self.dataset, self.split = str(self.dataset), str(self.split)
        self.available = bool(self.available)

    @property
    def token_level(self) -> bool:
        return len(self.offsets) > 0

    @classmethod
    def unavailable(cls, dataset: str, split: str) -> StsEmbeddings:
        empty = np.empty(0, dtype=np.int64)
        return cls(np.empty((0, 0), np.float32), empty, empty, np.empty(0), dataset, split, False)


def sts_table(
    embeddings: StsEmbeddings, *, model: str, seed: int = 0, **settings: Any
) -> pd.DataFrame:
    """The STS table of stored vectors (:func:`evaluate_sts`); header only when unavailable."""
    data, split = embeddings.dataset, embeddings.split
    if not embeddings.available:
        log.warning("STS data set %s (%s) was unavailable; writing an empty table", data, split)
        return pd.DataFrame(columns=STS_COLUMNS)
    table = evaluate_sts(
        *(embeddings.vectors, embeddings.first, embeddings.second, embeddings.gold),
        offsets=embeddings.offsets if embeddings.token_level else None,
        **{"seed": seed, "model": model, "dataset": data, "split": split, **settings},
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
        "n_clusters": n_clusters if method in CLUSTER_METHODS else 1,
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


def evaluate_sts(
    vectors: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    gold: np.ndarray,
    *,
    offsets: np.ndarray | None = None,
    methods: Sequence[str] = STS_METHODS,
    n_clusters: int = 27,
    n_directions: int = 12,
    abtt_directions: int = 12,
    seed: int = 0,
    **labels: Any,
) -> pd.DataFrame:
    """Pearson and Spearman (x100) of pair cosines vs. gold scores, and I(W), one row per method.

    With ``offsets``, Rajaee & Pilehvar's pipeline (what the workflow runs): each transform is
    fitted on the tokens (no [CLS]/[SEP]) of every pair side in pair order (repeated sentences
    repeated, as in their notebook), each side is the mean of its transformed tokens, and I(W) is
    measured on the transformed tokens. Without, ``vectors`` are sentence vectors, transformed
    and measured as they are: NOT their pipeline, kept for sentence encoders.
    """
    gold = np.asarray(gold, dtype=float)
    if not (len(first) == len(second) == len(gold)):
        raise ValueError(
            f"pair arrays disagree in length: {len(first)}, {len(second)}, {len(gold)} gold scores"
        )
    if np.ptp(gold) == 0:
        raise ValueError("all gold scores are equal; correlation is undefined")
    fixed = {**labels, "seed": seed, "n_pairs": len(gold), "dim": vectors.shape[1]}
    points, score_pairs, pipeline = _pipeline(vectors, first, second, offsets, fixed)
    transform = {
        "n_clusters": n_clusters,
        "n_directions": n_directions,
        "abtt_directions": abtt_directions,
    }
    rows = []
    for method in methods:
        transformed = np.asarray(enhance(points, method, seed=seed, **transform), dtype=np.float64)
        row = _sts_row(method, transformed, score_pairs(transformed), gold, **transform)
        rows.append({**fixed, **row})
        scores = (row[name] for name in ("pearson", "spearman", "isotropy"))
        log.info("STS %s (%s): pearson %.2f spearman %.2f I(W) %.3g", method, pipeline, *scores)
    return pd.DataFrame(rows, columns=[c for c in STS_COLUMNS if c in rows[0]])


def _pipeline(
    vectors: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    offsets: np.ndarray | None,
    fixed: dict[str, Any],
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], str]:
    """The points ``evaluate_sts`` transforms, how it scores the pairs, the pipeline's name;
    ``fixed`` gains the pipeline's counts."""
    if offsets is None:
        fixed |= {"n_sentences": len(vectors), "n_tokens": 0, "pipeline": PIPELINE_SENTENCES}
        return vectors, lambda transformed: pair_cosines(transformed, first, second), "sentences"
    sides, starts = pair_side_tokens(np.asarray(offsets), np.asarray(first), np.asarray(second))
    points = np.asarray(vectors[sides], dtype=np.float64)
    lengths = np.diff(np.append(starts, len(points)))
    n_pairs = len(first)
    pair_first, pair_second = np.arange(0, 2 * n_pairs, 2), np.arange(1, 2 * n_pairs, 2)
    fixed |= {"n_sentences": len(offsets) - 1, "n_tokens": len(points)}
    fixed["pipeline"] = PIPELINE_TOKENS

    def score_pairs(transformed: np.ndarray) -> np.ndarray:
        sentences = np.add.reduceat(transformed, starts, axis=0) / lengths[:, None]
        return pair_cosines(sentences, pair_first, pair_second)

    return points, score_pairs, "tokens"


def pair_side_tokens(
    offsets: np.ndarray, first: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the token matrix for every pair side in Rajaee & Pilehvar's order (pair 0's first
    and second sentence, pair 1's, ...), and the start of each side's block in that order."""
    sides = np.empty(2 * len(first), dtype=np.int64)
    sides[0::2], sides[1::2] = first, second
    lengths = offsets[sides + 1] - offsets[sides]
    if (lengths == 0).any():
        raise ValueError(
            f"{int((lengths == 0).sum())} STS sentences have no token left after removing "
            "special tokens; check the data set's sentences"
        )
    rows = np.concatenate([np.arange(offsets[s], offsets[s + 1]) for s in sides])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return rows, starts
