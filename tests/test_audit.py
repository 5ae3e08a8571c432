"""The audit: tampering with a metric file, a raw download, a parameter or the code is caught.

Synthetic records written with build_record; the real workflow's run, audited by `make audit`:
tests/test_audit_honest_folder.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from isotropy.audit import FAIL, OK, WARN, Finding, audit, failures, format_table, main, write_tsv
from isotropy.io import write_json
from isotropy.provenance import build_record, record_path

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------------
# Synthetic records


def _manifest(raw_dir: Path) -> None:
    raw_dir.mkdir(parents=True, exist_ok=True)
    (raw_dir / "values.txt").write_text("1\n2\n3\n")
    digest = hashlib.sha256((raw_dir / "values.txt").read_bytes()).hexdigest()
    (raw_dir / "manifest.json").write_text(
        json.dumps({"origin": "test", "files": [{"path": "values.txt", "sha256": digest}]})
    )


def _step(rule: str, inputs: list[str], output: str, text: str, script: str | None = None) -> None:
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(text)
    write_json(
        record_path(output),
        build_record(
            rule=rule, inputs=inputs, outputs=[output], script=script, params={"factor": 2}
        ),
    )


def _toy_steps() -> None:
    """The toy chain's metric and table, each with its provenance record, from its raw manifest."""
    raw, metric = "resources/raw/toy/manifest.json", "results/toy/metric.csv"
    _step("metric", [raw], metric, "value\n2\n4\n6\n", script="step.py")
    _step("table", [metric], "results/table.csv", "total\n12\n")


@pytest.fixture
def chain(tmp_path, monkeypatch):
    """raw download → metric → table, each step with its provenance record."""
    monkeypatch.chdir(tmp_path)
    _manifest(Path("resources/raw/toy"))
    Path("step.py").write_text("# the step's script\n")
    _toy_steps()
    return tmp_path


def _bad(findings) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for finding in failures(findings):
        out.setdefault(finding.file, []).append(f"{finding.check}: {finding.reason}")
    return out


def test_the_console_script_is_the_audits_main():
    """pyproject's isotropy-audit named isotropy.audit:main, a re-export the package dropped."""
    import importlib
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    target = tomllib.loads(pyproject.read_text())["project"]["scripts"]["isotropy-audit"]
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name) is main


def test_clean_chain_passes(chain):
    findings = audit(chain)  # the command line's pass: test_cli_takes_several_config_files_...
    assert not failures(findings)
    ok = {f.file for f in findings if f.status == OK}
    assert ok == {"results/toy/metric.csv", "results/table.csv", "resources/raw/toy/manifest.json"}


def test_tampered_metric_file_is_caught_and_tabulated(chain, capsys, tmp_path):
    with open("results/toy/metric.csv", "a") as handle:
        handle.write("99\n")
    findings = audit(chain)
    bad = _bad(findings)
    checksums = [r for r in bad["results/toy/metric.csv"] if r.startswith("checksum:")]
    assert len(checksums) == 1 and checksums[0].startswith("checksum: modified after it was made")
    # The table made from it is flagged too: its input changed and is newer.
    changed = "input: input results/toy/metric.csv (sha256 recorded"
    made = bad["results/table.csv"]
    tail = "changed since this file was made"
    assert any(r.startswith(changed) and r.endswith(tail) for r in made)
    assert any(r.startswith("stale: input results/toy/metric.csv is newer") for r in made)
    assert main(["-d", str(chain)]) == 1
    assert "MISMATCH results/toy/metric.csv: modified after it was made" in capsys.readouterr().err
    lines = format_table(findings).splitlines()
    assert lines[0].split() == ["FILE", "STATUS", "CHECK", "REASON"]
    assert lines[1].split()[1] == FAIL  # mismatches first
    assert lines[-1] == "3 files audited: 1 ok, 0 with warnings, 2 with mismatches"
    # by the csv module: a name with a tab or a line break is quoted, never a new row
    findings.append(Finding("a\tb\nc", FAIL, "checksum", "x"))
    write_tsv(findings, tmp_path / "audit.tsv")
    import pandas as pd

    table = pd.read_csv(tmp_path / "audit.tsv", sep="\t")
    assert list(table.columns) == ["file", "status", "check", "reason"]
    assert table["file"].tolist() == [f.file for f in findings]


@pytest.mark.parametrize("said", ["differs from its download manifest", "missing (listed in"])
def test_tampered_or_deleted_raw_download_is_caught(chain, said):
    raw = "resources/raw/toy/values.txt"
    if said.startswith("missing"):
        os.remove(raw)
    else:
        with open(raw, "a") as handle:
            handle.write("7\n")
    bad = _bad(audit(chain))
    assert list(bad) == [raw] and len(bad[raw]) == 1
    assert bad[raw][0].startswith(f"raw: raw file {said} resources/raw/toy/manifest.json")


