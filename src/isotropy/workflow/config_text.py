"""Configuration text that could turn into markup is refused when the configuration loads.

Captions (``report/*.rst``) put configuration values into reStructuredText, which Snakemake
renders with raw HTML and file inclusion on, and Snakemake stores each rule's parameters as JSON
inside ``<script>`` without escaping ``</``. Neither can be escaped from our side, so every key
and string value of the configuration, wherever it sits, must be plain text: no markup
characters, no line breaks, no reStructuredText directive, no script URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

# < > close a <script> or open a tag; ` opens or closes reStructuredText literals, roles and
# links; | a substitution; control characters (line breaks above all) start a new RST line.
MARKUP_CHARACTERS = re.compile(r"[<>`|\x00-\x1f\x7f]")
# An explicit markup start (.. include:: / .. raw::) or a field list (:file:) in one line.
RST_DIRECTIVE = re.compile(r"(^|\s)\.\.(\s|$)|::")
# docutils turns a bare scheme:... into a link; these schemes run code in a browser.
SCRIPT_URL = re.compile(r"\b(javascript|vbscript|data)\s*:", re.IGNORECASE)


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(key path, text) of every mapping key and string value inside ``value``."""
    if isinstance(value, Mapping):
        for name, item in value.items():
            path = f"{key}.{name}" if key else str(name)
            yield path, str(name)
            yield from _strings(item, path)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _strings(item, f"{key}[{index}]")
    elif isinstance(value, str):
        yield key, value


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot appear in the report (None: it is plain text)."""
    if match := MARKUP_CHARACTERS.search(text):
        return f"holds the character {match.group()!r}"
    if RST_DIRECTIVE.search(text):
        return "holds reStructuredText markup ('..' alone or '::')"
    if match := SCRIPT_URL.search(text):
        return f"holds a {match.group(1).lower()}: URL"
    return None


def markup_problems(config: Mapping[str, Any]) -> list[str]:
    """One sentence per configuration key or value that could become markup in the report."""
    return [
        f"{path}: {text[:60]!r} {problem}, which the report would render as markup; "
        "use plain names and paths (letters, digits, . _ - / : and spaces)"
        for path, text in _strings(config)
        if (problem := text_problem(text)) is not None
    ]
