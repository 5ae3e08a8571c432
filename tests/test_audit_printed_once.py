"""`make audit` shows its table once on the terminal (issue 83: it was printed and logged, and
the log's records go to the terminal too)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]


def test_the_audit_table_is_shown_once(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)  # an empty folder: the table is its header and its tally
    job = SimpleNamespace(
        log=[str(tmp_path / "audit.log")],
        config={},
        params=SimpleNamespace(table=str(tmp_path / "audit.tsv")),
        threads=1,
        output=[],
    )
    script = runpy.run_path(str(ROOT / "scripts/audit_results.py"))
    script["main"](job)
    shown = capfd.readouterr()
    terminal = shown.out + shown.err
    assert terminal.count("FILE") == 1 and terminal.count("files audited") == 1, terminal
    assert (tmp_path / "audit.log").read_text().count("files audited") == 1
