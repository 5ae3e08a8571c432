"""The geometry of a fine-tuned model's validation CLS states, per layer: I(W) (Rajaee &
Pilehvar's signs), IsoScore, the norm of the mean CLS state beside the norm of the mean token
state; and the last layer's I(W) as the task head read it (after a head transform, if any).
Measured after every fine-tuning run (:func:`isotropy.finetune.evaluation.evaluate_model`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def cls_layer_geometry(
    sentence: torch.Tensor,
    token_means: torch.Tensor,
    token_norms: torch.Tensor,
    transformed_last: np.ndarray | None = None,
) -> dict[str, Any]:
    """Per-layer geometry of the validation CLS states (layers × sentences × dim).

    ``token_means`` (layers × dim) is the mean of every non-padding validation token state and
    ``token_norms`` (layers) their mean norm. ``transformed_last``: the last layer's CLS states
    as the head read them (after the method), or None without it.
    """
    from isotropy import metrics

    names = ("iw", "isoscore", "cls_mean_norm", "cls_norm", "token_mean_norm", "token_norm")
    rows = []
    for layer in range(sentence.shape[0]):
        x = sentence[layer].double()
        states = x.numpy()
        iw, isoscore = metrics.partition_isotropy(states, signs="solver"), metrics.isoscore(states)
        cls = float(x.mean(dim=0).norm()), float(x.norm(dim=1).mean())  # ‖mean‖, mean ‖state‖
        token = float(token_means[layer].double().norm()), float(token_norms[layer])
        rows.append((iw, isoscore, *cls, *token))
    layers = {name: list(values) for name, values in zip(names, zip(*rows))}
    result: dict[str, Any] = {f"cls_{name}_layers": values for name, values in layers.items()}
    result["cls_iw"] = layers["iw"][-1]
    result["cls_iw_head_input"] = (
        metrics.partition_isotropy(transformed_last, signs="solver")
        if transformed_last is not None
        else layers["iw"][-1]
    )
    return result
