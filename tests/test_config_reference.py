"""config.yaml documents nothing twice (issue 71): every key it sets has a ``description`` in
schemas/config.schema.yaml, and docs/configuration.md's reference of every key is generated from
the schema, so the two cannot drift (regenerate: ``.venv/bin/python tests/test_config_reference.py
--write``)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from isotropy.io import generated_block, markers, write_block

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schemas" / "config.schema.yaml"
PAGE = ROOT / "docs" / "configuration.md"
BEGIN, END = markers("key reference", ".venv/bin/python tests/test_config_reference.py --write")
NAME, ITEM = "<name>", "[]"


def _resolve(schema: dict, node):
    """A node with its ``$ref`` followed (the node's own keys, a description say, kept)."""
    while isinstance(node, dict) and "$ref" in node:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {**schema["definitions"][node["$ref"].rsplit("/", 1)[1]], **rest}
    return node


def _branches(schema: dict, node) -> list[dict]:
    """The node and every subschema whose properties apply with it (allOf, anyOf, then, else)."""
    node = _resolve(schema, node)
    if not isinstance(node, dict):
        return []
    found = [node]
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(key, []):
            found += _branches(schema, branch)
    for key in ("then", "else"):
        if key in node:
            found += _branches(schema, node[key])
    return found


def _children(schema: dict, nodes: list, shared: bool = True) -> dict[str, list]:
    """Key (a property, ``<name>`` for a map's entries, ``[]`` for a list's items) -> the
    subschemas that describe it; ``shared=False`` leaves out the properties a section takes
    from a shared definition (``allOf: [$ref]``)."""
    children: dict[str, list] = {}
    for node in nodes:
        node = _resolve(schema, node)
        inherited = (
            [] if shared else [b for ref in node.get("allOf", []) for b in _branches(schema, ref)]
        )
        for branch in _branches(schema, node):
            own = {
                k: v
                for k, v in branch.get("properties", {}).items()
                if not any(k in b.get("properties", {}) for b in inherited)
            }
            if any(branch is b for b in inherited):
                continue
            for key, sub in own.items():
                children.setdefault(key, []).append(_resolve(schema, sub))
            for key, field in ((NAME, "additionalProperties"), (ITEM, "items")):
                if isinstance(branch.get(field), dict):
                    children.setdefault(key, []).append(_resolve(schema, branch[field]))
    return children


def _description(nodes: list) -> str:
    return next((" ".join(n["description"].split()) for n in nodes if n.get("description")), "")


def undocumented_keys(config, schema: dict) -> list[str]:
    """Every key path of ``config`` (nested keys, list items' keys) whose schema has no
    description; a map's entry names (``sources.<name>``) are documented by the map."""
    missing: list[str] = []

    def walk(value, nodes, path):
        children = _children(schema, nodes)
        if isinstance(value, dict):
            for key, sub in value.items():
                named = key not in children
                subnodes = children.get(NAME, []) if named else children[key]
                where = f"{path}.{NAME if named else key}".lstrip(".")
                if not named and not _description(subnodes):
                    missing.append(where)
                walk(sub, subnodes, where)
        elif isinstance(value, list):
            for item in value:
                walk(item, children.get(ITEM, []), path + ITEM)

    walk(config, [schema], "")
    return sorted(set(missing))


def _uses(nodes: list) -> list[str]:
    """The shared definitions whose keys ``nodes`` take (``allOf: [$ref]``)."""
    return sorted(
        {
            ref["$ref"].rsplit("/", 1)[1]
            for n in nodes
            for ref in n.get("allOf", [])
            if "$ref" in ref
        }
    )


def reference(schema: dict) -> str:
    """One line per documented key, grouped by top-level key, nested under its parent; the
    keys of a shared definition (``definitions``) once, at the end. No defaults: config.yaml
    shows them, one line per key."""
    out: list[str] = []
    plain: list[str] = []

    def walk(nodes, path, rows, parent="", depth=0):
        for key, subnodes in _children(schema, nodes, shared=False).items():
            where = f"{path}{key}" if key == ITEM else f"{path}.{key}".lstrip(".")
            if key != ITEM and (said := _description(subnodes)):
                for name in _uses(subnodes):
                    said += f" Its keys: [`{name}`](#{name})."
                shown = where[len(parent) :].removeprefix("[]").lstrip(".")
                rows.append(f"{'  ' * depth}- `{shown}`: {said}")
                walk(subnodes, where, rows, where, depth + 1)
            else:
                walk(subnodes, where, rows, parent, depth)

    def section(title, text, nodes):
        rows: list[str] = []
        walk(nodes, "", rows)
        if not rows:
            return plain.append(f"- `{title}`: {text}")
        out.extend([f"### {title}", "", text, "", *rows, ""])

    for key, nodes in _children(schema, [schema]).items():
        text = _description(nodes) or "(no description)"
        for name in _uses(nodes):
            text += f" Also the keys of [`{name}`](#{name}) (a study's default wins)."
        section(key, text, nodes)
    shared = {
        name: node for name, node in schema.get("definitions", {}).items() if node.get("properties")
    }
    for name, node in shared.items():
        users = ", ".join(
            f"`{k}`" for k, n in schema["properties"].items() if f"#/definitions/{name}" in str(n)
        )
        section(name, f"Keys shared by {users}.", [node])
    return "\n".join(["### Top-level keys", "", *plain, "", *out]).rstrip() + "\n"


def _load(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_key_of_config_yaml_is_described_by_the_schema():
    missing = undocumented_keys(_load(ROOT / "config.yaml"), _load(SCHEMA))
    assert not missing, "keys without a description in the schema:\n" + "\n".join(missing)


def test_every_key_of_the_overlays_is_described_by_the_schema():
    for path in [*sorted((ROOT / "config").glob("*.yaml")), ROOT / "tests/config/tiny.yaml"]:
        assert not undocumented_keys(_load(path), _load(SCHEMA)), path.name


def test_a_planted_key_without_a_description_is_found():
    schema = _load(SCHEMA)
    config = {"main": {"updates": 3, "setups": {"x": {"encoder": "e", "bias": True}}}}
    assert undocumented_keys(config, schema) == []
    del schema["definitions"]["optimisation"]["properties"]["updates"]["description"]
    assert undocumented_keys(config, schema) == ["main.updates"]
    config["sensitivity"] = {
        "blocks": [{"setups": ["pos"], "vectors": ["v"], "label_sets": ["all"]}]
    }
    del schema["properties"]["sensitivity"]["properties"]["blocks"]["items"]["properties"][
        "vectors"
    ]["description"]
    assert undocumented_keys(config, schema) == ["main.updates", "sensitivity.blocks[].vectors"]


def test_the_page_is_the_schemas_reference():
    page = PAGE.read_text(encoding="utf-8")
    fix = "docs/configuration.md is stale: .venv/bin/python tests/test_config_reference.py --write"
    assert generated_block(page, BEGIN, END) == reference(_load(SCHEMA)), fix
    # a hand edit of the generated part is told
    edited = page.replace("- `updates`:", "- `updates`: Planted.", 1)
    assert generated_block(edited, BEGIN, END) != reference(_load(SCHEMA))


def test_the_reference_follows_the_schema():
    schema = _load(SCHEMA)
    before = reference(schema)
    schema["properties"]["geometry"]["properties"]["batch_size"]["description"] = "Planted."
    assert "\n- `batch_size`: Planted.\n" in reference(schema) != before


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_config_reference.py --write")
    write_block(PAGE, reference(_load(SCHEMA)), BEGIN, END)
