"""The configuration's defaults, read from their one home: ``schemas/config.schema.yaml``.

The workflow validates every configuration against the schema, which fills the defaults in.
Code that may also be called with a configuration the schema has not seen (a test's or a
library user's partial mapping) reads a missing key's default here rather than repeating it.
Plain Python: the workflow imports it while it parses.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


@functools.cache
def _schema() -> dict[str, Any]:
    with open(CONFIG_SCHEMA, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def schema_default(*keys: str) -> Any:
    """The schema's default of a configuration key by its path
    (``schema_default("geometry", "clusters", "max_per_type")`` → 20); a copy, so that a caller
    may change it. A key the schema gives no default raises ``KeyError`` naming the path."""
    node = _schema()
    for key in keys:
        try:
            node = node["properties"][key]
        except KeyError:
            raise KeyError(f"the configuration schema has no key {'.'.join(keys)!r}") from None
    if "default" not in node:
        raise KeyError(f"the configuration schema gives {'.'.join(keys)!r} no default")
    return copy.deepcopy(node["default"])


def setting_or_default(config: Any, *keys: str) -> Any:
    """``config`` at ``keys``, or the schema's default where the key or a section on the way is
    absent (a null value is kept: null is a setting)."""
    node = config
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return schema_default(*keys)
        node = node[key]
    return node
