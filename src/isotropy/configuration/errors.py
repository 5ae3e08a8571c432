"""The refusals of the models as sentences, one per key: the key, its value and what is
allowed."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from isotropy.configuration import Config
from isotropy.configuration.base import sections


class ConfigError(ValueError):
    """A configuration that passes the schema but is inconsistent."""


def shown_key(key: Any) -> str:
    """A config key as typed, with the code point of every non-ASCII character (``mаin`` with a
    Cyrillic а looks like ``main``)."""
    text = str(key)
    odd = [
        f"{char!r} U+{ord(char):04X} {unicodedata.name(char, 'unnamed')} at position {index + 1}"
        for index, char in enumerate(text)
        if not char.isascii() or not char.isprintable()
    ]
    return repr(text) + (f" ({'; '.join(odd)})" if odd else "")


def validation_problems(error: ValidationError, config: dict) -> list[str]:
    """One sentence per key the models refuse: the key, its value and what is allowed."""
    found = {key: section for key, section, _ in sections(Config, config)}
    problems: dict[str, str] = {}
    for item in error.errors(include_url=False):
        where = _key(item["loc"], config, missing=item["type"] == "missing")
        if where in problems:
            continue  # one sentence per key, not one per alternative of a union
        message = item["msg"].removeprefix("Value error, ")
        # a section's check names its field first ("k_range: 9 > 2"): part of the key
        field, _, said = message.partition(": ")
        if not where:  # Config's checks across sections: their sentences as written
            problems[where] = message
        elif item["type"] == "extra_forbidden":
            parent = where.rpartition(".")[0]
            allowed = ", ".join(found[parent].model_fields) if parent in found else "any name"
            problems[where] = (
                f"config key {shown_key(where)} (value {_short(item['input'])}) is not allowed "
                f"{'under ' + repr(parent) if parent else 'at the top level'}; allowed there: "
                f"{allowed}. Check its spelling or remove it; docs/configuration.md documents "
                "every key."
            )
        elif item["type"] == "missing":
            problems[where] = (
                f"config key {where!r} is required; docs/configuration.md says what it holds."
            )
        elif item["type"] == "value_error":
            if where in found and field in found[where].model_fields:
                value = item["input"].get(field) if isinstance(item["input"], Mapping) else None
                where = f"{where}.{field}"
                problems[where] = f"config key {where!r} has value {_short(value)}: {said}"
            else:
                problems[where] = f"config key {where!r}: {message}"
        else:
            problems[where] = f"config key {where!r} has value {_short(item['input'])}: {message}"
    return list(problems.values())


def _key(loc: tuple, config: dict, missing: bool) -> str:
    """The dotted key of a pydantic error location, without the labels of a union's members."""
    value: Any = config
    path = ""
    for index, part in enumerate(loc):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int):
            value = value[part]
        elif not (missing and index == len(loc) - 1):
            continue  # a union member's label
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
