"""The configuration: loading, schema validation and every cross-check, in one place.

:func:`load_config` serves the Snakefile (rules/common.smk), ``python -m isotropy.estimate`` and
the audit: the files laid over each other as Snakemake lays them, validated against
schemas/config.schema.yaml (defaults filled in), then every cross-reference the schema cannot
express, each problem said in one sentence. Plain Python: the workflow imports it while it parses.

Every key and string value must be plain text (:func:`markup_problems`): captions put them into
reStructuredText, which Snakemake renders with raw HTML and file inclusion on, and Snakemake
stores rule parameters as JSON inside ``<script>`` without escaping ``</``; neither can be
escaped from our side.
"""

from __future__ import annotations

import copy
import os
import re
import types
import typing
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from snakemake.utils import update_config

from isotropy import sensitivity, sources
from isotropy.configuration import Config, fill_defaults
from isotropy.intake import load_yaml, plain_config_problem
from isotropy.models import ModelSpec, unknown_model_problems
from isotropy.readers.inputs import dataset_sources
from isotropy.readers.registry import DATASETS
from isotropy.sources.download import url_problem
from isotropy.sources.layouts import mirror_path_problem

# The data sources (URLs, checksums, mirror files): long and seldom edited, so in a file of their
# own, laid under every configuration by :func:`with_sources` (config.yaml and overlays still
# change a source key by key, as Snakemake merges).
SOURCES_CONFIG = Path(__file__).resolve().parents[3] / "config" / "sources.yaml"


class ConfigError(ValueError):
    """A configuration that passes the schema but is inconsistent."""


def deep_merge(base: dict, override: Mapping) -> dict:
    """``override`` laid over a copy of ``base`` by Snakemake's own merge of config files: dicts
    key by key, the rest replaced."""
    merged = copy.deepcopy(base)
    update_config(merged, override)
    return merged


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """One configuration file as a mapping, or a :class:`ConfigError` naming the file."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(
            f"config file {path} cannot be read ({error.strerror or error}); check the path given "
            "to --configfile"
        ) from None
    try:
        loaded = load_yaml(data)  # from bytes: PyYAML's reader refuses NUL and bad UTF-8
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"config file {path} is not valid YAML{where}: {problem}") from None
    if loaded is None:
        raise ConfigError(
            f"config file {path} is empty; give it settings (key: value) or leave it out"
        )
    if not isinstance(loaded, dict):
        raise ConfigError(
            f"config file {path} holds a {type(loaded).__name__}, not a mapping of settings (key: "
            "value)"
        )
    if (problem := plain_config_problem(loaded)) is not None:
        raise ConfigError(f"config file {path} {problem}")
    return loaded


def load_config_files(paths: Sequence[str | os.PathLike]) -> dict[str, Any]:
    """The files laid over each other as Snakemake does (later files win key by key), an empty
    mapping in a later file refused."""
    merged: dict[str, Any] = {}
    for path in paths:
        overlay = read_config_file(path)
        # An empty mapping laid over a non-empty one: merged key by key, it removes nothing.
        for key, empty in _empty_over_full(merged, overlay):
            raise ConfigError(
                f"{key}: {{}} in config file {path} leaves the {len(empty)} entries the earlier "
                f"config files give it ({', '.join(map(str, list(empty)[:4]))}) in place, since "
                "config files are merged key by key; list the entries to keep instead"
            )
        merged = deep_merge(merged, overlay)
    return merged


def _empty_over_full(
    base: Mapping[str, Any], overlay: Mapping[str, Any], prefix: str = ""
) -> Iterator[tuple[str, Mapping]]:
    for key, value in overlay.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        below = base.get(key) if isinstance(base, Mapping) else None
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            if not value and below:
                yield name, below
            else:
                yield from _empty_over_full(below, value, name)


def encoder(config: dict, name: str) -> dict[str, Any]:
    try:
        return config["encoders"][name]
    except KeyError:
        raise ConfigError(
            f"encoder {name!r} is not defined under 'encoders' (defined: "
            f"{sorted(config['encoders'])})"
        ) from None


def sentence_encoder_spec(config: dict, name: str) -> dict[str, Any]:
    """The embedding rule's ``encoder`` parameter: its model's record without the name, then the
    encoder's own settings (batch_size); scripts read it with
    :meth:`isotropy.embeddings.texts.SentenceEncoderSpec.from_params`.

    The model's name is left out, unlike :func:`model_record`, because adding it would change
    the parameter every cached (write-protected) embedding was made with, and Snakemake would
    ask for all of them again though nothing they hold would change."""
    spec = encoder(config, name)
    if spec["kind"] != "sentence-transformer":
        raise ConfigError(f"encoder {name!r} is not a sentence transformer")
    settings = {key: value for key, value in spec.items() if key not in ("kind", "model")}
    return {**model_spec(config, spec["model"]).as_record(), **settings}


def model_record(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The one record of ``models.<name>`` that rules pass to scripts (geometry, I-STAR): its
    name, hub name, revision and path, plain values, so that Snakemake compares it as a
    parameter and a changed revision or path re-runs the jobs (a :class:`ModelSpec` object it
    cannot compare, and would silently ignore). Scripts rebuild the model with
    :meth:`ModelSpec.from_record`."""
    return {"name": name, **model_spec(config, name).as_record()}


