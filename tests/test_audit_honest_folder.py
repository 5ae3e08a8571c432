"""An honest results folder audits clean wherever it is audited: copied untouched into a fresh
clone of the same commit, by `make audit` of the run it holds; a leaf replaced with its own record
is named by its twin's record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tiny_workflow import make_workdir, run_make

from isotropy.audit import FAIL, OK, walk
from isotropy.io import write_json
from isotropy.provenance import build_record, record_path

ROOT = Path(__file__).resolve().parents[1]


# --- make audit audits the run the folder holds ---------------------------------------------


def _audit_call(tmp_path: Path, last_run: str, *make_args: str) -> subprocess.CompletedProcess:
    """`make audit` in a folder whose stand-in snakemake notes its arguments."""
    workdir = make_workdir(tmp_path, last_run)
    snakemake = workdir / ".venv" / "bin" / "snakemake"
    snakemake.write_text('#!/bin/sh\necho "snakemake $*" >> calls.txt\n')
    (workdir / "logs" / "effective-config").mkdir()
    (workdir / "logs" / "effective-config" / "preview_study.yaml").write_text("studies: []\n")
    return run_make(workdir, "audit", *make_args)


def test_make_audit_audits_the_last_runs_target_with_its_configuration(tmp_path):
    """It audited target `all` with config.yaml: a preview folder failed with "0 of the 127
    result files ... audited"."""
    result = _audit_call(tmp_path, "TARGET=preview_study\nCONFIG_FILES=config.yaml\n")
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls == [
        "snakemake --cores 1 audit --configfile logs/effective-config/preview_study.yaml"
    ]


# --- code by content, paths relative to the workflow's root ---------------------------------


def _recorded_step(folder: Path, outputs: dict[str, str], script: Path) -> None:
    """Outputs written under ``folder`` with the record a step writes beside each of them."""
    for name, text in outputs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    cwd = Path.cwd()
    os.chdir(folder)  # records name files as Snakemake does: relative to the working directory
    try:
        root = script.parents[1]
        record = build_record(
            rule="plot", inputs=[], outputs=list(outputs), script=str(script), workflow_root=root
        )
    finally:
        os.chdir(cwd)
    for name in outputs:
        write_json(record_path(folder / name), record)


def _checkout(path: Path, script_text: str) -> Path:
    (path / "scripts").mkdir(parents=True)
    (path / "scripts" / "plot.py").write_text(script_text)
    return path / "scripts" / "plot.py"


def test_a_record_names_its_script_relative_to_the_workflow_and_is_audited_in_another(tmp_path):
    """Records held the maker's absolute path of the script: audited in another clone they
    pointed at the maker's checkout (or at nothing)."""
    maker = _checkout(tmp_path / "maker", "print('plot')\n")
    folder = tmp_path / "work"
    _recorded_step(folder, {"results/figure.png": "png"}, maker)
    record = (folder / "results/figure.png.provenance.json").read_text()
    assert '"script": "scripts/plot.py"' in record and str(tmp_path) not in record
    shutil.rmtree(tmp_path / "maker")  # the maker's checkout is gone
    _checkout(tmp_path / "clone", "print('plot')\n")
    findings = walk(folder, workflow_root=tmp_path / "clone")
    assert [(f.file, f.status) for f in findings if f.check != "record"] == [
        ("results/figure.png", OK)
    ]
    _checkout(tmp_path / "edited", "print('another plot')\n")
    findings = walk(folder, workflow_root=tmp_path / "edited")
    bad = {(f.file, f.reason) for f in findings if f.status == FAIL}
    assert bad == {("results/figure.png", "its script plot.py changed since it was made")}


# --- every leaf recorded ----------------------------------------------------------------------