def _mirror_manifest(chain: Path, row: str | None, monkeypatch) -> Path:
    """A mirror with values.txt and a MANIFEST.tsv holding ``row`` (None: no row), the user's
    configured mirror (the audit never believes the one a manifest names), and the toy download
    manifest re-written as fetched from it, pinned by MANIFEST.tsv."""
    mirror = chain.parent / f"{chain.name}-mirror"
    mirror.mkdir()
    monkeypatch.setenv("ISOTROPY_MIRROR", str(mirror))
    (mirror / "values.txt").write_text("1\n2\n3\n")
    (mirror / "MANIFEST.tsv").write_text("path\tbytes\tsha256\n" + (row + "\n" if row else ""))
    manifest = json.loads(Path("resources/raw/toy/manifest.json").read_text())
    digest = manifest["files"][0]["sha256"]
    entry = {"mirror_path": "values.txt", "sha256": digest, "pinned": True}
    entry.update(pinned_by=["MANIFEST.tsv"], trust="the mirror's MANIFEST.tsv")
    manifest.update(source="toy", mirror=str(mirror), inputs=[entry])
    Path("resources/raw/toy/manifest.json").write_text(json.dumps(manifest))
    # The steps after it, made again from this manifest.
    _toy_steps()
    return mirror


VALUES_SHA256 = hashlib.sha256(b"1\n2\n3\n").hexdigest()
OTHER_SHA256 = hashlib.sha256(b"1\n2\n4\n").hexdigest()


@pytest.mark.parametrize(
    "row, said",
    [  # the user's MANIFEST.tsv row of values.txt (None: none), and what the audit says
        (f"values.txt\t6\t{VALUES_SHA256}", {OK: "the mirror's MANIFEST.tsv: values.txt"}),
        (f"values.txt\t6\t{OTHER_SHA256}", {FAIL: f"but MANIFEST.tsv pins {OTHER_SHA256[:12]}…"}),
        # the manifest's own claim of a pin is never what the audit says
        (None, {WARN: "mirror file values.txt is pinned by nothing", OK: "unverified: values.txt"}),
        ("values.txt\t6", {FAIL: "MANIFEST.tsv line 2: row 'values.txt' needs a path"}),  # cut
    ],
)
def test_raw_inputs_are_checked_by_the_users_pins_not_the_record(chain, monkeypatch, row, said):
    _mirror_manifest(chain, row, monkeypatch)
    findings = [f for f in audit(chain) if f.file == "resources/raw/toy/manifest.json"]
    assert {f.status for f in findings} == set(said), findings
    for finding in findings:
        assert said[finding.status] in finding.reason


def test_pins_come_from_the_users_mirror_never_the_folders(chain, monkeypatch):
    """A mirror inside the audited folder is never read, even configured; with no mirror
    configured, a download a mirror pinned is a mismatch, never a warning."""
    mirror = _mirror_manifest(chain, f"values.txt\t6\t{VALUES_SHA256}", monkeypatch)
    inside = shutil.move(mirror, chain / "mirror")
    monkeypatch.delenv("ISOTROPY_MIRROR")
    for configured in (False, True):
        if configured:
            monkeypatch.setenv("ISOTROPY_MIRROR", str(inside))
        reasons = [f.reason for f in audit(chain) if f.status == FAIL]
        assert any("no mirror is configured" in r for r in reasons), reasons
    assert any("the configured mirror lies inside the audited folder" in r for r in reasons)


def test_changed_script_and_module_are_caught(chain):
    with open("step.py", "a") as handle:
        handle.write("# edited\n")
    record = json.loads(record_path("results/table.csv").read_text())
    record["code"]["modules"]["isotropy.io"] = "0" * 64  # another version of isotropy.io
    record_path("results/table.csv").write_text(json.dumps(record))
    bad = _bad(audit(chain))
    assert "code: its script step.py changed since it was made" in bad["results/toy/metric.csv"]
    assert "code: module isotropy.io changed since it was made" in bad["results/table.csv"]


def test_input_newer_than_output(chain):
    later = os.stat("results/table.csv").st_mtime + 60
    # Re-made with identical content: a warning, since the table is what that content gives.
    os.utime("results/toy/metric.csv", (later, later))
    findings = audit(chain)
    said = "input results/toy/metric.csv is newer than this file but identical to what it was"
    assert not failures(findings)
    assert [f.reason for f in findings if f.status == WARN] == [f"{said} made from"]


def test_results_without_record_and_missing_inputs(chain):
    Path("results/orphan.csv").write_text("a\n")
    os.remove("results/toy/metric.csv")
    bad = _bad(audit(chain))
    assert "record: no provenance record: its origin is unknown" in bad["results/orphan.csv"]
    assert "input: input results/toy/metric.csv is missing" in bad["results/table.csv"]
    assert "missing: file does not exist" in bad["results/toy/metric.csv"]


def test_cli_takes_several_config_files_like_snakemake(chain, capsys):
    """`--configfile a b c` lays the files over each other, none taken for a file to audit."""
    configs = [chain / "configs" / name for name in ("config.yaml", "overlay.yaml", "more.yaml")]
    configs[0].parent.mkdir()
    for config, text in zip(configs, ("factor: 2\n", "factor: 2\n", "unused: 1\n")):
        config.write_text(text)
    args = ["-d", str(chain), "--configfile", *map(str, configs)]
    assert main(args) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "config.yaml" not in out and "overlay.yaml" not in out  # never audited as files
    assert "3 files audited: 3 ok" in out
    assert main(["-d", str(configs[0].parent)]) == 2  # no results there: never "0 mismatches"
    assert "no results in" in capsys.readouterr().err
    with open("results/table.csv", "a") as handle:
        handle.write("1\n")
    assert main(args[:-1]) == 1
    assert "MISMATCH results/table.csv: modified after it was made" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["-d", str(chain), str(ROOT / "config.yaml")])
    assert stopped.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
