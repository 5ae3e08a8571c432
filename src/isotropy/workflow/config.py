"""The configuration's one loader (:func:`load_config`, for the Snakefile, the estimate and the
audit): the files merged as Snakemake merges them, validated by the models (defaults filled in),
then the cross-references the models cannot express, each problem one sentence naming its key.
"""

from __future__ import annotations

import copy
import os
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from snakemake.utils import update_config

from isotropy import models, sensitivity, sources
from isotropy.configuration import INCONSISTENT, Config, fill_defaults
from isotropy.configuration.base import sections
from isotropy.extensions.design import heldout_model
from isotropy.intake import load_yaml, plain_config_problem
from isotropy.istar import study as istar_study
from isotropy.models import ModelSpec
from isotropy.readers.inputs import dataset_sources
from isotropy.readers.registry import DATASETS
from isotropy.sources.download import url_problem
from isotropy.sources.layouts import mirror_path_problem

# Long and seldom edited, so in a file of its own, laid under every configuration.
SOURCES_CONFIG = Path(__file__).resolve().parents[3] / "config" / "sources.yaml"


class ConfigError(ValueError):
    """A configuration that passes the schema but is inconsistent."""


def deep_merge(base: dict, override: Mapping) -> dict:
    """``override`` laid over a copy of ``base`` by Snakemake's own merge of config files."""
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
    """The files merged as Snakemake merges them, an empty mapping in a later file refused."""
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
        below = base.get(key)
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
    """The embedding rule's ``encoder`` parameter: its model's record, then the encoder's own
    settings. Without the model's name (unlike :func:`model_record`): adding it would change the
    parameter of every cached embedding and Snakemake would re-make them all."""
    spec = encoder(config, name)
    if spec["kind"] != "sentence-transformer":
        raise ConfigError(f"encoder {name!r} is not a sentence transformer")
    settings = {key: value for key, value in spec.items() if key not in ("kind", "model")}
    return {**model_spec(config, spec["model"]).as_record(), **settings}


