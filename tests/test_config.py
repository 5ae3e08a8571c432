"""The configuration: schema validation, defaults, cross-checks and the runs it implies."""

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from isotropy import studies

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = str(ROOT / "schemas" / "config.schema.yaml")


@pytest.fixture
def config():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def test_shipped_configs_are_valid(config):
    validate(config, SCHEMA)
    studies.check_config(config)
    for extra in sorted((ROOT / "tests" / "config").glob("*.yaml")):
        merged = copy.deepcopy(config)
        merged.update(yaml.safe_load(extra.read_text()))
        validate(merged, SCHEMA)


def test_unknown_keys_are_rejected_and_named(config):
    config["main"]["learning_rat"] = 0.1
    with pytest.raises(Exception, match="learning_rat"):
        validate(config, SCHEMA)
    del config["main"]["learning_rat"]
    config["typo_section"] = {}
    with pytest.raises(Exception, match="typo_section"):
        validate(config, SCHEMA)
    del config["typo_section"]
    config["encoders"]["miniLM"]["batchsize"] = 8  # inside a kind-dependent section
    with pytest.raises(Exception, match="batchsize"):
        validate(config, SCHEMA)
    del config["encoders"]["miniLM"]["batchsize"]
    config["encoders"]["word2vec"]["model"] = "x"  # a sentence-transformer key on word vectors
    with pytest.raises(Exception, match="'model' was unexpected"):
        validate(config, SCHEMA)
    config["encoders"]["word2vec"] = {"kind": "fasttext", "source": "word2vec"}
    with pytest.raises(Exception, match="fasttext"):
        validate(config, SCHEMA)


def test_defaults_are_filled(config):
    del config["main"]["metric_stride"]
    del config["device"]
    del config["glue"]["metric_sample_size"]
    validate(config, SCHEMA)
    assert config["main"]["metric_stride"] == 1
    assert config["device"] == "auto"
    # GLUE samples its metrics (qqp/mnli would be quadratic in ~400k items); the main study does not.
    assert config["glue"]["metric_sample_size"] == 10000 and config["main"]["metric_sample_size"] is None


def test_bad_values_are_rejected(config):
    config["main"]["updates"] = 0
    with pytest.raises(Exception, match="updates|minimum"):
        validate(config, SCHEMA)


def test_undefined_encoder_is_a_config_error(config):
    config["main"]["setups"]["polarity"]["encoder"] = "no-such-model"
    with pytest.raises(studies.ConfigError, match="no-such-model"):
        studies.check_config(config)


def test_main_study_runs_and_settings(config):
    runs = studies.study_runs(config, "main")
    assert len(runs) == 4 * 5
    assert {r["dataset"] for r in runs} == {"polarity", "snli", "pos", "supersense"}
    polarity = studies.optimisation_settings(config, "main", "polarity", 3)
    assert polarity["bias"] is False and polarity["seed"] == 3 and polarity["updates"] == 1000
    assert studies.optimisation_settings(config, "main", "snli", 0)["bias"] is True
    glue = studies.study_runs(config, "glue")
    assert len(glue) == 3 * 8 and studies.optimisation_settings(config, "glue", "cola", 0)["updates"] == 250


@pytest.mark.parametrize(
    "change, named",
    [
        (lambda c: c["main"].update(learning_rat=0.1), ["'main.learning_rat'", "(value 0.1)", "learning_rate, metric_stride"]),
        (lambda c: c.update(typo_section={}), ["'typo_section'", "at the top level", "main, preview, glue"]),
        (lambda c: c["main"].update(updates=0), ["'main.updates'", "value 0", "minimum of 1"]),
        (lambda c: c.update(device="gpu"), ["'device'", "'gpu'", "['auto', 'cpu', 'cuda']"]),
    ],
)
def test_schema_errors_are_one_short_paragraph(config, change, named):
    """Snakemake's own message prints the whole schema (~700 lines); ours names the key, the
    value and what is allowed, in one paragraph."""
    from snakemake.exceptions import WorkflowError

    change(config)
    with pytest.raises(WorkflowError) as raised:
        validate(config, SCHEMA)
    message = str(studies.config_validation_error(raised.value, SCHEMA))
    assert isinstance(studies.config_validation_error(raised.value, SCHEMA), studies.ConfigError)
    assert "\n" not in message and len(message) < 400, message
    for text in named:
        assert text in message, message


def test_preview_is_the_main_study_with_one_seed_and_a_coarse_stride(config):
    validate(config, SCHEMA)  # fills the preview section's defaults
    runs = studies.study_runs(config, "preview")
    assert {r["dataset"] for r in runs} == set(config["main"]["setups"]) and {r["seed"] for r in runs} == {0}
    settings = studies.optimisation_settings(config, "preview", "polarity", 0)
    main = studies.optimisation_settings(config, "main", "polarity", 0)
    assert settings["metric_stride"] == config["preview"]["metric_stride"] > main["metric_stride"] == 1
    assert {k: v for k, v in settings.items() if k != "metric_stride"} == {k: v for k, v in main.items() if k != "metric_stride"}
