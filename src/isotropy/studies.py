"""What the Snakemake rules ask of the configuration: runs, settings and cross-checks.

Kept in the package (not in the .smk files) so it is tested without Snakemake.
"""

from __future__ import annotations

from typing import Any, Mapping

OPTIMISATION_STUDIES = ("main", "glue")


class ConfigError(ValueError):
    """A configuration that passes the schema but is inconsistent."""


def deep_merge(base: dict, override: Mapping) -> dict:
    """``override`` laid over ``base`` as Snakemake merges config files: dicts key by key, the rest replaced."""
    merged = dict(base)
    for key, value in override.items():
        merged[key] = deep_merge(base[key], value) if isinstance(value, Mapping) and isinstance(base.get(key), dict) else value
    return merged


def study_runs(config: dict, study: str) -> list[dict[str, Any]]:
    """Every (encoder, dataset, seed) of a direct-optimisation study, in config order."""
    section = config[study]
    if study == "main":
        pairs = [(setup["encoder"], dataset) for dataset, setup in section["setups"].items()]
    elif study == "glue":
        pairs = [(encoder, task) for encoder in section["encoders"] for task in section["tasks"]]
    else:
        raise ConfigError(f"unknown study {study!r}; expected one of {OPTIMISATION_STUDIES}")
    return [{"encoder": e, "dataset": d, "seed": s} for e, d in pairs for s in section["seeds"]]


def optimisation_settings(config: dict, study: str, dataset: str, seed: int) -> dict[str, Any]:
    """Keyword arguments of :class:`isotropy.optimize.OptimisationSettings` for one run."""
    section = config[study]
    bias = section["setups"][dataset].get("bias", True) if study == "main" else True
    return {
        "updates": section["updates"],
        "learning_rate": section["learning_rate"],
        "bias": bias,
        "metric_stride": section["metric_stride"],
        "metric_sample_size": section["metric_sample_size"],
        "seed": seed,
    }


def encoder(config: dict, name: str) -> dict[str, Any]:
    try:
        return config["encoders"][name]
    except KeyError:
        raise ConfigError(f"encoder {name!r} is not defined under 'encoders' (defined: {sorted(config['encoders'])})") from None


def sentence_encoder_spec(config: dict, name: str) -> dict[str, Any]:
    """Settings of a sentence-transformer encoder, as :class:`isotropy.embeddings.SentenceEncoderSpec` kwargs."""
    spec = dict(encoder(config, name))
    if spec.pop("kind") != "sentence-transformer":
        raise ConfigError(f"encoder {name!r} is not a sentence transformer")
    return spec


def word_vector_source(config: dict, name: str) -> str:
    spec = encoder(config, name)
    if spec["kind"] != "word-vectors":
        raise ConfigError(f"encoder {name!r} is not a word-vector encoder")
    return spec["source"]


def word_vector_file(config: dict, name: str) -> str:
    """The manifest of the downloaded word-vector source an encoder looks words up in."""
    from isotropy import download

    return download.source_outputs(word_vector_source(config, name))[0]


def encoders_of_kind(config: dict, kind: str) -> list[str]:
    return [name for name, spec in config["encoders"].items() if spec["kind"] == kind]


def check_config(config: dict) -> None:
    """Cross-references the schema cannot express; raise one error listing every problem."""
    problems = []
    for study in OPTIMISATION_STUDIES:
        if study not in config:
            continue
        for run in {(r["encoder"], r["dataset"]) for r in study_runs(config, study)}:
            if run[0] not in config["encoders"]:
                problems.append(f"{study}: encoder {run[0]!r} (for {run[1]}) is not defined under 'encoders'")
    for name, spec in config["encoders"].items():
        if spec["kind"] == "word-vectors" and spec["source"] not in config["sources"]:
            problems.append(f"encoders.{name}: source {spec['source']!r} is not defined under 'sources'")
    if problems:
        raise ConfigError("configuration is inconsistent:\n  " + "\n  ".join(problems))
