"""Every default that code restates equals the schema's, its one home (schemas/config.schema.yaml):
the settings dataclasses and the STS transforms' keyword defaults, as pypsa-eur tests its
config defaults. The comparison is tested on a planted mismatch."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from isotropy import transforms
from isotropy.configuration.finetune import TrainingSettings
from isotropy.defaults import CONFIG_SCHEMA
from isotropy.geometry import classification, sts
from isotropy.optimize import OptimisationSettings
from isotropy.rajaee_cls.method import ClusterSettings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schema() -> dict:
    return yaml.safe_load(CONFIG_SCHEMA.read_text(encoding="utf-8"))


def schema_defaults(node: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults of a schema object's properties (those that give one)."""
    return {k: v["default"] for k, v in node.get("properties", {}).items() if "default" in v}


def dataclass_defaults(cls: type) -> dict[str, Any]:
    if issubclass(cls, BaseModel):
        return {name: field.default for name, field in cls.model_fields.items()}
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


def mismatches(where: str, code: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """One sentence per key both give a default for, where the two differ."""
    return [
        f"{where}.{key}: code says {code[key]!r}, the schema {schema[key]!r}"
        for key in sorted(set(code) & set(schema))
        if not _same(code[key], schema[key])
    ]


def all_mismatches(schema: Mapping[str, Any]) -> list[str]:
    properties = schema["properties"]
    training = schema_defaults(properties["istar"]["properties"]["training"])
    optimisation = {
        **schema_defaults(schema["definitions"]["optimisation"]),
        **schema_defaults(properties["main"]),  # main's own: updates, metric_sample_size
    }
    geometry_sts = schema_defaults(properties["geometry"]["properties"]["sts"])
    problems = mismatches("istar.training", dataclass_defaults(TrainingSettings), training)
    cluster = schema_defaults(properties["rajaee_cls"]["properties"]["cluster_method"])
    problems += mismatches(
        "rajaee_cls.cluster_method", dataclass_defaults(ClusterSettings), cluster
    )
    problems += mismatches("main", dataclass_defaults(OptimisationSettings), optimisation)
    for function in (
        transforms.cluster_based_isotropy,
        sts.enhance,
        sts.evaluate_sts,
        sts.evaluate_sts_tokens,
    ):
        problems += mismatches(
            f"geometry.sts ({function.__name__})", signature_defaults(function), geometry_sts
        )
    geometry_classification = schema_defaults(
        properties["geometry"]["properties"]["classification"]
    )
    problems += mismatches(
        "geometry.classification (classification_table)",
        signature_defaults(classification.classification_table),
        geometry_classification,
    )
    return problems


def test_every_restated_default_equals_the_schemas(schema):
    assert all_mismatches(schema) == []
    # Each comparison covers the keys it should: none is vacuous.
    training = schema_defaults(schema["properties"]["istar"]["properties"]["training"])
    assert set(dataclass_defaults(TrainingSettings)) == set(training)
    # the Rajaee CLS study's training block has the same keys (its own defaults)
    rajaee = schema["properties"]["rajaee_cls"]["properties"]
    assert set(schema_defaults(rajaee["training"])) == set(training)
    assert set(dataclass_defaults(ClusterSettings)) == set(rajaee["cluster_method"]["properties"])
    for function in (sts.enhance, sts.evaluate_sts, sts.evaluate_sts_tokens):
        assert {"n_clusters", "n_directions", "abtt_directions"} <= set(
            signature_defaults(function)
        )


@pytest.mark.parametrize(
    "path, value, named",
    [
        (
            ("properties", "istar", "properties", "training", "properties", "epochs"),
            5,
            "istar.training.epochs: code says 4, the schema 5",
        ),
        (
            ("definitions", "optimisation", "properties", "learning_rate"),
            0.01,
            "main.learning_rate: code says 0.001, the schema 0.01",
        ),
        (
            ("properties", "geometry", "properties", "sts", "properties", "n_clusters"),
            26,
            "geometry.sts (enhance).n_clusters: code says 27, the schema 26",
        ),
    ],
)
def test_a_planted_mismatch_is_found(schema, path, value, named):
    planted = copy.deepcopy(schema)
    node = planted
    for key in path:
        node = node[key]
    node["default"] = value
    assert named in "\n".join(all_mismatches(planted))
