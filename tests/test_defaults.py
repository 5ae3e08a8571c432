"""Every default has one home, the configuration's models: code that restates one (settings
dataclasses, keyword defaults) equals the model's, as pypsa-eur tests its config defaults."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from isotropy import transforms
from isotropy.configuration import Config, fill_defaults
from isotropy.configuration.finetune import ClsTraining, TrainingSettings
from isotropy.configuration.geometry import Classification, Sts
from isotropy.geometry import classification, sts
from isotropy.sources import DOWNLOAD_DEFAULTS


def test_a_partial_configuration_reads_the_same_defaults_as_a_validated_one(shipped_config):
    """config.yaml gives none of these: the models fill them in."""
    assert DOWNLOAD_DEFAULTS == shipped_config["downloads"]
    assert DOWNLOAD_DEFAULTS["max_extracted_bytes"] == 32 * 1024**3
    assert Config.default("studies") == shipped_config["studies"]


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


def model_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The defaults of a section's fields (those that give one)."""
    return {
        name: field.default for name, field in model.model_fields.items() if not field.is_required()
    }


def code_defaults(code: Callable[..., Any]) -> dict[str, Any]:
    """The defaults a dataclass's fields or a function's signature restate."""
    if dataclasses.is_dataclass(code):
        fields = dataclasses.fields(code)
        return {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    parameters = inspect.signature(code).parameters.items()
    return {name: p.default for name, p in parameters if p.default is not inspect.Parameter.empty}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return type(a) is type(b) and a == b or (isinstance(a, float) and a == b)


STS_FUNCTIONS = (sts.enhance, sts.evaluate_sts)
# (section, its model, the code that restates its defaults)
RESTATED = [
    *(("geometry.sts", Sts, f) for f in (transforms.cluster_based_isotropy, *STS_FUNCTIONS)),
    ("geometry.classification", Classification, classification.classification_table),
]


def all_mismatches(models: Mapping[str, dict[str, Any]]) -> list[str]:
    """One sentence per default that both the code and its model give, where the two differ."""
    problems = []
    for key, _, code in RESTATED:
        restated, model = code_defaults(code), models[key]
        for name in sorted(set(restated) & set(model)):
            if not _same(restated[name], model[name]):
                said = f"code says {restated[name]!r}, the model {model[name]!r}"
                problems.append(f"{key} ({code.__name__}).{name}: {said}")
    return problems


def test_every_restated_default_equals_the_models_and_a_planted_mismatch_is_found():
    models = {key: model_defaults(model) for key, model, _ in RESTATED}
    assert all_mismatches(models) == []
    # Each comparison covers the keys it should: none is vacuous.
    for function in STS_FUNCTIONS:
        assert {"n_clusters", "n_directions", "abtt_directions"} <= set(code_defaults(function))
    models["geometry.sts"]["n_clusters"] = 28
    found = "\n".join(all_mismatches(models))
    assert "geometry.sts (enhance).n_clusters: code says 27, the model 28" in found
