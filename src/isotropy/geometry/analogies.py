"""Mickus et al. (2024), footnote 1: word analogies survive the transforms that raise isotropy.

The static word vectors are scored as they are, whitened (PCA whitening: every principal
direction scaled to unit variance, so IsoScore is 1) and after all-but-the-top (Mu & Viswanath
2018); each beside its IsoScore and its accuracy on gensim's bundled analogy questions
(``questions-words.txt``, Mikolov et al. 2013) as ``KeyedVectors.evaluate_word_analogies`` scores
them (3CosAdd over the vocabulary's first ``restrict_vocab`` words, case-insensitive).

The declared rule (:func:`judge`): a transform *keeps analogies* when it raises IsoScore and its
accuracy is at most ``margin`` (absolute) below the untransformed vectors'; the footnote is
*supported* when every transform keeps them, *not supported* when one does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from isotropy import transforms
from isotropy.statistics import NOT_SUPPORTED, SUPPORTED

# Our margin, set before any run: a loss of under 2 points of accuracy (absolute) is not a loss of
# analogies; anything larger says no.
MARGIN = 0.02
# The reference vectors' row name in the table.
ORIGINAL = "original"


def whiten(points) -> np.ndarray:
    """PCA whitening (scikit-learn): centred, rotated to the principal axes, unit variance."""
    from sklearn.decomposition import PCA

    return PCA(whiten=True).fit_transform(np.asarray(points, dtype=np.float64))


def standard_transforms(dim: int) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """The footnote's transforms by name: the vectors as they are, whitened, all-but-the-top
    with Mu & Viswanath's D = d/100 directions (at least 1)."""
    abtt_directions = max(1, round(dim / 100))
    return {
        ORIGINAL: lambda x: x,
        "whitened": whiten,
        f"all-but-the-top (D = {abtt_directions})": lambda x: transforms.all_but_the_top(
            x, abtt_directions
        ),
    }


def analogy_table(
    vectors,
    questions: str,
    named: Mapping[str, Callable[[np.ndarray], np.ndarray]],
    restrict_vocab: int,
) -> pd.DataFrame:
    """One row per transform (``vectors``: gensim ``KeyedVectors``): IsoScore of the transformed
    vectors, analogy accuracy and the questions scored."""
    from gensim.models import KeyedVectors

    from isotropy import metrics

    rows = []
    for name, transform in named.items():
        moved = np.asarray(transform(vectors.vectors), dtype=np.float32)
        keyed = KeyedVectors(moved.shape[1])
        keyed.add_vectors(vectors.index_to_key, moved)
        accuracy, sections = keyed.evaluate_word_analogies(questions, restrict_vocab=restrict_vocab)
        total = sections[-1]
        rows.append(
            {
                "transform": name,
                "words": len(moved),
                "isoscore": metrics.isoscore(moved),
                "accuracy": float(accuracy),
                "questions": len(total["correct"]) + len(total["incorrect"]),
            }
        )
    return pd.DataFrame(rows)


def judge(table: pd.DataFrame, margin: float = MARGIN) -> pd.DataFrame:
    """``table`` with the declared rule's columns (module docstring): ``keeps_analogies`` per
    transform and the footnote's ``verdict`` on every row."""
    base = table.set_index("transform").loc[ORIGINAL]
    others = table["transform"] != ORIGINAL
    raises = table["isoscore"] > base["isoscore"]
    kept = table["accuracy"] >= base["accuracy"] - margin
    keeps = (raises & kept).where(others)
    verdict = SUPPORTED if keeps[others].all() else NOT_SUPPORTED
    return table.assign(
        accuracy_change=table["accuracy"] - base["accuracy"],
        keeps_analogies=keeps,
        margin=margin,
        verdict=verdict,
    )
