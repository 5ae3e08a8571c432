"""Issue 37: every default has one home, the configuration's models (isotropy.configuration);
code that may see a configuration the models have not filled in reads the default from there,
not from a copy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from isotropy import readers
from isotropy.configuration import Config, fill_defaults
from isotropy.configuration.finetune import ClsTraining, TrainingSettings
from isotropy.sources import DOWNLOAD_DEFAULTS
from isotropy.workflow import config as workflow_config
from isotropy.workflow import inputs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def filled():
    """config.yaml's required sections alone, with the defaults the models fill in."""
    full = workflow_config.with_sources(yaml.safe_load((ROOT / "config.yaml").read_text()))
    config = {key: full[key] for key in ("sources", "encoders", "main", "models")}
    workflow_config.check_loaded_config(config)
    return config


def test_the_download_defaults_are_the_models(filled):
    assert DOWNLOAD_DEFAULTS == filled["downloads"]
    assert DOWNLOAD_DEFAULTS["max_extracted_bytes"] == 32 * 1024**3


def test_a_partial_configuration_reads_the_same_defaults_as_a_validated_one(filled):
    for dataset in ("pos", "supersense"):
        assert readers.inputs.dataset_options({}, dataset) == readers.inputs.dataset_options(
            filled, dataset
        )
    assert inputs.configured_studies({"main": {"updates": 9}}) == ["main"]
    assert Config.default("studies") == filled["studies"]


def test_filling_keeps_what_is_given_and_leaves_optional_keys_out():
    config = {"rajaee_cls": {"training": {"epochs": 7}}, "istar": {"models": ["m"]}}
    fill_defaults(Config, config)
    training = config["rajaee_cls"]["training"]
    # the variant's own defaults, the shared ones from the fine-tuning model, the given one kept
    assert training["epochs"] == 7 and training["learning_rate"] == 5e-5
    assert training["eval_zeta"] == TrainingSettings.default("eval_zeta") == 0.75
    assert list(training)[0] == "epochs"  # given keys first, as the JSON schema filled them
    assert config["istar"]["training"]["learning_rate"] == 1e-5
    assert "run_models" in config["istar"] and "geometry" not in config  # a null default, none
    # a key without a default (`optional`) stays out
    assert "zetas" not in fill_defaults(Config, {"istar_estimator": {}})["istar_estimator"]


def test_a_variant_changes_only_the_defaults_it_lists():
    changed = {
        name
        for name, field in ClsTraining.model_fields.items()
        if field.default != TrainingSettings.model_fields[name].default
    }
    assert changed == set(ClsTraining.DEFAULTS)
    # bounds and descriptions stay the fine-tuning model's
    for name in ClsTraining.DEFAULTS:
        shared, variant = TrainingSettings.model_fields[name], ClsTraining.model_fields[name]
        assert (variant.description, variant.metadata) == (shared.description, shared.metadata)
    with pytest.raises(ValueError, match="greater than 0"):
        ClsTraining(learning_rate=0.0)
