"""Every default that code restates equals the configuration model's, its one home
(isotropy.configuration): the settings dataclasses and the STS transforms' keyword defaults, as
pypsa-eur tests its config defaults. The comparison is tested on a planted mismatch. (The
fine-tuning settings restate nothing: TrainingSettings is the model.)"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from isotropy import transforms
from isotropy.configuration.geometry import Classification, Sts
from isotropy.configuration.optimisation import Main
from isotropy.configuration.studies import ClusterMethod
from isotropy.geometry import classification, sts
from isotropy.optimize import OptimisationSettings
from isotropy.rajaee_cls.method import ClusterSettings


def model_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The defaults of a section's fields (those that give one)."""
    return {
        name: field.default for name, field in model.model_fields.items() if not field.is_required()
    }


def dataclass_defaults(cls: type) -> dict[str, Any]:
    return {
        f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }


def signature_defaults(function: Callable[..., Any]) -> dict[str, Any]:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return type(a) is type(b) and a == b or (isinstance(a, float) and a == b)


def mismatches(where: str, code: Mapping[str, Any], model: Mapping[str, Any]) -> list[str]:
    """One sentence per key both give a default for, where the two differ."""
    return [
        f"{where}.{key}: code says {code[key]!r}, the model {model[key]!r}"
        for key in sorted(set(code) & set(model))
        if not _same(code[key], model[key])
    ]


def all_mismatches(models: Mapping[str, dict[str, Any]]) -> list[str]:
    problems = mismatches(
        "rajaee_cls.cluster_method",
        dataclass_defaults(ClusterSettings),
        models["rajaee_cls.cluster_method"],
    )
    problems += mismatches("main", dataclass_defaults(OptimisationSettings), models["main"])
    for function in (
        transforms.cluster_based_isotropy,
        sts.enhance,
        sts.evaluate_sts,
        sts.evaluate_sts_tokens,
    ):
        problems += mismatches(
            f"geometry.sts ({function.__name__})",
            signature_defaults(function),
            models["geometry.sts"],
        )
    problems += mismatches(
        "geometry.classification (classification_table)",
        signature_defaults(classification.classification_table),
        models["geometry.classification"],
    )
    return problems


@pytest.fixture
def models() -> dict[str, dict[str, Any]]:
    return {
        "main": model_defaults(Main),
        "rajaee_cls.cluster_method": model_defaults(ClusterMethod),
        "geometry.sts": model_defaults(Sts),
        "geometry.classification": model_defaults(Classification),
    }


def test_every_restated_default_equals_the_models(models):
    assert all_mismatches(models) == []
    # Each comparison covers the keys it should: none is vacuous.
    assert set(dataclass_defaults(ClusterSettings)) == set(models["rajaee_cls.cluster_method"])
    for function in (sts.enhance, sts.evaluate_sts, sts.evaluate_sts_tokens):
        assert {"n_clusters", "n_directions", "abtt_directions"} <= set(
            signature_defaults(function)
        )


@pytest.mark.parametrize(
    "section, key, value, named",
    [
        (
            "rajaee_cls.cluster_method",
            "clusters",
            5,
            "rajaee_cls.cluster_method.clusters: code says 3, the model 5",
        ),
        ("main", "learning_rate", 0.01, "main.learning_rate: code says 0.001, the model 0.01"),
        (
            "geometry.sts",
            "n_clusters",
            26,
            "geometry.sts (enhance).n_clusters: code says 27, the model 26",
        ),
    ],
)
def test_a_planted_mismatch_is_found(models, section, key, value, named):
    models[section][key] = value
    assert named in "\n".join(all_mismatches(models))