def model_record(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``models.<name>`` as plain values for a rule parameter, so that a changed revision or
    path re-runs the jobs (Snakemake cannot compare a :class:`ModelSpec`)."""
    return {"name": name, **model_spec(config, name).as_record()}


def model_spec(config: Mapping[str, Any], name: str) -> ModelSpec:
    try:
        return ModelSpec.from_config(config, name)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def encoders_of_kind(config: dict, kind: str) -> list[str]:
    return [name for name, spec in config["encoders"].items() if spec["kind"] == kind]


def check_config(config: dict) -> None:
    """The checks that read the registries (data sets, sources, model files, studies), which
    the models cannot import; raise one error listing every problem."""
    problems = []
    sentence_encoders = ", ".join(encoders_of_kind(config, "sentence-transformer")) or "none"
    for key, name, section in Config.model_validate(config).references():
        # word vectors look up single words: a data set of sentences or pairs (its unit) is not
        if section == "encoders" and config["encoders"][name]["kind"] == "word-vectors":
            dataset = _embedded_by(config, key)
            if dataset not in DATASETS or DATASETS[dataset].unit != "word":
                problems.append(
                    f"{key}: {name!r} is a word-vectors encoder, which looks up single words and "
                    f"cannot embed the sentences of {dataset}; name a sentence-transformer "
                    f"encoder instead (defined: {sentence_encoders})"
                )
    problems += dataset_problems(config) + _model_problems(config) + _source_kind_problems(config)
    problems += _width_problems(config)
    if config.get("istar"):
        try:  # the study's own refusal, made at load
            istar_study.run_models(config["istar"])
        except ValueError as error:
            problems.append(str(error))
    problems += sensitivity.config_problems(config)
    for name, source in config["sources"].items():
        for url in source["url"] if isinstance(source["url"], list) else [source["url"]]:
            if (problem := url_problem(url)) is not None:
                problems.append(f"sources.{name}.url: {problem}")
        for key in sources.PIN_KEYS:
            try:  # the download's refusal, made at load
                sources.url_pins(source, key)
            except ValueError as error:
                problems.append(f"sources.{name}.{key}: {error}")
        for rel in source.get("mirror") or []:
            if (problem := mirror_path_problem(rel)) is not None:
                problems.append(f"sources.{name}.mirror: {problem}")
    if problems:
        raise ConfigError(INCONSISTENT + "\n  ".join(problems))


def _source_kind_problems(config: Mapping[str, Any]) -> list[str]:
    """A word-vector encoder, or the geometry's static vectors, reading a source of another kind,
    the geometry corpus reading a hub split as a file or a file as a hub split (the job would
    fail on its files, or the fix be asked of the source), and a main data set whose source has
    another raw layout than its record asks."""
    kinds: dict[str, str | None] = {}
    for name, source in config["sources"].items():
        try:
            kinds[name] = sources.source_kind(name, source)
        except ValueError:
            kinds[name] = None  # no layout: its download refuses it, naming the fix
    clusters = config.get("geometry", {}).get("clusters", {})
    static, corpus = clusters.get("static", {}), clusters.get("corpus", {})
    keys: list[tuple[str, Any]] = [("geometry.clusters.static.source", static.get("source"))]
    keys += [
        (f"encoders.{name}.source", spec["source"])
        for name, spec in config["encoders"].items()
        if spec["kind"] == "word-vectors"
    ]
    vectors = ", ".join(name for name, kind in kinds.items() if kind == "word_vectors")
    problems = [
        f"{key}: {given!r} is a {kinds[given]!r} source, not word vectors; name one of kind "
        f"word_vectors ({vectors})"
        for key, given in keys
        if kinds.get(given) not in (None, "word_vectors")
    ]
    kind, wikitext = kinds.get(corpus.get("source") or ""), corpus.get("format") == "wikitext"
    if kind is not None and (kind == "hub") != wikitext:
        reads = "a hub split" if wikitext else "a file of a download"
        fix = (
            "of kind hub" if wikitext else "of another kind, or give format: wikitext (a hub split)"
        )
        problems.append(
            f"geometry.clusters.corpus.source: {corpus['source']!r} is a {kind!r} source, but "
            f"format {corpus['format']} reads {reads}; name a source {fix}"
        )
    for dataset in config["main"]["setups"]:
        if dataset not in DATASETS:
            continue  # named by dataset_problems
        layouts = DATASETS[dataset].layouts
        try:
            roles = dataset_sources(config, dataset)
        except ValueError as error:  # e.g. pos from WordNet without a word-vector encoder
            problems.append(f"main.setups.{dataset}: {error}")
            continue
        for role, source in roles.items():
            if role not in layouts or source not in kinds:
                continue  # required_sources names a missing source while the DAG is built
            if kinds[source] != layouts[role]:
                problems.append(
                    f"sources.{source}: data set {dataset!r} reads it as a {layouts[role]!r} "
                    f"source, but its kind is {kinds[source]!r}; give it kind: {layouts[role]}"
                )
    return problems


def vector_dim(config: Mapping[str, Any], name: str) -> int | None:
    """The width of a vector set from its record (a derived set's, its model's or its source's,
    for the files in use); None: no record gives it."""
    if (spec := (config["sensitivity"].get("derived") or {}).get(name)) is not None:
        return spec.get("dim") or vector_dim(config, spec["of"])
    spec = config["encoders"][name]
    if spec["kind"] == "sentence-transformer":
        return ModelSpec.from_config(config, spec["model"]).dimension
    widths = config["sources"][spec["source"]].get("dimension") or {}
    return widths.get("mirror" if sources.resolve_mirror(config.get("mirror")) else "url")


def _width_problems(config: Mapping[str, Any]) -> list[str]:
    """A derived set's dim that the configured width d of the vectors rules out (its job would
    refuse it only after reading them): PCA to dim needs dim <= d, padding or an isometry into
    dim needs dim >= d."""
    problems = []
    for name, spec in config.get("sensitivity", {}).get("derived", {}).items():
        dim, transform = spec.get("dim"), spec["transform"]
        try:  # an undefined encoder, model or source, or a missing mirror, is named elsewhere
            of_encoder = spec["of"] in config["encoders"]  # else refused as it is, not followed
            width = vector_dim(config, spec["of"]) if dim is not None and of_encoder else None
        except (KeyError, ValueError, FileNotFoundError):
            width = None
        if width is not None and transform == "pca" and dim > width:
            problems.append(
                f"sensitivity.derived.{name}.dim: {dim}, but PCA keeps at most the {width} "
                f"dimensions of {spec['of']!r}; give a dim of {width} or less"
            )
        elif width is not None and transform in ("pad", "orthogonal") and dim < width:
            problems.append(
                f"sensitivity.derived.{name}.dim: {dim}, but {transform} keeps every one of the "
                f"{width} dimensions of {spec['of']!r}; give a dim of {width} or more"
            )
    return problems


def _token_windows(config: Mapping[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """(key, tokens, the models reading them) of every window of tokens a model reads whole,
    special tokens included: corpus windows and every ``max_length`` (the inputs truncated)."""
    geometry = config.get("geometry", {})
    clusters, sts, classes = (geometry.get(k, {}) for k in ("clusters", "sts", "classification"))
    windows = clusters.get("corpus", {}).get("windows")
    sentences = [] if windows else clusters.get("models", [])  # windows read no sentences
    yield "geometry.clusters.corpus.windows", windows, clusters.get("models")
    yield "geometry.max_length", geometry.get("max_length"), sentences + sts.get("models", [])
    yield "geometry.classification.max_length", classes.get("max_length"), classes.get("models")
    for study in ("istar", "rajaee_cls"):
        section = config.get(study, {})
        length = section.get("training", {}).get("max_length")
        yield f"{study}.training.max_length", length, section.get("models")
    heldout = config.get("extensions", {}).get("heldout", {})
    try:  # a setup or encoder not defined is named elsewhere
        tuned = [heldout_model(config, setup) for setup in heldout.get("setups", [])]
    except KeyError:
        tuned = []
    yield "extensions.heldout.max_length", heldout.get("max_length"), tuned


def _model_problems(config: Mapping[str, Any]) -> list[str]:
    """A ``dimension``, PCA layer or window of tokens that the model's files on disk contradict."""
    problems: list[str] = []
    clusters = config.get("geometry", {}).get("clusters", {})
    pca_layers, lengths = clusters.get("pca_layers", {}), list(_token_windows(config))
    for name in config["models"]:
        layers = {}
        if name in clusters.get("models", []):  # studies.geometry.pca_layer's choice
            key = f"pca_layers.{name}" if name in pca_layers else "pca_layer"
            layers[f"geometry.clusters.{key}"] = pca_layers.get(name, clusters["pca_layer"])
        windows = {key: n for key, n, names in lengths if n and name in (names or [])}
        spec = ModelSpec.from_config(config, name)
        problems += models.config_json_problems(spec, layers, windows)
    return problems