def test_a_leaf_replaced_with_its_record_and_mtime_is_named_by_its_twins_record(tmp_path):
    """No job reads a leaf, so Snakemake holds no checksum of it; edited with its record left
    alone, it is named once (its own record's mismatch)."""
    script = _checkout(tmp_path / "checkout", "print('plot')\n")
    folder = tmp_path / "work"
    figure = {"results/figure.pdf": "pdf", "results/figure.png": "x" * 238_000}
    _recorded_step(folder, figure, script)
    png = folder / "results/figure.png"
    made = png.stat()
    findings = walk(folder, workflow_root=tmp_path / "checkout")
    assert not [f for f in findings if f.status == FAIL]
    forged = tmp_path / "forged"  # the forger's own run: the figure and a record that matches
    _recorded_step(forged, {"results/figure.png": "y" * 238_000}, script)
    shutil.copy2(forged / "results/figure.png", png)
    shutil.copy2(record_path(forged / "results/figure.png"), record_path(png))
    os.utime(png, ns=(made.st_atime_ns, made.st_mtime_ns))
    findings = walk(folder, workflow_root=tmp_path / "checkout")
    bad = [(f.file, f.check) for f in findings if f.status == FAIL]
    assert bad == [("results/figure.png", "checksum")]
    reason = next(f.reason for f in findings if f.status == FAIL)
    assert "the record of results/figure.pdf, made by the same job" in reason
    assert ("results/figure.png", OK) not in [(f.file, f.status) for f in findings]
    _recorded_step(folder, figure, script)
    png.write_text("edited\n")
    findings = walk(folder, workflow_root=tmp_path / "checkout")
    bad = [(f.file, f.check, f.reason[:26]) for f in findings if f.status == FAIL]
    assert bad == [("results/figure.png", "checksum", "modified after it was made")]


# --- the honest folder, end to end ------------------------------------------------------------


def _fresh_clone_with(workdir: Path, destination: Path) -> Path:
    """A fresh clone of this checkout's HEAD with the run's folder copied in untouched (times
    kept), then every tracked file touched (a clone made later than the results), and a
    stand-in .venv that runs this interpreter (make's install step is up to date)."""
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(destination)], check=True)
    shutil.copytree(workdir, destination, symlinks=True, dirs_exist_ok=True)
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=destination, capture_output=True, check=True
    ).stdout.split(b"\0")
    now = time.time()
    for name in filter(None, tracked):
        os.utime(destination / os.fsdecode(name), (now, now))
    bin_dir = destination / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text("")
    for name, command in (("python", ""), ("snakemake", " -m snakemake")):
        (bin_dir / name).write_text(f'#!/bin/sh\nexec "{sys.executable}"{command} "$@"\n')
        (bin_dir / name).chmod(0o755)
    (destination / ".venv" / ".installed").write_text("")
    return destination


def _make_audit(clone: Path, mirror: Path) -> subprocess.CompletedProcess:
    import tiny_workflow

    env = tiny_workflow.snakemake_environment(mirror)
    env["PYTHONPATH"] = str(clone / "src")  # the clone's code, nothing of this checkout's
    return subprocess.run(
        ["make", "audit"], cwd=clone, capture_output=True, text=True, env=env, timeout=1800
    )


@pytest.mark.slow
def test_an_untouched_folder_audits_clean_in_a_fresh_clone(tiny_run, tmp_path):
    """Another absolute path, every script newer than every result: still clean."""
    workdir, _, mirror = tiny_run
    clone = _fresh_clone_with(workdir, tmp_path / "clone")
    (clone / "logs" / "last_run.txt").write_text("TARGET=all\n")
    result = _make_audit(clone, mirror)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    assert "make audit: target all with logs/effective-config/all.yaml" in output
    table = (clone / "results" / "audit.tsv").read_text()
    assert "\tFAIL\t" not in table
    for name in ("results/main/figure2.png", "results/paper_comparison.csv", "results/claims.csv"):
        assert f"{name}\tok\tall\t" in table, name
    rows = table.splitlines()  # the walk reached the raw downloads
    assert [r for r in rows if r.startswith("resources/raw/") and "/manifest.json\t" in r], rows
    # clean with its script compared: the record names the script the step ran, with its sha256
    table1 = clone / "results" / "main" / "table1.csv"
    code = json.loads(record_path(table1).read_text())["code"]
    assert code["script"].startswith("scripts/") and code["script_sha256"], code

    table1.write_text(table1.read_text() + "\n")
    result = _make_audit(clone, mirror)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "MISMATCH results/main/table1.csv [checksum]: modified after it was made" in output
