"""A generated page made by one function, its parts: lines of text and the tables it shows, in
order; its text and its :attr:`~isotropy.committed.record.Page.tables` both come from them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed.record import Page, whole_page
from isotropy.io import markdown_table

Parts = Callable[[Any], list[Any]]


def text(parts: Parts, whole: tuple[str, str] | None = None) -> Callable[[Any], str]:
    """The parts joined by lines, each table in Markdown; ``whole``: (run, title) of a page the
    code writes whole (:func:`~isotropy.committed.record.whole_page`)."""

    def render(root: Any) -> str:
        lines = [markdown_table(p) if isinstance(p, pd.DataFrame) else p for p in parts(root)]
        return whole_page(*whole, lines) if whole else "\n".join(lines)

    return render


def page(path: Path, parts: Parts, block: tuple[str, str] | None = None, whole=None) -> Page:
    def tables(root: Path) -> list[pd.DataFrame]:
        return [part for part in parts(root) if isinstance(part, pd.DataFrame)]

    return Page(path, text(parts, whole), block, tables)
