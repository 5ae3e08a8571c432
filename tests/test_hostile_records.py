"""Hostile and damaged provenance records (issue 34, cases 3, 4, 5).

The audit never imports a module a record names, believes a record only as far as the files
and its twins' records confirm it (nothing of the folder's .snakemake/ is believed), and turns a
damaged record or manifest into one mismatch that names the file, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import test_audit
from test_audit import _bad

from isotropy.audit import audit, main
from isotropy.audit.records import FAIL
from isotropy.io import write_json
from isotropy.provenance import build_record, module_source, record_path

# The audit tests' fixtures: raw download → metric → table, each step with its record (chain),
# and their toy workflow run once by Snakemake (toy).
chain, toy = test_audit.chain, test_audit.toy


# --- case 3: nothing a record names is imported ------------------------------------------------


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


# --- case 5: damaged records and manifests are one mismatch each -------------------------------

DAMAGED = {
    "not JSON": "{not json",
    "a list": "[1, 2]",
    "no sha256": json.dumps({"outputs": {"results/table.csv": {}}}),
    "inputs a list": json.dumps({"inputs": ["a"], "outputs": {}}),
    "modules a list": json.dumps({"outputs": {}, "code": {"modules": ["x"]}}),
    "binary": b"\xff\xfe\x00",
}


@pytest.mark.parametrize("kind", DAMAGED)
def test_a_damaged_record_is_one_mismatch_naming_it(chain, kind, capsys):
    text = DAMAGED[kind]
    sidecar = record_path("results/table.csv")
    sidecar.write_bytes(text if isinstance(text, bytes) else text.encode())
    findings = [f for f in audit(chain) if f.file == "results/table.csv"]
    assert [f.status for f in findings] == [FAIL]
    assert "table.csv.provenance.json" in findings[0].reason
    assert "re-make it" in findings[0].reason and "\n" not in findings[0].reason
    assert main(["-d", str(chain)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "MISMATCH results/table.csv: its provenance record" in err


@pytest.mark.parametrize(
    "manifest",
    [
        "{oops",
        json.dumps({"files": [{"sha256": "0" * 64}]}),
        json.dumps({"files": [{"path": "values.txt"}]}),
        json.dumps({"files": "values.txt"}),
        json.dumps(["files"]),
        json.dumps({"files": [{"path": "../../../etc/passwd", "sha256": "0" * 64}]}),
        json.dumps({"files": [], "inputs": [{"mirror_path": 3}], "mirror": "/m"}),
    ],
)
def test_a_damaged_download_manifest_is_one_mismatch(chain, manifest, capsys):
    Path("resources/raw/toy/manifest.json").write_text(manifest)
    bad = _bad(audit(chain))
    assert len(bad["resources/raw/toy/manifest.json"]) == 1
    assert "raw: download manifest" in bad["resources/raw/toy/manifest.json"][0]
    assert main(["-d", str(chain)]) == 1
    assert "Traceback" not in capsys.readouterr().err


# --- case 4: a forged record is named through what it names ---------------------------------


def _forge(workdir: Path, output: str, text: str, inputs: list[str]) -> None:
    """Rewrite ``output`` and its record to match each other (the record names ``inputs``)."""
    (workdir / output).write_text(text)
    record = json.loads(record_path(workdir / output).read_text())
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        forged = build_record(rule=record["rule"], inputs=inputs, outputs=[output])
    finally:
        os.chdir(cwd)
    write_json(record_path(workdir / output), {**record, **forged, "code": record["code"]})


@pytest.mark.slow
def test_a_record_naming_an_input_outside_the_folder_is_caught(toy, tmp_path):
    """Inputs rewritten to a file outside the folder gave exit 0 with one warning: the intake
    refuses the name (Snakemake's input list is no longer believed)."""
    work = shutil.copytree(toy[1], tmp_path / "work", symlinks=True)
    table = work / "results/table.csv"
    stat = table.stat()
    _forge(work, "results/table.csv", table.read_text(), ["/etc/hostname"])
    os.utime(table, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the forger keeps the time too
    bad = _bad(audit(work, workflow_root=toy[0]))
    assert bad["/etc/hostname"][0].startswith("intake: names a path outside the folder"), bad


@pytest.mark.slow
def test_an_edited_result_is_named_once(toy, tmp_path):
    """Its record's sha256 disagrees: one checksum finding."""
    work = shutil.copytree(toy[1], tmp_path / "work", symlinks=True)
    with open(work / "results/table.csv", "a") as handle:
        handle.write("1\n")
    assert _bad(audit(work, workflow_root=toy[0]))["results/table.csv"] == [
        next(
            r
            for r in _bad(audit(work, workflow_root=toy[0]))["results/table.csv"]
            if r.startswith("checksum:")
        )
    ]


def test_a_damaged_record_beside_an_npy_input_is_not_a_crash(tmp_path):
    from isotropy.provenance import damaged_npy

    vectors = tmp_path / "v.npy"
    import numpy as np

    np.save(vectors, np.zeros((2, 3), dtype=np.float32))
    for text in ("[1]", '{"outputs": [1]}', '{"outputs": {"x": 1}}', "{broken"):
        record_path(vectors).write_text(text)
        assert damaged_npy(vectors) is None
