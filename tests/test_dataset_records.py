"""One record per data set (isotropy.readers.registry.DatasetSpec): the schema, the configuration's
checks and the layouts agree with the registry, each check tested on a planted mismatch."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from test_config_reference import choices

from isotropy import readers
from isotropy.configuration import Config
from isotropy.configuration.data import Source
from isotropy.configuration.optimisation import Block
from isotropy.configuration.studies import Extensions
from isotropy.readers.polarity import POLARITY_LABELS
from isotropy.sources.layouts import LAYOUTS, POLARITY_FILES
from isotropy.workflow import config as workflow_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def schema() -> dict[str, list]:
    """What the configuration's models allow where the registries hold the list."""
    return {
        "sources.*.kind": choices(Source, "kind"),
        "sensitivity setups": choices(Block, "setups"),
        "extensions.setups": choices(Extensions, "setups"),
    }


@pytest.fixture
def config() -> dict:
    return workflow_config.load_config([ROOT / "config.yaml", ROOT / "config" / "offline.yaml"])


def registry_problems(
    schema: Mapping[str, Any],
    datasets: Mapping[str, readers.registry.DatasetSpec],
    layouts: Mapping[str, Any],
) -> list[str]:
    """Where the models list what the registries hold, and where a record names a layout no
    module registers: one sentence each."""
    source_kinds = schema["sources.*.kind"]
    problems = []
    if sorted(source_kinds) != sorted(layouts):
        problems.append(
            f"schema sources.*.kind lists {sorted(source_kinds)}, LAYOUTS {sorted(layouts)}"
        )
    words = sorted(name for name, spec in datasets.items() if spec.unit == "word")
    for name in schema["sensitivity setups"]:
        if name not in words:
            problems.append(f"schema sensitivity setups name {name!r}, not a word data set {words}")
    extensions = schema["extensions.setups"]
    problems += [
        f"schema extensions.setups names {name!r}, which no module registers"
        for name in extensions
        if name not in datasets
    ]
    for name, spec in datasets.items():
        problems += [
            f"data set {name!r}: role {role!r} asks for layout {kind!r}, which no module registers"
            for role, kind in spec.layouts.items()
            if kind not in layouts
        ]
    return problems


def test_the_schema_lists_what_the_registries_hold(schema):
    assert registry_problems(schema, readers.registry.DATASETS, LAYOUTS) == []


def test_the_registry_check_finds_planted_mismatches(schema):
    planted = copy.deepcopy(schema)
    planted["sources.*.kind"].append("tarball")
    spec = readers.registry.DATASETS["polarity"]
    datasets = {
        **readers.registry.DATASETS,
        "pos": dataclasses.replace(spec, unit="sentence"),
        "toy": dataclasses.replace(spec, unit="word", layouts={"raw_dir": "nope"}),
    }
    found = "\n".join(registry_problems(planted, datasets, LAYOUTS))
    assert "'tarball'" in found
    assert "sensitivity setups name 'pos'" in found
    assert "layout 'nope'" in found


def test_each_record_names_its_unit_layouts_and_options(config, schema):
    assert {readers.registry.DATASETS[name].unit for name in ("pos", "supersense")} == {"word"}
    assert readers.registry.DATASETS["polarity"].unit == "sentence"
    assert readers.registry.DATASETS["snli"].unit == "pair"
    words = {name for name, spec in readers.registry.DATASETS.items() if spec.unit == "word"}
    assert words == {"pos", "supersense"}  # the data sets word-vector encoders can embed
    # Polarity's files are named once, by the layout; the reader labels them from there.
    assert list(POLARITY_LABELS) == list(POLARITY_FILES)
    for name, spec in readers.registry.DATASETS.items():
        assert set(readers.inputs.dataset_options(config, name)) <= set(spec.option_keys), name
    # pos and supersense read their options from the configuration's own keys: schema keys.
    for name in ("pos", "supersense"):
        for key in readers.registry.DATASETS[name].option_keys:
            assert key in Config.model_fields, key


@pytest.mark.parametrize(
    "change, named",
    [
        (
            lambda c: c.update(dataset_options={"nope": {"x": 1}}),
            "dataset_options: 'nope' is not a registered data set",
        ),
        (
            lambda c: c.update(dataset_options={"pos": {"colour": "red"}}),
            "dataset_options.pos: 'colour' is not an option of its reader",
        ),
        (
            lambda c: c["sources"]["polarity"].update(kind="files"),
            "sources.polarity: data set 'polarity' reads it as a 'polarity' source",
        ),
        (
            lambda c: c["sources"]["word2vec"].pop("kind"),
            "sources.word2vec: data set 'pos' reads it as a 'word_vectors' source",
        ),
        (
            lambda c: c["main"]["setups"]["polarity"].update(encoder="word2vec"),
            "'word2vec' is a word-vectors encoder, which looks up single words",
        ),
    ],
)
def test_the_configuration_checks_read_the_records(config, change, named):
    change(config)
    with pytest.raises(workflow_config.ConfigError, match=named):
        workflow_config.check_config(config)
