"""The checks of a validated configuration that read registries above the configuration's floor;
the others are :class:`isotropy.configuration.Config`'s."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from isotropy import models, sources
from isotropy.configuration import INCONSISTENT, Config, ConfigError, shown_key
from isotropy.extensions.design import heldout_model
from isotropy.models import ModelSpec
from isotropy.readers.inputs import dataset_sources
from isotropy.readers.registry import DATASETS
from isotropy.sources.download import url_problem
from isotropy.sources.layouts import mirror_path_problem


def check_config(config: dict) -> None:
    """Data sets, source layouts, URLs and model files; one error listing every problem."""
    problems, model = [], Config.model_validate(config)
    kinds = {name: spec.kind for name, spec in model.encoders.items()}
    sentence_encoders = ", ".join(n for n, k in kinds.items() if k == "sentence-transformer")
    for key, name, section in model.references():
        # word vectors look up single words: a data set of sentences or pairs (its unit) is not
        if section == "encoders" and kinds[name] == "word-vectors":
            dataset = _embedded_by(config, key)
            if dataset not in DATASETS or DATASETS[dataset].unit != "word":
                problems.append(
                    f"{key}: {name!r} is a word-vectors encoder, which looks up single words and "
                    f"cannot embed the sentences of {dataset}; name a sentence-transformer "
                    f"encoder instead (defined: {sentence_encoders or 'none'})"
                )
    problems += dataset_problems(config) + _model_problems(config) + _source_kind_problems(config)
    problems += _width_problems(config)
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
