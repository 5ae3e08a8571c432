"""What the Snakemake rules ask of the configuration: runs, settings, targets and cross-checks.

Kept in the package (not in the .smk files) so it is tested without Snakemake. Plain Python:
the workflow imports it while it parses. The I-STAR grid is :mod:`isotropy.istar.grid`.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from isotropy import paths

OPTIMISATION_STUDIES = ("main", "glue", "preview")
# `make preview`: the main study's setups with one seed and a coarser metric stride, written to
# results/preview/ so that it is never mistaken for the paper's protocol in results/main/.
PREVIEW_KEYS = ("seeds", "metric_stride")
# Data sets whose items are single words; every other one holds sentences, which word vectors
# (a lookup of one word) cannot embed.
WORD_DATASETS = frozenset({"pos", "supersense"})


class ConfigError(ValueError):
    """A configuration that passes the schema but is inconsistent."""


def deep_merge(base: dict, override: Mapping) -> dict:
    """``override`` laid over ``base`` as Snakemake merges config files: dicts key by key, the rest replaced."""
    merged = dict(base)
    for key, value in override.items():
        merged[key] = (
            deep_merge(base[key], value)
            if isinstance(value, Mapping) and isinstance(base.get(key), dict)
            else value
        )
    return merged


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """One configuration file as a mapping; unreadable, binary, invalid, empty or not a mapping
    is a :class:`ConfigError` naming the file."""
    import yaml

    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(
            f"config file {path} cannot be read ({error.strerror or error}); check the path given to --configfile"
        ) from None
    if b"\0" in data:
        raise ConfigError(
            f"config file {path} holds NUL bytes (a binary file, not YAML); give a YAML config file"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (byte {error.start}); save it as UTF-8 YAML"
        ) from None
    try:
        loaded = yaml.safe_load(text)
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
            f"config file {path} holds a {type(loaded).__name__}, not a mapping of settings (key: value)"
        )
    return loaded


def load_config_files(paths: Sequence[str | os.PathLike]) -> dict[str, Any]:
    """The files laid over each other as Snakemake does (later files win key by key), each named
    when it cannot be read, and an empty mapping in a later file refused (:func:`check_overlay`)."""
    merged: dict[str, Any] = {}
    for index, path in enumerate(paths):
        overlay = read_config_file(path)
        if index:
            check_overlay(merged, overlay, path)
        merged = deep_merge(merged, overlay)
    return merged


def check_overlay(base: Mapping[str, Any], overlay: Mapping[str, Any], path: Any) -> None:
    """Refuse an empty mapping laid over a non-empty one: merged key by key, it removes nothing."""
    for key, empty in _empty_over_full(base, overlay):
        raise ConfigError(
            f"{key}: {{}} in config file {path} leaves the {len(empty)} entries the earlier config files "
            f"give it ({', '.join(map(str, list(empty)[:4]))}) in place, since config files are merged "
            "key by key; list the entries to keep instead"
        )


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


def study_section(config: dict, study: str) -> dict[str, Any]:
    """A direct-optimisation study's settings; preview is the main study with its own seeds and stride."""
    if study == "preview":
        return deep_merge(
            config["main"],
            {k: v for k, v in config.get("preview", {}).items() if k in PREVIEW_KEYS},
        )
    return config[study]


def settings_stamp(config: dict, study: str) -> str:
    """The line that marks a preview's tables and figures as such ('' for the full studies)."""
    if study != "preview":
        return ""
    section = study_section(config, study)
    seeds = ", ".join(str(seed) for seed in section["seeds"])
    return (
        f"PREVIEW (make preview): seed{'s' if len(section['seeds']) > 1 else ''} {seeds}, metrics after "
        f"{every_nth_update(section['metric_stride'])}; not the paper's protocol (make run)"
    )


def every_nth_update(stride: int) -> str:
    """'every update', 'every 2nd update', 'every 10th update', ..."""
    if stride == 1:
        return "every update"
    suffix = (
        "th" if stride % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(stride % 10, "th")
    )
    return f"every {stride}{suffix} update"