def model_spec(config: Mapping[str, Any], name: str) -> ModelSpec:
    try:
        return ModelSpec.from_config(config, name)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def encoders_of_kind(config: dict, kind: str) -> list[str]:
    return [name for name, spec in config["encoders"].items() if spec["kind"] == kind]


def check_config(config: dict) -> None:
    """Cross-references the schema cannot express; raise one error listing every problem."""
    problems = []
    for study in ("main", "glue"):  # preview runs main's setups
        if study in config:
            problems += _encoder_problems(config, study)
    problems += dataset_problems(config) + markup_problems(config)
    problems += [p for study in ("main", "glue") if (p := stride_problem(config, study, study))]
    problems += _geometry_problems(config)
    problems += sensitivity.config_problems(config)
    for name, spec in config["encoders"].items():
        if spec["kind"] == "word-vectors" and spec["source"] not in config["sources"]:
            problems.append(
                f"encoders.{name}: source {spec['source']!r} is not defined under 'sources'"
            )
    for name, source in config["sources"].items():
        for url in source["url"] if isinstance(source["url"], list) else [source["url"]]:
            if (problem := url_problem(url)) is not None:
                problems.append(f"sources.{name}.url: {problem}")
        for rel in source.get("mirror") or []:
            if (problem := mirror_path_problem(rel)) is not None:
                problems.append(f"sources.{name}.mirror: {problem}")
    problems += unknown_model_problems(config)
    if problems:
        raise ConfigError("configuration is inconsistent:\n  " + "\n  ".join(problems))


def dataset_problems(config: Mapping[str, Any]) -> list[str]:
    """What the data sets' records refuse: a main-study setup that names no registered data set
    (a misspelt key plans no run), ``dataset_options`` for a data set or an option no record
    names, and a main-study data set whose source has another raw layout than its record asks
    (``sources.<name>.kind``)."""
    registered = ", ".join(sorted(DATASETS))
    setups = (config.get("main") or {}).get("setups") or {}
    problems = [
        f"main.setups: {shown_key(name)} is not a registered data set (registered: {registered}); "
        "check its spelling"
        for name in setups
        if name not in DATASETS
    ]
    for dataset, options in (config.get("dataset_options") or {}).items():
        if dataset not in DATASETS:
            problems.append(
                f"dataset_options: {shown_key(dataset)} is not a registered data set "
                f"(registered: {registered})"
            )
            continue
        keys = DATASETS[dataset].option_keys
        problems += [
            f"dataset_options.{dataset}: {shown_key(key)} is not an option of its reader "
            f"(its record names: {', '.join(keys) or 'none'})"
            for key in options
            if key not in keys
        ]
    configured = config.get("sources") or {}
    for dataset in setups:
        if dataset not in DATASETS:
            continue  # named above
        layouts = DATASETS[dataset].layouts
        try:
            roles = dataset_sources(config, dataset)
        except ValueError as error:  # e.g. pos from WordNet without a word-vector encoder
            problems.append(f"main.setups.{dataset}: {error}")
            continue
        for role, source in roles.items():
            if role not in layouts or source not in configured:
                continue  # required_sources names a missing source while the DAG is built
            kind = _kind_or_none(source, configured[source])
            if kind != layouts[role]:
                problems.append(
                    f"sources.{source}: data set {dataset!r} reads it as a {layouts[role]!r} "
                    f"source, but its kind is {kind!r}; give it kind: {layouts[role]}"
                )
    return problems


def _kind_or_none(name: str, entry: Mapping[str, Any]) -> str | None:
    try:
        return sources.source_kind(name, entry)
    except ValueError:
        return None


def stride_problem(config: Mapping[str, Any], study: str, of: str) -> str | None:
    """A stride of ``study`` that leaves fewer than 3 metric evaluations per run of ``of`` (whose
    updates it runs: the preview runs main's): no per-seed correlation."""
    updates = (config.get(of) or {}).get("updates")
    stride = (config.get(study) or {}).get("metric_stride")
    if isinstance(updates, int) and isinstance(stride, int) and stride >= updates:
        return (
            f"{study}.metric_stride: {stride} is not below {of}.updates ({updates}), so each run "
            "is measured only at its start and end and its per-seed correlations (3 points at "
            f"least) stay blank; give a {study}.metric_stride below {updates}"
        )
    return None


