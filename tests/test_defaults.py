"""Issue 37: every default has one home, the configuration schema; code that may see a
configuration the schema has not filled in reads the default from there, not from a copy."""

from __future__ import annotations

import pytest
import yaml

from isotropy import readers
from isotropy.defaults import CONFIG_SCHEMA, schema_default, setting_or_default
from isotropy.sources import DOWNLOAD_DEFAULTS
from isotropy.workflow import config as workflow_config
from isotropy.workflow import inputs


@pytest.fixture(scope="module")
def filled():
    """config.yaml's required sections alone, with the defaults the schema fills in."""
    with open(CONFIG_SCHEMA.parents[1] / "config.yaml", encoding="utf-8") as handle:
        full = workflow_config.with_sources(yaml.safe_load(handle))
    config = {key: full[key] for key in ("sources", "encoders", "main", "models")}
    workflow_config.check_loaded_config(config)
    return config


def test_the_download_defaults_are_the_schemas(filled):
    assert DOWNLOAD_DEFAULTS == filled["downloads"]
    assert DOWNLOAD_DEFAULTS["max_extracted_bytes"] == 32 * 1024**3


def test_a_partial_configuration_reads_the_same_defaults_as_a_validated_one(filled):
    for dataset in ("pos", "supersense"):
        assert readers.inputs.dataset_options({}, dataset) == readers.inputs.dataset_options(
            filled, dataset
        )
    assert inputs.configured_studies({"main": {"updates": 9}}) == ["main"]
    assert setting_or_default({}, "studies") == filled["studies"]


def test_a_setting_wins_and_a_null_is_a_setting():
    config = {"geometry": {"clusters": {"max_per_type": None, "static": None}}}
    assert setting_or_default(config, "geometry", "clusters", "max_per_type") is None
    assert setting_or_default(config, "geometry", "clusters", "lid_sample_size") == 10000
    # A null section on the way stands for the section's defaults.
    assert setting_or_default(config, "geometry", "clusters", "static", "sample_size") == 10000
    assert setting_or_default({"pos_source": "wordnet"}, "pos_source") == "wordnet"


def test_a_key_without_a_default_is_named():
    with pytest.raises(KeyError, match="no key 'geometry.nope'"):
        schema_default("geometry", "nope")
    with pytest.raises(KeyError, match="gives 'geometry.clusters.models' no default"):
        schema_default("geometry", "clusters", "models")
    first = schema_default("studies")
    first.append("changed")
    assert "changed" not in schema_default("studies")