def study_runs(config: dict, study: str) -> list[dict[str, Any]]:
    """Every (encoder, dataset, seed) of a direct-optimisation study, in config order."""
    section = study_section(config, study)
    if study in ("main", "preview"):
        pairs = [(setup["encoder"], dataset) for dataset, setup in section["setups"].items()]
    elif study == "glue":
        pairs = [(encoder, task) for encoder in section["encoders"] for task in section["tasks"]]
    else:
        raise ConfigError(f"unknown study {study!r}; expected one of {OPTIMISATION_STUDIES}")
    return [{"encoder": e, "dataset": d, "seed": s} for e, d in pairs for s in section["seeds"]]


def present_runs(study: str, root: str = ".") -> list[dict[str, Any]]:
    """Runs of ``study`` already on disk under ``root``: both trace.parquet and summary.json of
    ``results/<study>/<encoder>/<dataset>/seed<seed>/`` exist, sorted by encoder, dataset, seed."""
    from pathlib import Path

    found = []
    base = Path(root) / "results" / study
    for summary in base.glob("*/*/seed*/summary.json"):
        seed = summary.parent.name.removeprefix("seed")
        if seed.isdigit() and (summary.parent / "trace.parquet").is_file():
            found.append(
                {
                    "encoder": summary.parent.parent.parent.name,
                    "dataset": summary.parent.parent.name,
                    "seed": int(seed),
                }
            )
    return sorted(found, key=lambda r: (r["encoder"], r["dataset"], r["seed"]))


def table_runs(config: dict, study: str, root: str = ".") -> list[dict[str, Any]]:
    """The runs a study's tables and figures hold: every configured run, then every run already
    on disk that the configuration can still name, so tables accumulate run by run.

    GLUE keeps a present run whose encoder is defined under ``encoders`` (and whose task is a
    GLUE task): adding ``glue: {encoders: [mpnet], tasks: [wnli]}`` after a five-task miniLM run
    tabulates all six. The main study (and its preview) keeps present runs of a configured setup
    (the data set with its configured encoder) at any seed.
    """
    runs = study_runs(config, study)
    known = {(r["encoder"], r["dataset"], r["seed"]) for r in runs}
    if study == "glue":
        from isotropy.readers import GLUE_TASKS

        def fits(run):
            return run["encoder"] in config.get("encoders", {}) and run["dataset"] in GLUE_TASKS

    else:
        setups = study_section(config, study)["setups"]

        def fits(run):
            return run["dataset"] in setups and setups[run["dataset"]]["encoder"] == run["encoder"]

    extra = [
        r
        for r in present_runs(study, root)
        if fits(r) and (r["encoder"], r["dataset"], r["seed"]) not in known
    ]
    return runs + extra


def caption_facts(config: dict, study: str, root: str = ".") -> dict[str, Any]:
    """What a direct-optimisation study's tables and figures hold, for their report captions:
    the runs tabulated (:func:`table_runs`) and the study's settings (preview: main's with its
    own seeds and stride). ``band`` says whether any panel has 2 or more seeds."""
    section = study_section(config, study)
    runs = table_runs(config, study, root)
    seeds_per_panel: dict[tuple[str, str], set[int]] = {}
    for run in runs:
        seeds_per_panel.setdefault((run["encoder"], run["dataset"]), set()).add(run["seed"])
    datasets = list(dict.fromkeys(r["dataset"] for r in runs))
    return {
        "seeds": sorted({r["seed"] for r in runs}),
        "encoders": list(dict.fromkeys(r["encoder"] for r in runs)),
        "datasets": datasets,
        "setups": (
            {d: section["setups"][d] for d in datasets if d in section["setups"]}
            if study in ("main", "preview")
            else {}
        ),
        "band": any(len(seeds) >= 2 for seeds in seeds_per_panel.values()),
        "recorded": (
            "after every update"
            if section["metric_stride"] == 1
            else f"at step 0, after {every_nth_update(section['metric_stride'])} and after the last"
        ),
        "metric_stride": section["metric_stride"],
        "updates": section["updates"],
        "learning_rate": section["learning_rate"],
        "metric_sample_size": section.get("metric_sample_size"),
    }


