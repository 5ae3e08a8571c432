"""Every key config.yaml and the overlays set has a description in the models, from which the
schema and docs/configuration.md are generated (their staleness: tests/test_committed.py)."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import Field

from isotropy.configuration import Config, Section
from isotropy.configuration.base import sections
from isotropy.configuration.reference import _rows, reference

ROOT = Path(__file__).resolve().parents[1]


def undocumented_keys(config: dict, model: type[Section] = Config) -> list[str]:
    """Every key path of ``config`` whose field has no description (unknown keys: the models
    refuse them)."""
    return sorted(
        f"{where}.{key}" if where else key
        for where, section, mapping in sections(model, config)
        for key in mapping
        if key in section.model_fields and not section.model_fields[key].description
    )


def test_every_key_of_config_yaml_and_the_overlays_is_described():
    for path in [
        ROOT / "config.yaml",
        *sorted((ROOT / "config").glob("*.yaml")),
        ROOT / "tests/config/tiny.yaml",
    ]:
        assert not undocumented_keys(yaml.safe_load(path.read_text(encoding="utf-8"))), path.name


def test_a_planted_key_without_a_description_is_found():
    class Planted(Section):
        described: int = Field(1, description="Described.")
        bare: int = 2

    class Top(Section):
        blocks: list[Planted] = Field([], description="Planted blocks.")

    config = {"blocks": [{"described": 3}]}
    assert undocumented_keys(config, Top) == []
    config["blocks"].append({"bare": 3})
    assert undocumented_keys(config, Top) == ["blocks[1].bare"]


def test_each_fine_tuning_default_is_written_once():
    """The Rajaee CLS block states only what differs from the fine-tuning model's defaults."""
    page = reference()
    assert "### TrainingSettings" in page and page.count("- `eval_zeta`:") == 1
    assert "Its keys: [`TrainingSettings`](#trainingsettings), with `learning_rate: 5e-05`" in page


def test_plain_keys_share_their_parents_line_and_a_section_within_stays_nested():
    class Leaf(Section):
        a: int = Field(1, description="A.")

    class Middle(Section):
        leaf: Leaf = Field(default_factory=Leaf, description="Leaf.")
        b: int = Field(2, description="B.")

    class Top(Section):
        middle: Middle = Field(default_factory=Middle, description="Middle.")

    # `a` on its section's line; `leaf` never flattened onto `middle`'s, where `a` would read
    # as a key of `middle`
    assert _rows(Top, 0, own_only=True) == [
        "- `middle`: Middle.",
        "  - `leaf`: Leaf. `a`: A.",
        "  - `b`: B.",
    ]
