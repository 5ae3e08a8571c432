"""Crafted configuration: any value that could become markup in the report is refused, whichever
field holds it (isotropy.configuration.base), and repeats counted in linear time."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import TypeAdapter
from test_config import put
from tiny_workflow import overlay_refusal

from isotropy.configuration.base import Seeds, Unique

HOSTILE_VALUES = [
    "x\n\n.. raw:: html\n\n   <img src=x onerror=alert(1)>",
    ".. include:: /etc/os-release",
    "model</script><script>alert(1)</script>",
    "javascript:alert(1)",
    "a``b",
    "|subst|",
]


def _refused(tmp_path: Path, overlay: str) -> str:
    return "\n".join(overlay_refusal(tmp_path, overlay))


@pytest.mark.parametrize("value", HOSTILE_VALUES)
@pytest.mark.parametrize(
    "field",
    ["models.miniLM.path", "models.miniLM.model", "geometry.clusters.corpus.file", "glue.encoders"],
)
def test_markup_in_any_field_is_refused_at_load(tmp_path, field, value):
    overlay = put({}, field, [value] if field == "glue.encoders" else value)
    message = _refused(tmp_path, yaml.safe_dump(overlay))
    assert f"'{field}" in message, message
    if field in ("geometry.clusters.corpus.file", "glue.encoders"):  # no pattern: plain text
        assert "would render as markup" in message


def test_markup_is_refused_in_a_key_a_list_item_and_a_value_anywhere(tmp_path):
    overlay = {
        "dataset_options": {"pos": {"x<y": 1}},
        "istar": {"models": ["miniLM", "c|d"]},
        "section2": {"encoder": "see javascript:alert(1)"},
    }
    message = _refused(tmp_path, yaml.safe_dump(overlay))
    for key in ("dataset_options", "istar.models", "section2.encoder"):
        assert f"config key '{key}'" in message, message
    assert "holds a javascript: URL" in message and "plain names and paths" in message


def test_a_list_is_checked_for_repeats_in_linear_time():
    """150,000 seeds through a folder's configuration took minutes: each item compared ~once."""
    compared = []

    class Counted(int):
        __hash__ = int.__hash__

        def __eq__(self, other: object) -> bool:
            return compared.append(other) or int(self) == other

    TypeAdapter(Unique[object]).validate_python([Counted(i) for i in range(1000)])
    assert len(compared) < 2000
    assert TypeAdapter(Seeds).validate_python(list(range(150_000)))[-1] == 149_999