def optimisation_settings(config: dict, study: str, dataset: str, seed: int) -> dict[str, Any]:
    """Keyword arguments of :class:`isotropy.optimize.OptimisationSettings` for one run."""
    section = study_section(config, study)
    bias = section["setups"][dataset].get("bias", True) if study in ("main", "preview") else True
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
        raise ConfigError(
            f"encoder {name!r} is not defined under 'encoders' (defined: {sorted(config['encoders'])})"
        ) from None


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
    from isotropy import sources as download

    return download.source_outputs(word_vector_source(config, name))[0]


def encoders_of_kind(config: dict, kind: str) -> list[str]:
    return [name for name, spec in config["encoders"].items() if spec["kind"] == kind]


def check_config(config: dict) -> None:
    """Cross-references the schema cannot express; raise one error listing every problem."""
    from isotropy import sensitivity
    from isotropy import sources as download

    problems = [
        f"{key}: {value} is not a finite number; give a finite value (NaN and infinity are never valid settings)"
        for key, value in non_finite_numbers(config)
    ]
    for study in ("main", "glue"):  # preview runs main's setups
        if study in config:
            problems += _encoder_problems(config, study)
    problems += _setup_problems(config)
    problems += _stride_problems(config)
    problems += sensitivity.check_config(config)
    for name, spec in config["encoders"].items():
        if spec["kind"] == "word-vectors" and spec["source"] not in config["sources"]:
            problems.append(
                f"encoders.{name}: source {spec['source']!r} is not defined under 'sources'"
            )
    for name, source in config["sources"].items():
        for url in source["url"] if isinstance(source["url"], list) else [source["url"]]:
            if (problem := download.url_problem(url)) is not None:
                problems.append(f"sources.{name}.url: {problem}")
        for rel in source.get("mirror") or []:
            if (problem := download.mirror_path_problem(rel)) is not None:
                problems.append(f"sources.{name}.mirror: {problem}")
    problems += unpinned_hub_entries(config)
    if problems:
        raise ConfigError("configuration is inconsistent:\n  " + "\n  ".join(problems))


HUB_REVISION = re.compile(r"^[0-9a-f]{40}$")


def unpinned_hub_entries(config: Mapping[str, Any]) -> list[str]:
    """Why each hub data set or model of ``config`` is not pinned to a 40-hex commit (empty: all are).

    A model read from a local folder (``path``) needs no revision; anything fetched from the hub
    does, or a re-run could silently read other files.
    """
    fix = (
        "pin it to the hub commit (40 hex digits, the 'Commit' of the repository's history page); "
        "README.md, 'Data sources', says how"
    )
    entries: list[tuple[str, Mapping[str, Any]]] = [
        (f"sources.{name}.hub", source["hub"])
        for name, source in (config.get("sources") or {}).items()
        if source.get("hub")
    ]
    models = [
        *[(f"encoders.{n}", e) for n, e in (config.get("encoders") or {}).items()],
        *[(f"split_models.{n}", e) for n, e in (config.get("split_models") or {}).items()],
        *[(f"geometry.models.{n}", e) for n, e in _section(config, "geometry", "models").items()],
        *[(f"istar.models.{n}", e) for n, e in _section(config, "istar", "models").items()],
    ]
    entries += [
        (key, entry) for key, entry in models if entry.get("model") and not entry.get("path")
    ]
    return [
        f"{key}: {entry.get('path') or entry.get('model')!r} has revision {entry.get('revision')!r}; {fix}"
        for key, entry in entries
        if not HUB_REVISION.match(str(entry.get("revision") or ""))
    ]


