"""The checks of a validated configuration that read registries (the rest: ``Config``'s)."""

from __future__ import annotations

from collections.abc import Iterator

from isotropy import models, sources
from isotropy.configuration import INCONSISTENT, Config, ConfigError, shown_key
from isotropy.configuration.data import SentenceEncoder, WordVectors
from isotropy.models import ModelSpec
from isotropy.readers.inputs import dataset_sources
from isotropy.readers.registry import DATASETS
from isotropy.sources.download import url_problem
from isotropy.sources.layouts import mirror_path_problem


def check_config(config: Config) -> None:
    """Data sets, source layouts, URLs and model files; one error listing every problem."""
    problems: list[str] = []
    kinds = {name: spec.kind for name, spec in config.encoders.items()}
    sentence_encoders = ", ".join(n for n, k in kinds.items() if k == "sentence-transformer")
    for key, name, section in config.references():
        # word vectors look up single words: a data set of sentences or pairs (its unit) is not
        if section == "encoders" and kinds[name] == "word-vectors":
            dataset = key.split(".")[2] if key.startswith("main.") else "GLUE tasks"  # the rest
            if key == "section2.encoder" and config.section2:
                dataset = config.section2.dataset
            if dataset not in DATASETS or DATASETS[dataset].unit != "word":
                problems.append(
                    f"{key}: {name!r} is a word-vectors encoder, which looks up single words and "
                    f"cannot embed the sentences of {dataset}; name a sentence-transformer "
                    f"encoder instead (defined: {sentence_encoders or 'none'})"
                )
    problems += dataset_problems(config) + _model_problems(config) + _source_kind_problems(config)
    problems += _width_problems(config)
    for name, source in config.sources.items():
        urls = source.url if isinstance(source.url, list) else [source.url]
        problems += [f"sources.{name}.url: {p}" for url in urls if (p := url_problem(url))]
        problems += [
            f"sources.{name}.mirror: {p}" for r in source.mirror if (p := mirror_path_problem(r))
        ]
    if problems:
        raise ConfigError(INCONSISTENT + "\n  ".join(problems))


def _source_kind_problems(config: Config) -> list[str]:
    """A source read as another kind than it is: by word vectors, the geometry corpus (a hub split
    or a file) or a main data set's record (its raw layout)."""
    kinds: dict[str, str | None] = {}
    for name, entry in config.sources.items():
        try:
            kinds[name] = entry.kind or sources.source_kind(name)
        except ValueError:
            kinds[name] = None  # no layout: its download refuses it, naming the fix
    clusters = config.geometry.clusters if config.geometry else None
    keys = [("geometry.clusters.static.source", clusters.static.source if clusters else None)]
    keys += [
        (f"encoders.{name}.source", spec.source)
        for name, spec in config.encoders.items()
        if isinstance(spec, WordVectors)
    ]
    vectors = ", ".join(name for name, kind in kinds.items() if kind == "word_vectors")
    problems = [
        f"{key}: {given!r} is a {kinds[given]!r} source, not word vectors; name one of kind "
        f"word_vectors ({vectors})"
        for key, given in keys
        if given is not None and kinds.get(given) not in (None, "word_vectors")
    ]
    corpus = clusters.corpus if clusters else None
    kind = kinds.get(corpus.source) if corpus else None
    if corpus and kind is not None and (kind == "hub") != (wikitext := corpus.format == "wikitext"):
        reads = "a hub split" if wikitext else "a file of a download"
        fix = (
            "of kind hub" if wikitext else "of another kind, or give format: wikitext (a hub split)"
        )
        problems.append(
            f"geometry.clusters.corpus.source: {corpus.source!r} is a {kind!r} source, but "
            f"format {corpus.format} reads {reads}; name a source {fix}"
        )
    for dataset in config.main.setups:
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


