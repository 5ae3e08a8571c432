"""IsoScore and silhouette of every hidden layer's representation, recorded per step beside the
registry's metrics (an :class:`isotropy.optimize.Probe`).

Layer ``l`` (1 = the bottom hidden layer) maps the items' representations (rows, or ``[u; v]``
for pairs) through the first ``l`` hidden layers. Both metrics are taken over the classified
items (IsoScore has no table to use above the embeddings), on every item or, with
``sample_size``, on a fresh seeded sample per evaluation, as the registry's metrics are.
"""

from __future__ import annotations

import numpy as np
import torch

from isotropy import metrics
from isotropy.metrics.clusters import silhouette_tensor
from isotropy.metrics.isoscores import isoscore_tensor


class HiddenLayerProbe:
    """Per-step IsoScore and silhouette of each hidden layer (module docstring)."""

    def __init__(self, problem, layers: int, device, sample_size: int | None, seed: int):
        names = ("isoscore", "silhouette")  # isoscore_h<l> and silhouette_h<l> for l = 1..layers
        self.columns = tuple(f"{n}_h{layer}" for layer in range(1, layers + 1) for n in names)
        self.device = torch.device(device)
        self.left = torch.as_tensor(problem.left, device=self.device)
        right = problem.right
        self.right = None if right is None else torch.as_tensor(right, device=self.device)
        self.clusters = np.asarray(metrics.cluster_ids(problem.targets))
        samples = sample_size is not None and 0 < sample_size < len(self.clusters)
        self.sample_size = sample_size if samples else None
        self.layout = None if samples else metrics.cluster_layout(self.clusters, self.device)
        self.generator = torch.Generator().manual_seed(30_000 + seed)

    def __call__(self, model) -> dict[str, torch.Tensor]:
        with torch.no_grad():
            left, right, layout = self.left, self.right, self.layout
            if self.sample_size:
                order = torch.randperm(len(self.clusters), generator=self.generator)
                items = order[: self.sample_size]
                picked = items.to(self.device)
                left, right = left[picked], None if right is None else right[picked]
                layout = metrics.cluster_layout(self.clusters[items.numpy()], self.device)
            assert layout is not None  # prepared once, or for this evaluation's sample
            states = model.hidden_states(model.representations(left, right))
            values = {}
            for layer, points in enumerate(states, start=1):
                values[f"isoscore_h{layer}"] = isoscore_tensor(points)
                values[f"silhouette_h{layer}"] = silhouette_tensor(points, layout)
            return values
