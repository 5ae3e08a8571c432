"""One record per data set (isotropy.readers.registry.DatasetSpec): the configuration's models,
its checks (each on a planted mismatch) and the layouts agree with the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_workflow import choices

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
def config() -> dict:
    files = [ROOT / "config.yaml", ROOT / "config" / "offline.yaml"]
    return workflow_config.load_config(files).config


def test_the_configuration_models_list_what_the_registries_hold():
    """The source kinds, sensitivity setups and extension setups the models allow are layouts and
    data sets some module registers."""
    datasets = readers.registry.DATASETS
    assert sorted(choices(Source, "kind")) == sorted(LAYOUTS)
    words = {name for name, spec in datasets.items() if spec.unit == "word"}
    assert set(choices(Block, "setups")) <= words
    assert set(choices(Extensions, "setups")) <= set(datasets)
    for name, spec in datasets.items():
        assert set(spec.layouts.values()) <= set(LAYOUTS), name


def test_each_record_names_its_unit_layouts_and_options(config):
    assert readers.registry.DATASETS["polarity"].unit == "sentence"
    assert readers.registry.DATASETS["snli"].unit == "pair"
    words = {name for name, spec in readers.registry.DATASETS.items() if spec.unit == "word"}
    assert words == {"pos", "supersense"}  # the data sets word-vector encoders can embed
    # Polarity's files are named once, by the layout; the reader labels them from there.
    assert list(POLARITY_LABELS) == list(POLARITY_FILES)
    typed = Config.model_validate(config)
    for name, spec in readers.registry.DATASETS.items():
        assert set(readers.inputs.dataset_options(typed, name)) <= set(spec.option_keys), name
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
        (
            lambda c: c["section2"].update(encoder="word2vec"),
            "section2.encoder: 'word2vec' is a word-vectors encoder.*sentences of polarity",
        ),
        (lambda c: c["section2"].update(dataset="nope"), "section2.dataset: 'nope' is not a"),
        (lambda c: c["section2"].update(dataset="pos"), "section2.dataset: 'pos' is not a data"),
        (lambda c: c["main"]["setups"].pop("snli"), "extensions.setups: 'snli' is not under"),
        (
            lambda c: c["encoders"]["word2vec"].update(source="polarity"),
            "encoders.word2vec.source: 'polarity' is a 'polarity' source, not word vectors",
        ),
        (
            lambda c: c["geometry"]["clusters"]["static"].update(source="polarity"),
            "geometry.clusters.static.source: 'polarity' is a 'polarity' source, not word",
        ),
        (
            lambda c: c["geometry"]["clusters"]["corpus"].update(format="wikitext"),
            "corpus.source: 'polarity' is a 'polarity' source, but format wikitext reads a hub",
        ),
        (
            lambda c: c["geometry"]["clusters"]["corpus"].update(source="hf_wikitext2"),
            "corpus.source: 'hf_wikitext2' is a 'hub' source, but format lines reads a file",
        ),
    ],
)
def test_the_configuration_checks_read_the_records(config, change, named):
    change(config)
    with pytest.raises(workflow_config.ConfigError, match=named):
        workflow_config.check_loaded_config(config)
