"""The configuration's one loader (:func:`load_config`): merged, validated, then checked."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from pydantic import ValidationError
from snakemake.utils import update_config

from isotropy.configuration import Config, ConfigError, validation_problems
from isotropy.intake import load_yaml, plain_config_problem
from isotropy.models import ModelSpec
from isotropy.workflow.checks import check_config

# Long and seldom edited, so in a file of its own, laid under every configuration.
SOURCES_CONFIG = Path(__file__).resolve().parents[3] / "config" / "sources.yaml"


def deep_merge(base: dict, override: Mapping) -> dict:
    """``override`` laid over a copy of ``base`` by Snakemake's own merge of config files."""
    merged = copy.deepcopy(base)
    update_config(merged, override)
    return merged


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
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
    if (spec := config["encoders"].get(name)) is None:
        defined = sorted(config["encoders"])
        raise ConfigError(f"encoder {name!r} is not defined under 'encoders' (defined: {defined})")
    return spec


def sentence_encoder_spec(config: dict, name: str) -> dict[str, Any]:
    """The embedding rule's ``encoder`` parameter, without the model's name (unlike
    :func:`model_record`): adding it would re-make every cached embedding."""
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


def submits_jobs_elsewhere(argv: Sequence[str]) -> bool:
    """Whether a Snakemake command line sends its jobs elsewhere (an executor or a profile)."""
    for index, word in enumerate(argv):
        name, _, value = word.partition("=")
        if name in ("--profile", "--workflow-profile"):
            return True
        if name in ("--executor", "-e"):
            value = value or (argv[index + 1] if index + 1 < len(argv) else "")
            if value not in ("local", "dryrun", "touch"):
                return True
    return False


class Loaded(NamedTuple):  # a configuration that load_config merged, and its model
    config: dict[str, Any]  # defaults filled in, as the rules read it
    settings: Config


def load_config(files: Sequence[str | os.PathLike]) -> Loaded:
    config = with_sources(load_config_files(files))
    return Loaded(config, check_loaded_config(config))


def with_sources(config: dict) -> dict:
    """``config`` laid over :data:`SOURCES_CONFIG`, in place (the Snakefile's is Snakemake's)."""
    base = read_config_file(SOURCES_CONFIG)
    config.update(deep_merge(base, {key: config[key] for key in base if key in config}))
    return config


def check_loaded_config(config: dict) -> Config:
    """:func:`load_config` after merging: validated, defaults filled in, checked; the model."""
    try:
        model = Config.model_validate(config)
    except ValidationError as error:
        problems = validation_problems(error, config)
        head = "" if len(problems) == 1 else "configuration is invalid:\n  "
        raise ConfigError(head + "\n  ".join(problems)) from None
    check_config(model)
    return model
