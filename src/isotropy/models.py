"""The pretrained transformers the studies load: one description for I-STAR and geometry.

Plain Python (no torch): the workflow builds these while it parses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelSpec:
    """A pretrained model: hub name and pinned revision, or a local folder (``path`` wins).

    ``name`` is the model's name in the configuration (for messages); it is not part of
    :meth:`as_record`, which is what results and checkpoints record, nor of its repr (which
    Snakemake compares as a rule parameter).
    """

    model: str | None = None
    revision: str | None = None
    path: str | None = None
    name: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_config(cls, name: str, entry: dict[str, Any]) -> ModelSpec:
        return cls(
            model=entry.get("model"),
            revision=entry.get("revision"),
            path=entry.get("path"),
            name=name,
        )

    @property
    def source(self) -> str:
        """What ``from_pretrained`` loads: the resolved local folder, else the hub name."""
        if self.path:
            from isotropy.embeddings import resolve_model_path

            return resolve_model_path(str(self.path))  # a folder, or package:<module>
        if not self.model:
            raise ValueError("a model entry needs `model` (hub name) or `path` (local folder)")
        return self.model

    @property
    def from_pretrained_kwargs(self) -> dict[str, Any]:
        """The hub revision pin; nothing for a local folder."""
        return {} if self.path else {"revision": self.revision}

    def as_record(self) -> dict[str, Any]:
        """model, revision and path, as results and checkpoints record them."""
        return {"model": self.model, "revision": self.revision, "path": self.path}
