"""Partition-function isotropy I(W) of every hidden-state layer (Rajaee & Sheikhi's slide
"Pre-trained BERT Isotropy"; Mu & Viswanath 2018's measure).

I(W) of the token states the cluster analysis reads, raw (numpy's eigenvector signs as Rajaee &
Pilehvar's ``isotropy()`` takes them, and sign-free) and centred (Mu & Viswanath's first step):
how much of each layer's anisotropy is a common mean. No seed enters.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from isotropy.embeddings.hidden_states import TokenEmbeddings
from isotropy.geometry.layers import layer_row

log = logging.getLogger(__name__)

ISOTROPY_COLUMNS = [
    *("model", "kind", "corpus", "seed", "layer", "n", "dim"),
    *("isotropy", "isotropy_sign_free", "isotropy_centred"),
]


def layer_isotropy(points: np.ndarray) -> dict[str, float]:
    """I(W) of one layer's token states: numpy's signs, sign-free, and after centring."""
    from isotropy.metrics import partition_isotropy

    x = np.asarray(points, dtype=np.float64)
    return {
        "isotropy": partition_isotropy(x, signs="solver"),
        "isotropy_sign_free": partition_isotropy(x, signs="both"),
        "isotropy_centred": partition_isotropy(x - x.mean(axis=0), signs="both"),
    }


def isotropy_by_layer(
    embeddings: TokenEmbeddings,
    *,
    model: str,
    corpus: str,
    seed: int = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """One row per hidden-state layer (0 = the embedding layer): I(W) of its token states."""
    from tqdm.auto import tqdm

    rows = []
    for layer in tqdm(range(embeddings.n_layers), desc=f"{model} I(W)", disable=not progress):
        points = embeddings.layers[layer]
        values = layer_isotropy(points)
        rows.append({**layer_row(model, corpus, seed, layer, points), **values})
        measured = (values[name] for name in ISOTROPY_COLUMNS[-3:])
        log.info("%s layer %d: I(W) %.3g (sign-free %.3g, centred %.3g)", model, layer, *measured)
    return pd.DataFrame(rows, columns=ISOTROPY_COLUMNS)
