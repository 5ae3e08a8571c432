"""The README's module table is the newcomer's map of the package: it must name every module."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_module_table_matches_the_package():
    package = ROOT / "src" / "isotropy"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in package.glob("*/__init__.py")}
    rows = [
        line
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("| `isotropy.")
    ]
    named = {name for row in rows for name in re.findall(r"`isotropy\.(\w+)`", row.split("|")[1])}
    assert named == modules, (
        f"README module table: missing {sorted(modules - named)}, not in the package {sorted(named - modules)}"
    )
