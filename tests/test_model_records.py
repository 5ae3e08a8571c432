"""One record per model: its name in the papers and the width of its vectors are stated in its
``models`` entry, never guessed from a hub or encoder name, and the verdicts read them there."""

from __future__ import annotations

import pandas as pd
import pytest

from isotropy.configuration import Config
from isotropy.standins import StandIns
from isotropy.studies import paper_cost
from isotropy.verdicts.measurements import optimisation
from isotropy.verdicts.measurements.cai import cosine_measurements
from isotropy.verdicts.measurements.istar import istar_measurements
from isotropy.workflow import checks
from isotropy.workflow import config as workflow_config
from isotropy.workflow.inputs import config_subset


@pytest.fixture
def config(config):
    """The suite's configuration with the defaults the models fill in."""
    workflow_config.check_loaded_config(config)
    return config


def _cosine(model: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": "contextual",
            "model": model,
            "layer": [0, 1],
            "s_inter": [0.5, 0.4],
            "s_intra": [0.6, 0.5],
            "s_inter_adjusted": [0.02, -0.03],
            "s_intra_adjusted": [0.2, 0.1],
            "n_clusters": [1, 3],
            "isoscore_within": [None, 0.1],
            "isoscore_within_ratio": [None, 0.9],
        }
    )


def _cosine_row(config, model):
    # the centred-cosine row and the within-cluster row name the model alike
    row, within = cosine_measurements(_cosine(model), config, StandIns())
    assert (within["paper_setup"], within["stand_in"]) == (row["paper_setup"], row["stand_in"])
    return row["paper_setup"], row["stand_in"]


def test_the_verdicts_read_models_as_configured_and_as_the_rules_pass_them(config):
    """The measurements take the configuration itself: BERT is the paper's BERT, whoever calls."""
    assert _cosine_row(config, "bert") == ("BERT", "")
    subset = config_subset(Config.model_validate(config))
    assert _cosine_row(subset, "bert") == ("BERT", "")
    assert _cosine_row(config, "gpt2") == ("GPT-2", "")
    assert subset["models"]["bert"]["paper"] == "BERT"
    assert "models" not in subset["geometry"]  # a key the schema forbids


def test_a_hub_name_that_looks_like_the_papers_model_is_not_taken_for_it(config):
    """A fine-tuned BERT is not reported as Cai et al.'s BERT, whatever its hub name says."""
    config["models"]["bert"].update(model="textattack/bert-base-uncased-SST-2", paper=None)
    assert _cosine_row(config, "bert") == (
        "BERT",
        "bert (textattack/bert-base-uncased-SST-2) for BERT",
    )
    runs = pd.DataFrame(
        {
            "model": "bert-cased",
            "task": "sst2",
            "regulariser": ["none", "istar"],
            "lambda": [0.0, -1.0],
            "seed": 0,
            "metric": [0.9, 0.8],
            "isoscore_star": [0.1, 0.05],
        }
    )
    stated = istar_measurements(runs, config)
    assert {row["stand_in"] for row in stated} == {""}
    config["models"]["bert-cased"]["paper"] = None
    unstated = istar_measurements(runs, config)
    assert {row["stand_in"] for row in unstated} == {
        "bert-cased (google-bert/bert-base-cased) for BERT-base / ALBERT / DistilBERT"
    }


def test_a_renamed_encoder_keeps_its_papers_name_its_dimension_and_its_cost(config, tmp_path):
    config["encoders"]["small"] = dict(config["encoders"]["miniLM"])
    bound = optimisation._setup("glue", "small", "cola", config, StandIns())
    assert bound.keywords["paper_setup"] == "miniLM/cola"
    assert checks.vector_dim(workflow_config.check_loaded_config(config), "small") == 384
    assert paper_cost.embedding_seconds(
        Config.model_validate(config), "small", "polarity", tmp_path
    ) == pytest.approx(
        paper_cost.embedding_seconds(Config.model_validate(config), "miniLM", "polarity", tmp_path)
    )
    # A model without a stated dimension or a measured cost is unknown, not guessed.
    config["models"]["miniLM"].update(model="someone/other-model", dimension=None)
    assert checks.vector_dim(workflow_config.check_loaded_config(config), "small") is None
    assert (
        paper_cost.embedding_seconds(Config.model_validate(config), "small", "polarity", tmp_path)
        is None
    )
