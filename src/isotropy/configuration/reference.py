"""docs/configuration.md's key reference, generated from the models."""

from __future__ import annotations

from typing import Any

from isotropy.configuration import Config, Section
from isotropy.configuration.base import NAME, fields_of, nested


def _shared(model: Any) -> type[Section] | None:
    """The section ``model`` derives from, whose keys it shares (None: its own keys only)."""
    base = model.__bases__[0] if isinstance(model, type) else None
    return base if base is not None and base is not Section and issubclass(base, Section) else None


def _anchor(model: type) -> str:
    return f"[`{model.__name__}`](#{model.__name__.lower()})"


def _rows(models: Any, depth: int, own_only: bool) -> list[str]:
    """One line per key of ``models``, nested keys below (``own_only``: not a base's keys)."""
    rows = []
    shared = _shared(models) if own_only else None
    for name, field in fields_of(models).items():
        if shared is not None and name in shared.model_fields:
            continue
        kind, below = nested(field.annotation)
        said = " ".join((field.description or "").split())
        base = _shared(below) if isinstance(below, type) else None
        if base is not None:
            said += f" Its keys: {_anchor(base)}{_changed(below)}."
        elif below in SHARED:
            said += f" Its keys: {_anchor(below)}."
        below_nested = below is not None and below not in SHARED
        if below_nested and all(nested(f.annotation)[1] is None for f in fields_of(below).values()):
            # a section of plain keys only: on its parent's line, each key still named once
            said += " " + " ".join(row[2:] for row in _rows(below, 0, own_only=True))
            below_nested = False
        rows.append(f"{'  ' * depth}- `{name}`: {said}".rstrip())
        if below_nested:
            rows += _entries(_rows(below, depth + 1, own_only=True), kind, depth + 1)
    return rows


def _entries(rows: list[str], kind: str, depth: int) -> list[str]:
    lead = "  " * depth + "- `"
    if kind != NAME:
        return rows
    return [lead + NAME + "." + row[len(lead) :] if row.startswith(lead) else row for row in rows]


def _changed(model: type[Section]) -> str:
    changed = model.__dict__.get("DEFAULTS", {})
    return f", with {', '.join(f'`{k}: {v}`' for k, v in changed.items())}" if changed else ""


def _shared_sections() -> list[type[Section]]:
    """The sections other sections derive from or share (each listed once at the end)."""
    found: list[type[Section]] = []

    def walk(model: Any) -> None:
        for field in fields_of(model).values():
            below = nested(field.annotation)[1]
            for sub in below if isinstance(below, tuple) else (below,) if below else ():
                if (base := _shared(sub)) is not None and base not in found:
                    found.append(base)
                walk(sub)

    walk(Config)
    return found


SHARED = _shared_sections()


def reference() -> str:
    """One line per key by top-level key; shared base sections once at the end."""
    plain, out = [], []
    for name, field in Config.model_fields.items():
        kind, below = nested(field.annotation)
        said = " ".join((field.description or "").split())
        if below is None:
            plain.append(f"- `{name}`: {said}")
            continue
        if not isinstance(below, tuple) and (base := _shared(below)) is not None:
            said += f" Also the keys of {_anchor(base)}{_changed(below)}."
        rows = _entries(_rows(below, 0, own_only=True), kind, 0)
        out += [f"### {name}", "", said, "", *rows, ""]
    for model in SHARED:
        users = " ".join((model.__doc__ or "").split())
        out += [f"### {model.__name__}", "", users, "", *_rows(model, 0, own_only=False), ""]
    return "\n".join(["### Top-level keys", "", *plain, "", *out]).rstrip() + "\n"