def _section(config: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        config = (config or {}).get(key) or {}
    return config


def _setup_problems(config: dict) -> list[str]:
    """Main-study setups that name no registered data set (a misspelt key plans no run)."""
    from isotropy.readers import DATASETS

    setups = (config.get("main") or {}).get("setups") or {}
    return [
        f"main.setups: {shown_key(name)} is not a registered data set (registered: "
        f"{', '.join(sorted(DATASETS))}); check its spelling"
        for name in setups
        if name not in DATASETS
    ]


def _stride_problems(config: dict) -> list[str]:
    """Strides that leave fewer than 3 metric evaluations per run: no per-seed correlation."""
    problems = []
    for study in ("main", "glue"):  # preview's stride is checked by the estimate of make preview
        section = config.get(study) or {}
        updates, stride = section.get("updates"), section.get("metric_stride")
        if isinstance(updates, int) and isinstance(stride, int) and stride >= updates:
            problems.append(
                f"{study}.metric_stride: {stride} is not below {study}.updates ({updates}), so each run "
                "is measured only at its start and end and its per-seed correlations (3 points at "
                f"least) stay blank; give a metric_stride below {updates}"
            )
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


def cuda_problem(config: Mapping[str, Any]) -> str | None:
    """Why ``device`` cannot be used on this machine (None if it can, or it is not CUDA).

    Imports torch only for a CUDA device, so that a dry run of a CPU configuration stays light.
    """
    device = str(config.get("device", "auto"))
    if device != "cuda" and not device.startswith("cuda:"):
        return None
    import torch

    if not torch.cuda.is_available():
        return (
            f"device: {device!r} asks for a CUDA GPU, but this machine has none visible to torch "
            f"{torch.__version__}; set device: auto (CUDA when present, else the CPU) or cpu"
        )
    index = int(device.split(":")[1]) if ":" in device else 0
    if index >= torch.cuda.device_count():
        return (
            f"device: {device!r} names GPU {index}, but this machine has {torch.cuda.device_count()}; "
            "set device: cuda or auto"
        )
    return None


def validation_error_message(error: Any, schema: Mapping | None = None) -> str:
    """One short paragraph for a jsonschema ``ValidationError``: the key, its value and what is allowed.

    Snakemake's own message prints the whole schema (~700 lines) around the key; ``schema`` (the
    root) resolves ``$ref`` so that the keys a shared definition allows are listed too.
    """
    from jsonschema.exceptions import best_match

    while error.context:  # anyOf/oneOf: the alternative that came closest, not "valid under none"
        error = best_match(error.context)
    where = ".".join(str(part) for part in error.absolute_path)
    fix = "schemas/config.schema.yaml documents every key and its default."
    if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(
        error.instance, Mapping
    ):
        allowed = _allowed_keys(error.schema, schema or {})
        unexpected = sorted(set(error.instance) - set(allowed)) or [error.message]
        key = ".".join(filter(None, [where, str(unexpected[0])]))
        listed = ", ".join(allowed) if allowed else "any name"
        return (
            f"config key {shown_key(key)} (value {_short(error.instance.get(unexpected[0]))}) is not allowed "
            f"{'under ' + repr(where) if where else 'at the top level'}; allowed there: {listed}. "
            f"Check its spelling or remove it; {fix}"
        )
    return f"config key {where or '(top level)'!r} has value {_short(error.instance)}: {error.message}. {fix}"


def _allowed_keys(subschema: Mapping, root: Mapping) -> list[str]:
    keys = list(subschema.get("properties", {}))
    for part in subschema.get("allOf", []):
        ref = part.get("$ref", "")
        if ref.startswith("#/definitions/"):
            part = root.get("definitions", {}).get(ref.rsplit("/", 1)[1], {})
        keys += [key for key in part.get("properties", {}) if key not in keys]
    return keys


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def config_validation_error(error: Exception, schema_path: str) -> Exception:
    """A :class:`ConfigError` with one short paragraph for Snakemake's schema-validation error."""
    import yaml
    from jsonschema import ValidationError

    # Snakemake raises its WorkflowError while handling jsonschema's error: that is the context.
    candidates = [*getattr(error, "args", ()), error.__cause__, error.__context__]
    cause = next((arg for arg in candidates if isinstance(arg, ValidationError)), None)
    if cause is None:
        return error
    with open(schema_path, encoding="utf-8") as handle:
        schema = yaml.safe_load(handle)
    return ConfigError(validation_error_message(cause, schema))


def non_finite_numbers(value: Any, key: str = "") -> Iterator[tuple[str, float]]:
    """(dotted key, value) of every NaN or infinity in a configuration: JSON schema cannot refuse them."""
    if isinstance(value, Mapping):
        for name, item in value.items():
            yield from non_finite_numbers(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from non_finite_numbers(item, f"{key}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
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
        elif config["encoders"][name]["kind"] == "word-vectors" and dataset not in WORD_DATASETS:
            problems.append(
                f"{key}: {name!r} is a word-vectors encoder, which looks up single words and cannot embed the "
                f"sentences of {dataset}; name a sentence-transformer encoder instead (defined: {sentence_encoders})"
            )
    return problems


def setting(config: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """A configuration value by key path (``setting(config, "geometry", "batch_size")``), or
    ``default`` when it or a section on the way is absent (or null), so rule files parse for
    configs without that study.

    The one way the rules read the configuration.
    """
    value: Any = config
    for key in keys:
        if value is None:
            return default
        value = value.get(key)
    return default if value is None else value


# ---------------------------------------------------------------------------------------------
# Geometry study (rules/geometry.smk)

GEOMETRY_RESERVED_MODEL_NAMES = {"static", "figures"}  # folder names of results/geometry/ itself
GEOMETRY_FIGURE_TABLES = {
    "cosine_by_layer": "cosine_by_layer",
    "lid_by_layer": "lid",
    "sts": "sts",
}  # figure → table


def check_geometry_config(config: Mapping[str, Any]) -> None:
    """Cross-references of the ``geometry`` section the schema cannot express; one error lists all."""
    if "geometry" not in config:
        return
    geometry = config["geometry"]
    problems = []
    for name in GEOMETRY_RESERVED_MODEL_NAMES & set(geometry["models"]):
        problems.append(f"geometry.models: {name!r} is a reserved folder name; rename the model")
    for part in ("clusters", "sts"):
        for name in geometry[part]["models"]:
            if name not in geometry["models"]:
                problems.append(
                    f"geometry.{part}.models: {name!r} is not defined under geometry.models (defined: {sorted(geometry['models'])})"
                )
    corpus = geometry["clusters"]["corpus"]
    if corpus["source"] not in config.get("sources", {}):
        problems.append(
            f"geometry.clusters.corpus.source: {corpus['source']!r} is not defined under 'sources'"
        )
    if corpus["format"] == "lines" and not corpus.get("file"):
        problems.append("geometry.clusters.corpus: format 'lines' needs a file")
    for name in geometry["sts"]["models"] and geometry["sts"]["datasets"]:
        split = geometry["sts"]["splits"].get(name, "validation" if name == "stsb" else "test")
        if f"hf_{name}_{split}" not in config.get("sources", {}):
            problems.append(
                f"geometry.sts.splits.{name}: {split!r} needs source 'hf_{name}_{split}' under 'sources'"
            )
    static = geometry["clusters"].get("static", {}).get("source")
    if static is not None and static not in config.get("sources", {}):
        problems.append(
            f"geometry.clusters.static.source: {static!r} is not defined under 'sources'"
        )
    low, high = geometry["clusters"]["k_range"]
    if high < low:
        problems.append(f"geometry.clusters.k_range: {low} > {high}")
    if problems:
        raise ValueError("geometry configuration is inconsistent:\n  " + "\n  ".join(problems))


def geometry_model_entry(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A geometry model's settings (rule params: a changed revision or path re-runs its jobs)."""
    entry = config["geometry"]["models"][name]
    return {
        "name": name,
        "model": entry["model"],
        "revision": entry.get("revision"),
        "path": entry.get("path"),
    }


def geometry_wildcards(config: Mapping[str, Any]) -> dict[str, str]:
    """Regular expressions of the study's wildcards: only configured models and corpus match."""
    models = setting(config, "geometry", "models") or {}
    corpus = setting(config, "geometry", "clusters", "corpus", "name")
    return {
        "model": "|".join(re.escape(name) for name in models) or "^$",
        "corpus": re.escape(corpus) if corpus else "^$",
        "sts": "stsb|sickr",
        "seed": r"\d+",
    }


def geometry_cluster_files(config: Mapping[str, Any], artefact: str) -> list[str]:
    """One per-model artefact of the cluster analysis for every model and seed."""
    if "geometry" not in config:
        return []
    clusters = config["geometry"]["clusters"]
    return [
        paths.geometry_run_file(artefact, model, clusters["corpus"]["name"], seed)
        for model in clusters["models"]
        for seed in config["geometry"]["seeds"]
    ]


def geometry_static_files(config: Mapping[str, Any], artefact: str) -> list[str]:
    """The static word-vector comparison rows (none when ``clusters.static.source`` is null)."""
    source = setting(config, "geometry", "clusters", "static", "source")
    if source is None:
        return []
    return [
        paths.static_geometry_file(artefact, source, seed) for seed in config["geometry"]["seeds"]
    ]


def geometry_sts_datasets(config: Mapping[str, Any]) -> list[str]:
    """The configured STS data sets this run can read: SICK-R (optional) is planned out when the
    data mirror lacks its files, so no job is made for it (:func:`unavailable_sts_datasets`)."""
    if "geometry" not in config:
        return []
    missing = set(unavailable_sts_datasets(config))
    return [name for name in config["geometry"]["sts"]["datasets"] if name not in missing]


def unavailable_sts_datasets(config: Mapping[str, Any]) -> list[str]:
    """Configured optional STS data sets (SICK-R) whose split's files the data mirror lacks
    (none without a mirror: a download is then attempted)."""
    from isotropy.sources import missing_mirror_files, resolve_mirror

    sts = setting(config, "geometry", "sts", default={})
    if not sts.get("models") or "sickr" not in sts.get("datasets", []):
        return []
    mirror = resolve_mirror(config.get("mirror"))
    split = sts.get("splits", {}).get("sickr", "test")
    source = f"hf_sickr_{split}"
    if mirror is None or source not in config.get("sources", {}):
        return []
    return ["sickr"] if missing_mirror_files(source, config, mirror) else []


def geometry_sts_files(config: Mapping[str, Any]) -> list[str]:
    """Every per-model STS table of the data sets this run can read."""
    if "geometry" not in config:
        return []
    sts = config["geometry"]["sts"]
    return [
        paths.geometry_run_file("sts.csv", model, dataset, seed)
        for model in sts["models"]
        for dataset in geometry_sts_datasets(config)
        for seed in config["geometry"]["seeds"]
    ]


def geometry_clustering_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The k-means-by-silhouette settings shared by the cosine, PCA and static steps."""
    keys = ("k_range", "silhouette_threshold", "silhouette_sample_size")
    return {key: setting(config, "geometry", "clusters", key) for key in keys}


def geometry_targets(config: Mapping[str, Any]) -> list[str]:
    """Every final output of the geometry study for a validated config (for ``rule all``).

    Empty when the config has no ``geometry`` section.
    """
    if "geometry" not in config:
        return []
    geometry = config["geometry"]
    corpus = geometry["clusters"]["corpus"]["name"]
    targets = []
    if geometry["clusters"]["models"] or geometry["clusters"]["static"].get("source"):
        targets += ["results/geometry/cosine_by_layer.csv", "results/geometry/lid.csv"]
        for figure in ("cosine_by_layer", "lid_by_layer"):
            targets += [
                f"results/geometry/figures/{figure}.pdf",
                f"results/geometry/figures/{figure}.png",
            ]
    if geometry["sts"]["models"]:
        targets += [
            "results/geometry/sts.csv",
            "results/geometry/figures/sts.pdf",
            "results/geometry/figures/sts.png",
        ]
    for model in geometry["clusters"]["models"]:
        for seed in geometry["seeds"]:
            for ext in ("pdf", "png"):
                targets.append(
                    f"results/geometry/figures/{model}/{corpus}/seed{seed}/pca_view.{ext}"
                )
    return targets