def shown_key(key: Any) -> str:
    """A config key as typed, with the code point of every non-ASCII character (``mаin`` with a
    Cyrillic а looks like ``main``)."""
    text = str(key)
    odd = [
        f"{char!r} U+{ord(char):04X} {unicodedata.name(char, 'unnamed')} at position {index + 1}"
        for index, char in enumerate(text)
        if not char.isascii() or not char.isprintable()
    ]
    return repr(text) + (f" ({'; '.join(odd)})" if odd else "")


def submits_jobs_elsewhere(argv: Sequence[str]) -> bool:
    """Whether a Snakemake command line sends its jobs to other machines (an executor other
    than local, or a profile, which may name one): there the controller's GPU says nothing."""
    for index, word in enumerate(argv):
        name, _, value = word.partition("=")
        if name in ("--profile", "--workflow-profile"):
            return True
        if name in ("--executor", "-e"):
            value = value or (argv[index + 1] if index + 1 < len(argv) else "")
            if value not in ("local", "dryrun", "touch"):
                return True
    return False


def validation_problems(error: ValidationError) -> list[str]:
    """One sentence per key the models refuse: the key, its value and what is allowed (an
    unknown key with the keys allowed there)."""
    problems: dict[str, str] = {}
    for item in error.errors(include_url=False):
        where, section, own = _key_path(item["loc"])
        if where in problems:
            continue  # one sentence per key, not one per alternative of a union
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            parent, _, name = where.rpartition(".")
            allowed = ", ".join(section.model_fields) if section else "any name"
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
            # a section's check names its field first ("k_range: 9 > 2"): part of the key
            field, _, said = message.partition(": ")
            if isinstance(own, type) and issubclass(own, BaseModel) and field in own.model_fields:
                value = item["input"].get(field) if isinstance(item["input"], Mapping) else None
                where = f"{where}.{field}"
                problems[where] = f"config key {where!r} has value {_short(value)}: {said}"
            else:
                problems[where] = f"config key {where!r}: {message}"
        else:
            problems[where] = f"config key {where!r} has value {_short(item['input'])}: {message}"
    return list(problems.values())


