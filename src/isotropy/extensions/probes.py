"""IsoScore and silhouette of every hidden layer's representation, recorded per step beside the
registry's metrics (an :class:`isotropy.optimize.Probe`).

Layer ``l`` (1 = the bottom hidden layer) maps the items' representations (rows, or ``[u; v]``
for pairs) through the first ``l`` hidden layers. Both metrics are taken over the classified
items (IsoScore has no table to use above the embeddings), on every item or, with
``sample_size``, on a fresh seeded sample per evaluation, as the registry's metrics are.
"""

from __future__ import annotations

import torch

from isotropy.metrics.clusters import silhouette_tensor
from isotropy.metrics.isoscores import isoscore_tensor
from isotropy.optimize import ClassifiedItems


class HiddenLayerProbe:
    """Per-step IsoScore and silhouette of each hidden layer (module docstring)."""

    def __init__(self, problem, layers: int, device, sample_size: int | None, seed: int):
        names = ("isoscore", "silhouette")  # isoscore_h<l> and silhouette_h<l> for l = 1..layers
        self.columns = tuple(f"{n}_h{layer}" for layer in range(1, layers + 1) for n in names)
        sampler = torch.Generator().manual_seed(30_000 + seed)
        self.items = ClassifiedItems(problem, device, sample_size, sampler)

    def __call__(self, model) -> dict[str, torch.Tensor]:
        with torch.no_grad():
            points, layout = self.items.representations(model)
            values = {}
            for layer, states in enumerate(model.hidden_states(points), start=1):
                values[f"isoscore_h{layer}"] = isoscore_tensor(states)
                values[f"silhouette_h{layer}"] = silhouette_tensor(states, layout)
            return values
