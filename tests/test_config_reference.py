"""The configuration is described once, by its models (isotropy.configuration): every key that
config.yaml and the overlays set has a description there, and both schemas/config.schema.yaml
(the JSON schema, for editors and other tools) and docs/configuration.md's reference of every key
are generated from the models, so none can drift (regenerate both:
``.venv/bin/python tests/test_config_reference.py --write``)."""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from isotropy.configuration import Config, Section
from isotropy.configuration.base import ABSENT_KEY
from isotropy.io import atomic_path, generated_block, markers, write_block

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schemas" / "config.schema.yaml"
PAGE = ROOT / "docs" / "configuration.md"
COMMAND = ".venv/bin/python tests/test_config_reference.py --write"
BEGIN, END = markers("key reference", COMMAND)
NAME, ITEM = "<name>", "[]"


def choices(model: type[BaseModel], key: str) -> list[Any]:
    """The values field ``key`` of ``model`` allows (its Literal, inside a list or not)."""
    annotation = model.model_fields[key].annotation
    while typing.get_origin(annotation) is not typing.Literal:
        annotation = typing.get_args(annotation)[0]  # Annotated, list, Optional: the first
    return list(typing.get_args(annotation))


def _inner(annotation: Any) -> tuple[str, Any]:
    """("", a section), (NAME, a map's entries), (ITEM, a list's items) or ("", None): where
    the keys below a field of type ``annotation`` live."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated or (
        origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2
    ):
        return _inner(next(arg for arg in args if arg is not type(None)))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "", annotation
    if origin in (typing.Union, types.UnionType):  # the encoders: the keys of every kind
        members = tuple(member for arg in args if (member := _inner(arg)[1]) is not None)
        return "", members or None
    if origin in (dict, list) and _inner(args[-1])[1]:
        return (NAME if origin is dict else ITEM), _inner(args[-1])[1]
    return "", None


def _fields(models: Any) -> dict[str, Any]:
    """Key -> field of one section, or of every member of a union (the first wins)."""
    found: dict[str, Any] = {}
    for model in models if isinstance(models, tuple) else (models,):
        for name, field in model.model_fields.items():
            found.setdefault(name, field)
    return found


def undocumented_keys(config: Any, model: Any = Config, path: str = "") -> list[str]:
    """Every key path of ``config`` (nested keys, list items' keys) whose field has no
    description; a map's entry names (``sources.<name>``) are documented by the map."""
    missing: list[str] = []
    fields = _fields(model)
    for key, value in config.items() if isinstance(config, dict) else ():
        if (field := fields.get(key)) is None:
            continue  # an unknown key: the models refuse it
        where = f"{path}.{key}" if path else key
        if not field.description:
            missing.append(where)
        kind, below = _inner(field.annotation)
        if below is None:
            continue
        if kind == NAME and isinstance(value, dict):
            for item in value.values():
                missing += undocumented_keys(item, below, f"{where}.{NAME}")
        elif kind == ITEM and isinstance(value, list):
            for item in value:
                missing += undocumented_keys(item, below, f"{where}{ITEM}")
        else:
            missing += undocumented_keys(value, below, where)
    return sorted(set(missing))


def _shared(model: Any) -> type[Section] | None:
    """The section ``model`` derives from, whose keys it shares (None: its own keys only)."""
    base = model.__bases__[0] if isinstance(model, type) else None
    return base if base is not None and base is not Section and issubclass(base, Section) else None


def _anchor(model: type) -> str:
    return f"[`{model.__name__}`](#{model.__name__.lower()})"


def _rows(models: Any, depth: int, own_only: bool) -> list[str]:
    """One line per key of ``models``, its sections' keys nested below it; with ``own_only``,
    a derived section's own keys only."""
    rows = []
    shared = _shared(models) if own_only else None
    for name, field in _fields(models).items():
        if shared is not None and name in shared.model_fields:
            continue
        kind, below = _inner(field.annotation)
        said = " ".join((field.description or "").split())
        base = _shared(below) if isinstance(below, type) else None
        if base is not None:
            said += f" Its keys: {_anchor(base)}{_changed(below)}."
        elif below in SHARED:
            said += f" Its keys: {_anchor(below)}."
        nested = below is not None and below not in SHARED
        if nested and all(_inner(f.annotation)[1] is None for f in _fields(below).values()):
            # a section of plain keys only: on its parent's line, each key still named once
            said += " " + " ".join(row[2:] for row in _rows(below, 0, own_only=True))
            nested = False
        rows.append(f"{'  ' * depth}- `{name}`: {said}".rstrip())
        if nested:
            rows += _entries(_rows(below, depth + 1, own_only=True), kind, depth + 1)
    return rows


def _entries(rows: list[str], kind: str, depth: int) -> list[str]:
    """The keys of a map's entries written ``<name>.key``."""
    lead = "  " * depth + "- `"
    if kind != NAME:
        return rows
    return [lead + NAME + "." + row[len(lead) :] if row.startswith(lead) else row for row in rows]


def _changed(model: type[Section]) -> str:
    """The defaults a derived section changes, as the reference states them."""
    changed = model.__dict__.get("DEFAULTS", {})
    return f", with {', '.join(f'`{k}: {v}`' for k, v in changed.items())}" if changed else ""


def _shared_sections() -> list[type[Section]]:
    """The sections other sections derive from or share (each listed once at the end)."""
    found: list[type[Section]] = []

    def walk(model: Any) -> None:
        for field in _fields(model).values():
            below = _inner(field.annotation)[1]
            for sub in below if isinstance(below, tuple) else (below,) if below else ():
                if (base := _shared(sub)) is not None and base not in found:
                    found.append(base)
                walk(sub)

    walk(Config)
    return found


SHARED = _shared_sections()


def reference() -> str:
    """One line per key, grouped by top-level key, nested under its parent; the keys a section
    derives from another (``Optimisation``, ``TrainingSettings``) once, at the end, where each
    variant names the defaults it changes. No other defaults: config.yaml shows them, one line
    per key."""
    plain, out = [], []
    for name, field in Config.model_fields.items():
        kind, below = _inner(field.annotation)
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


def json_schema() -> str:
    """schemas/config.schema.yaml: the models' JSON schema, a key left out by ``optional``
    shown without the default pydantic gives it."""

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            if node.pop(ABSENT_KEY, False):
                node.pop("default", None)
            if "description" in node:  # a docstring's line breaks are not the text's
                node["description"] = " ".join(str(node["description"]).split())
            return {k: clean(v) for k, v in node.items() if k != "title"}
        return [clean(item) for item in node] if isinstance(node, list) else node

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    schema |= clean(Config.model_json_schema())
    head = f"# Generated from isotropy.configuration by `{COMMAND}`; do not edit by hand.\n"
    text = yaml.safe_dump(
        schema, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
    )
    return head + text


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
    assert undocumented_keys(config, Top) == ["blocks[].bare"]


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


def test_the_schema_and_the_page_are_the_models():
    fix = f"stale: {COMMAND}"
    assert SCHEMA.read_text(encoding="utf-8") == json_schema(), fix
    page = PAGE.read_text(encoding="utf-8")
    assert generated_block(page, BEGIN, END) == reference(), fix
    # a hand edit of the generated part is told
    edited = page.replace("- `updates`:", "- `updates`: Planted.", 1)
    assert edited != page and generated_block(edited, BEGIN, END) != reference()


def test_each_fine_tuning_default_is_written_once():
    """The Rajaee CLS block states only what differs from the fine-tuning model's defaults."""
    page = reference()
    assert "### TrainingSettings" in page and page.count("- `eval_zeta`:") == 1
    assert "Its keys: [`TrainingSettings`](#trainingsettings), with `learning_rate: 5e-05`" in page


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(f"usage: {COMMAND}")
    write_block(PAGE, reference(), BEGIN, END)
    with atomic_path(SCHEMA) as tmp:
        tmp.write_text(json_schema(), encoding="utf-8")
