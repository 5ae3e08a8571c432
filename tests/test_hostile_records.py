"""Hostile and damaged provenance records: no module a record names is imported, and a damaged
record or manifest is one mismatch naming the file, never a traceback (docs/reliability.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import test_audit
from test_audit import _bad

from isotropy.audit import audit, main
from isotropy.io import write_json
from isotropy.provenance import damaged_npy, module_source, record_path

# The audit tests' fixture: raw download → metric → table, each step with its record.
chain = test_audit.chain


# --- nothing a record names is imported -------------------------------------------------------
def test_module_source_never_imports(tmp_path, monkeypatch, capsys):
    """find_spec imported the parent package: `this.x` printed the Zen of Python, and a record
    naming `evilmod.x` ran ./evilmod/__init__.py in the audited folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "evilmod").mkdir()
    marker = tmp_path / "ran"
    (tmp_path / "evilmod" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    before = set(sys.modules)
    for name in ("this.x", "evilmod.x", "isotropy_evil.x", "isotropy.nope.x"):
        assert module_source(name) is None
    assert not marker.exists() and "Zen of Python" not in capsys.readouterr().out
    assert not {"this", "evilmod"} & (set(sys.modules) - before)
    assert module_source("isotropy.io") == Path(sys.modules["isotropy.io"].__file__).resolve()


def test_a_record_naming_a_foreign_module_is_a_mismatch_and_runs_nothing(chain, monkeypatch):
    monkeypatch.syspath_prepend(str(chain))
    (chain / "evilmod").mkdir()
    (chain / "evilmod" / "__init__.py").write_text("open('ran', 'w').close()\n")
    record = json.loads(record_path("results/table.csv").read_text())
    record["code"]["modules"]["evilmod.x"] = "0" * 64
    write_json(record_path("results/table.csv"), record)
    bad = _bad(audit(chain))
    assert bad["results/table.csv"] == ["code: module evilmod.x, which made it, no longer exists"]
    assert not (chain / "ran").exists()


# --- damaged records and manifests are one mismatch each --------------------------------------

RECORD, MANIFEST = "results/table.csv.provenance.json", "resources/raw/toy/manifest.json"
# A whole file (bytes), or keys laid over the one the chain wrote; what its one mismatch says.
DAMAGED = {
    "not JSON": (RECORD, b"{not json", "it is not JSON"),
    "a list": (RECORD, b"[1, 2]", "it is a JSON list, not an object"),
    "binary": (RECORD, b"\xff\xfe\x00", "it is not JSON"),
    "no sha256": (RECORD, {"outputs": {"results/table.csv": {}}}, "at outputs/results/table.csv"),
    "inputs a list": (RECORD, {"inputs": ["a"]}, "at inputs (['a'] is not of type 'object')"),
    "modules a list": (RECORD, {"code": {"modules": ["x"]}}, "schema at code/modules"),
    "code a list": (RECORD, {"code": ["step.py"]}, "does not fit its schema at code"),
    "manifest not JSON": (MANIFEST, b"{oops", "it is not JSON"),
    "manifest a list": (MANIFEST, b'["files"]', "it is a JSON list"),
    "no path": (MANIFEST, {"files": [{"sha256": "0" * 64}]}, "'path' is a required property"),
    "no raw sha256": (MANIFEST, {"files": [{"path": "values.txt"}]}, "at files/0 ('sha256'"),
    "files text": (MANIFEST, {"files": "values.txt"}, "at files ('values.txt' is not of type"),
    "outside": (MANIFEST, {"files": [{"path": "../../etc/passwd", "sha256": "0"}]}, "files/0/path"),
    "mirror_path a number": (MANIFEST, {"inputs": [{"mirror_path": 3}]}, "inputs/0/mirror_path"),
    "url a number": (MANIFEST, {"inputs": [{"url": 1}]}, "does not fit its schema at inputs/0/url"),
    "huge": (RECORD, b"{}" + b" " * 2**24, "past the cap of 16,777,216"),  # never read
}


@pytest.mark.parametrize("kind", DAMAGED)
def test_a_damaged_record_or_manifest_is_one_mismatch_naming_it(chain, kind, capsys):
    """A record or manifest is a file anyone can edit: its shape is checked before it is used,
    and damage is one mismatch naming the file and what to do, never a traceback."""
    file, damage, said = DAMAGED[kind]
    if isinstance(damage, dict):
        damage = json.dumps({**json.loads(Path(file).read_text()), **damage}).encode()
    Path(file).write_bytes(damage)
    named = "results/table.csv" if file == RECORD else MANIFEST
    (reason,) = _bad(audit(chain))[named]
    assert said in reason and "\n" not in reason
    what = "its provenance record table.csv.provenance.json" if file == RECORD else "download"
    assert what in reason and ("re-make it" if file == RECORD else "re-fetch") in reason
    assert main(["-d", str(chain)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"MISMATCH {named}: " in err


def test_a_damaged_record_beside_an_npy_input_is_not_a_crash(tmp_path):
    vectors = tmp_path / "v.npy"
    np.save(vectors, np.zeros((2, 3), dtype=np.float32))
    for text in ("[1]", '{"outputs": [1]}', '{"outputs": {"x": 1}}', "{broken"):
        record_path(vectors).write_text(text)
        assert damaged_npy(vectors) is None