def vector_dim(config: Config, name: str) -> int | None:
    """The width of a vector set from its record (derived set, model or source); None: unknown."""
    if config.sensitivity and (spec := config.sensitivity.derived.get(name)) is not None:
        return spec.dim or vector_dim(config, spec.of)
    encoder = config.encoders[name]
    if isinstance(encoder, SentenceEncoder):
        return config.models[encoder.model].dimension
    if (widths := config.sources[encoder.source].dimension) is None:
        return None
    return widths.mirror if sources.resolve_mirror(config.mirror) else widths.url


def _width_problems(config: Config) -> list[str]:
    """A derived set's dim that the width d of its vectors rules out (PCA needs dim <= d, pad
    and orthogonal dim >= d), before its job reads them."""
    problems = []
    for name, spec in config.sensitivity.derived.items() if config.sensitivity else []:
        if (dim := spec.dim) is None or spec.of not in config.encoders:
            continue  # a derived set of a derived set is refused as it is, not followed
        try:
            width = vector_dim(config, spec.of)
        except FileNotFoundError:  # a missing mirror is named elsewhere
            continue
        if width is not None and spec.transform == "pca" and dim > width:
            problems.append(
                f"sensitivity.derived.{name}.dim: {dim}, but PCA keeps at most the {width} "
                f"dimensions of {spec.of!r}; give a dim of {width} or less"
            )
        elif width is not None and spec.transform in ("pad", "orthogonal") and dim < width:
            problems.append(
                f"sensitivity.derived.{name}.dim: {dim}, but {spec.transform} keeps every one of "
                f"the {width} dimensions of {spec.of!r}; give a dim of {width} or more"
            )
    return problems


def _token_windows(config: Config) -> Iterator[tuple[str, int | None, list[str]]]:
    """(key, tokens, models reading them) of every window a model reads whole: corpus windows
    and every ``max_length``."""
    if geometry := config.geometry:
        clusters, sts, classes = geometry.clusters, geometry.sts, geometry.classification
        windows = clusters.corpus.windows
        sentences = [] if windows else clusters.models  # windows read no sentences
        yield "geometry.clusters.corpus.windows", windows, clusters.models
        yield "geometry.max_length", geometry.max_length, sentences + sts.models
        yield "geometry.classification.max_length", classes.max_length, classes.models
    for study, section in (("istar", config.istar), ("rajaee_cls", config.rajaee_cls)):
        if section:
            yield f"{study}.training.max_length", section.training.max_length, section.models
    if heldout := config.extensions and config.extensions.heldout:
        encoders = [config.encoders[config.main.setups[s].encoder] for s in heldout.setups]
        tuned = [e.model for e in encoders if isinstance(e, SentenceEncoder)]
        yield "extensions.heldout.max_length", heldout.max_length, tuned


def _model_problems(config: Config) -> list[str]:
    """A ``dimension``, PCA layer or window of tokens that the model's files on disk contradict."""
    problems: list[str] = []
    clusters, lengths = config.geometry and config.geometry.clusters, list(_token_windows(config))
    for name, entry in config.models.items():
        layers = {}
        if clusters and name in clusters.models:  # studies.geometry.pca_layer's choice
            key = f"pca_layers.{name}" if name in clusters.pca_layers else "pca_layer"
            layers[f"geometry.clusters.{key}"] = clusters.pca_layers.get(name, clusters.pca_layer)
        windows = {key: n for key, n, names in lengths if n and name in names}
        spec = ModelSpec(name=name, **dict(entry))
        problems += models.config_json_problems(spec, layers, windows)
    return problems


def dataset_problems(config: Config) -> list[str]:
    """A data set or reader option named but not registered, and section2 on words or pairs."""
    registered = ", ".join(sorted(DATASETS))
    setups, options = config.main.setups, config.dataset_options
    section2 = [config.section2.dataset] if config.section2 else []
    problems = [
        f"{key}: {shown_key(name)} is not a registered data set (registered: {registered}); "
        "check its spelling"
        for key, names in (
            ("main.setups", list(setups)),
            ("dataset_options", list(options)),
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