def _embedded_by(config: Mapping[str, Any], key: str) -> str:
    """The data set an encoder named at ``key`` embeds (every other one embeds GLUE tasks)."""
    if key.startswith("main."):
        return key.split(".")[2]
    return str(config["section2"].get("dataset")) if key == "section2.encoder" else "GLUE tasks"


def dataset_problems(config: Mapping[str, Any]) -> list[str]:
    """A main setup, section2's data set or ``dataset_options`` naming no registered data set or
    option, and section2 on words or pairs."""
    registered = ", ".join(sorted(DATASETS))
    setups, options = config["main"]["setups"], config["dataset_options"]
    section2 = [config["section2"]["dataset"]] if config.get("section2") else []
    problems = [
        f"{key}: {shown_key(name)} is not a registered data set (registered: {registered}); "
        "check its spelling"
        for key, names in (
            ("main.setups", setups),
            ("dataset_options", options),
            ("section2.dataset", section2),
        )
        for name in names
        if name not in DATASETS
    ]
    problems += [
        f"section2.dataset: {name!r} is not a data set of sentences with one label each, which "
        "the section 2 figure needs (e.g. polarity)"
        for name in section2
        if name in DATASETS and DATASETS[name].unit != "sentence"
    ]
    for dataset, given in options.items():
        if dataset not in DATASETS:
            continue  # named above
        keys = DATASETS[dataset].option_keys
        problems += [
            f"dataset_options.{dataset}: {shown_key(key)} is not an option of its reader "
            f"(its record names: {', '.join(keys) or 'none'})"
            for key in given
            if key not in keys
        ]
    return problems


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
    """Whether a Snakemake command line sends its jobs elsewhere (an executor other than local,
    or a profile, which may name one), where the controller's GPU says nothing."""
    for index, word in enumerate(argv):
        name, _, value = word.partition("=")
        if name in ("--profile", "--workflow-profile"):
            return True
        if name in ("--executor", "-e"):
            value = value or (argv[index + 1] if index + 1 < len(argv) else "")
            if value not in ("local", "dryrun", "touch"):
                return True
    return False


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
    """The dotted key of a pydantic error location, without the labels of a union's members."""
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


def load_config(files: Sequence[str | os.PathLike]) -> dict[str, Any]:
    """The configuration the workflow runs; any problem is a :class:`ConfigError`."""
    config = with_sources(load_config_files(files))
    check_loaded_config(config)
    return config


def with_sources(config: dict) -> dict:
    """``config`` laid over :data:`SOURCES_CONFIG`, in place (the Snakefile's ``config`` is
    Snakemake's own object)."""
    base = read_config_file(SOURCES_CONFIG)
    config.update(deep_merge(base, {key: config[key] for key in base if key in config}))
    return config


def check_loaded_config(config: dict) -> None:
    """What :func:`load_config` does after merging (the Snakefile's ``config`` is merged by
    Snakemake): the models' validation, their defaults, then :func:`check_config`."""
    try:
        Config.model_validate(config)
    except ValidationError as error:
        problems = validation_problems(error, config)
        raise ConfigError(
            problems[0]
            if len(problems) == 1
            else "configuration is invalid:\n  " + "\n  ".join(problems)
        ) from None
    fill_defaults(Config, config)
    check_config(config)