def _key_path(loc: tuple) -> tuple[str, type[BaseModel] | None, Any]:
    """The dotted key of a pydantic error location, without the labels pydantic gives the
    members of a union; the section whose key it is; the key's own type."""
    annotation: Any = Config
    section, path = None, ""
    for part in loc:
        annotation = _unwrapped(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            annotation = _member(annotation, part)
            continue  # the member's label
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            section = annotation
            field = annotation.model_fields.get(str(part))
            annotation = field.annotation if field else None
        elif typing.get_origin(annotation) in (dict, list):
            section, annotation = None, typing.get_args(annotation)[-1]
        if part == "[key]":
            continue
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path, section, _unwrapped(annotation)


def _unwrapped(annotation: Any) -> Any:
    """``annotation`` without Annotated, and without None where it is optional."""
    while True:
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Annotated:
            annotation = args[0]
        elif origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2:
            annotation = next(arg for arg in args if arg is not type(None))
        else:
            return annotation


def _member(union: Any, label: Any) -> Any:
    """The member of ``union`` that pydantic's location ``label`` names: a section by its kind
    (the encoders) or its name; None when the label names none."""
    for member in map(_unwrapped, typing.get_args(union)):
        if isinstance(member, type) and issubclass(member, BaseModel):
            kind = member.model_fields.get("kind")
            if member.__name__ == label or kind and label in typing.get_args(kind.annotation):
                return member
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, item) of every mapping key (as text) and every other value inside
    ``value``: the one walk of the checks JSON schema cannot make."""
    if isinstance(value, Mapping):
        for name, item in value.items():
            path = f"{key}.{name}" if key else str(name)
            yield path, str(name)
            yield from _walk(item, path)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _walk(item, f"{key}[{index}]")
    else:
        yield key, value


def _encoder_problems(config: dict, study: str) -> list[str]:
    """Undefined encoders, and word-vector encoders asked to embed sentences, in one study."""
    section, problems = config[study], []
    if study == "main":
        uses = [
            (f"main.setups.{dataset}.encoder", setup["encoder"], dataset)
            for dataset, setup in section["setups"].items()
        ]
    else:
        uses = [
            (f"glue.encoders[{i}]", name, "GLUE tasks")
            for i, name in enumerate(section["encoders"])
        ]
    sentence_encoders = ", ".join(encoders_of_kind(config, "sentence-transformer")) or "none"
    for key, name, dataset in uses:
        if name not in config["encoders"]:
            problems.append(
                f"{study}: encoder {name!r} (for {dataset}) is not defined under 'encoders'"
            )
        # word vectors look up single words: a data set of sentences or pairs (its unit) is not
        elif config["encoders"][name]["kind"] == "word-vectors" and (
            dataset not in DATASETS or DATASETS[dataset].unit != "word"
        ):
            problems.append(
                f"{key}: {name!r} is a word-vectors encoder, which looks up single words and "
                "cannot embed the "
                f"sentences of {dataset}; name a sentence-transformer encoder instead (defined: "
                f"{sentence_encoders})"
            )
    return problems


def _geometry_problems(config: Mapping[str, Any]) -> list[str]:
    """Cross-references of the ``geometry`` section the schema cannot express."""
    if "geometry" not in config:
        return []
    geometry = config["geometry"]
    problems = []
    corpus = geometry["clusters"]["corpus"]
    if corpus["source"] not in config.get("sources", {}):
        problems.append(
            f"geometry.clusters.corpus.source: {corpus['source']!r} is not defined under 'sources'"
        )
    for name in geometry["sts"]["models"] and geometry["sts"]["datasets"]:
        split = geometry["sts"]["splits"].get(name, "validation" if name == "stsb" else "test")
        if f"hf_{name}_{split}" not in config.get("sources", {}):
            problems.append(
                f"geometry.sts.splits.{name}: {split!r} needs source 'hf_{name}_{split}' under "
                "'sources'"
            )
    static = geometry["clusters"].get("static", {}).get("source")
    if static is not None and static not in config.get("sources", {}):
        problems.append(
            f"geometry.clusters.static.source: {static!r} is not defined under 'sources'"
        )
    for name in geometry["clusters"].get("pca_layers") or {}:
        if name not in (config.get("models") or {}):
            problems.append(
                f"geometry.clusters.pca_layers: {name!r} is not a model under 'models'; "
                "check its spelling"
            )
    return problems


def load_config(files: Sequence[str | os.PathLike]) -> dict[str, Any]:
    """The configuration the workflow runs (module docstring); any problem is a
    :class:`ConfigError`."""
    config = with_sources(load_config_files(files))
    check_loaded_config(config)
    return config


def with_sources(config: dict) -> dict:
    """``config`` laid over :data:`SOURCES_CONFIG`, in place (the Snakefile's ``config`` is
    Snakemake's own object): its ``sources`` fill in what the configuration files leave out."""
    base = read_config_file(SOURCES_CONFIG)
    config.update(deep_merge(base, {key: config[key] for key in base if key in config}))
    return config


def check_loaded_config(config: dict) -> None:
    """What :func:`load_config` does after merging, for the Snakefile, whose ``config``
    Snakemake merged: validation by the models (:class:`isotropy.configuration.Config`), their
    defaults filled in (each problem a sentence naming the key), then :func:`check_config`."""
    try:
        Config.model_validate(config)
    except ValidationError as error:
        problems = validation_problems(error)
        raise ConfigError(
            problems[0]
            if len(problems) == 1
            else "configuration is invalid:\n  " + "\n  ".join(problems)
        ) from None
    fill_defaults(Config, config)
    check_config(config)


# < > close a <script> or open a tag; ` opens or closes reStructuredText literals, roles and
# links; | a substitution; control characters (line breaks above all) start a new RST line.
MARKUP_CHARACTERS = re.compile(r"[<>`|\x00-\x1f\x7f]")
# An explicit markup start (.. include:: / .. raw::) or a field list (:file:) in one line.
RST_DIRECTIVE = re.compile(r"(^|\s)\.\.(\s|$)|::")
# docutils turns a bare scheme:... into a link; these schemes run code in a browser.
SCRIPT_URL = re.compile(r"\b(javascript|vbscript|data)\s*:", re.IGNORECASE)


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot appear in the report (None: it is plain text)."""
    if match := MARKUP_CHARACTERS.search(text):
        return f"holds the character {match.group()!r}"
    if RST_DIRECTIVE.search(text):
        return "holds reStructuredText markup ('..' alone or '::')"
    if match := SCRIPT_URL.search(text):
        return f"holds a {match.group(1).lower()}: URL"
    return None


def markup_problems(config: Mapping[str, Any]) -> list[str]:
    """One sentence per configuration key or value that could become markup in the report."""
    return [
        f"{path}: {text[:60]!r} {problem}, which the report would render as markup; "
        "use plain names and paths (letters, digits, . _ - / : and spaces)"
        for path, text in _walk(config)
        if isinstance(text, str) and (problem := text_problem(text)) is not None
    ]
