"""The audit: tampering with a metric file, a raw download, a parameter or the code is caught.

Three levels: synthetic records written with build_record (fast); a three-rule toy Snakemake
workflow (the results its target declares); and the tiny end-to-end run of the real workflow
(rule ``audit`` and the CLI).
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from tiny_workflow import run_captured, run_with_mirror, snakemake, snakemake_environment

from isotropy.audit import audit, failures, format_table, main, records, write_tsv
from isotropy.audit.records import FAIL, OK, WARN, Finding, walk
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
    _step(
        "metric",
        ["resources/raw/toy/manifest.json"],
        "results/toy/metric.csv",
        "value\n2\n4\n6\n",
        script="step.py",
    )
    _step("table", ["results/toy/metric.csv"], "results/table.csv", "total\n12\n")


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


def test_clean_chain_passes(chain, capsys):
    findings = audit(chain)
    assert not failures(findings)
    assert {f.file for f in findings if f.status == OK} == {
        "results/toy/metric.csv",
        "results/table.csv",
        "resources/raw/toy/manifest.json",
    }
    assert main(["-d", str(chain)]) == 0
    assert "3 files audited: 3 ok" in capsys.readouterr().out


def test_tampered_metric_file_is_caught(chain, capsys):
    with open("results/toy/metric.csv", "a") as handle:
        handle.write("99\n")
    bad = _bad(audit(chain))
    assert any(
        r.startswith("checksum: modified after it was made") for r in bad["results/toy/metric.csv"]
    )
    # The table made from it is flagged too: its input changed and is newer.
    assert any(
        r.startswith("input: input results/toy/metric.csv (sha256 recorded")
        and r.endswith("changed since this file was made")
        for r in bad["results/table.csv"]
    )
    assert any(
        r.startswith("stale: input results/toy/metric.csv is newer")
        for r in bad["results/table.csv"]
    )
    assert main(["-d", str(chain)]) == 1
    assert "MISMATCH results/toy/metric.csv: modified after it was made" in capsys.readouterr().err


def test_tampered_metric_file_with_a_forged_record_is_caught(chain):
    """Editing a result and re-writing its own record to match still fails: the record of the
    step that read it holds the original's sha256."""
    record = json.loads(record_path("results/toy/metric.csv").read_text())
    Path("results/toy/metric.csv").write_text("value\n2\n4\n7\n")
    forged = build_record(
        rule="metric",
        inputs=["resources/raw/toy/manifest.json"],
        outputs=["results/toy/metric.csv"],
        script="step.py",
        params={"factor": 2},
    )
    assert forged["outputs"] != record["outputs"]  # the forged record matches the edited file ...
    write_json(record_path("results/toy/metric.csv"), forged)
    bad = _bad(audit(chain))
    assert "results/toy/metric.csv" not in bad  # ... so the file alone looks clean,
    assert any(
        r.startswith("input: input results/toy/metric.csv (sha256 recorded")
        for r in bad["results/table.csv"]
    )


@pytest.mark.parametrize(
    "file, change, where",
    [
        ("results/table.csv.provenance.json", {"outputs": {"results/table.csv": {}}}, "outputs"),
        ("results/table.csv.provenance.json", {"code": ["step.py"]}, "code"),
        ("resources/raw/toy/manifest.json", {"files": [{"path": "../x", "sha256": "0"}]}, "files"),
        ("resources/raw/toy/manifest.json", {"inputs": [{"url": 1}]}, "inputs/0/url"),
    ],
)
def test_a_damaged_record_or_manifest_is_one_mismatch_naming_it(chain, file, change, where):
    """A record or manifest is a file anyone can edit: its shape is checked before it is used."""
    record = Path(file)
    record.write_text(json.dumps({**json.loads(record.read_text()), **change}))
    bad = _bad(audit(chain))
    reasons = bad["results/table.csv" if "results" in file else "resources/raw/toy/manifest.json"]
    assert any(f"does not fit its schema at {where}" in r for r in reasons), bad


def test_tampered_raw_download_is_caught(chain):
    with open("resources/raw/toy/values.txt", "a") as handle:
        handle.write("7\n")
    bad = _bad(audit(chain))
    assert list(bad) == ["resources/raw/toy/values.txt"]
    assert (
        "differs from its download manifest resources/raw/toy/manifest.json"
        in bad["resources/raw/toy/values.txt"][0]
    )


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
    manifest.update(
        source="toy",
        mirror=str(mirror),
        inputs=[
            {
                "mirror_path": "values.txt",
                "sha256": digest,
                "pinned": True,
                "pinned_by": ["MANIFEST.tsv"],
                "trust": "the mirror's MANIFEST.tsv",
            }
        ],
    )
    Path("resources/raw/toy/manifest.json").write_text(json.dumps(manifest))
    # The steps after it, made again from this manifest.
    _toy_steps()
    return mirror


def test_raw_inputs_are_checked_against_the_pins_not_the_record(chain, monkeypatch):
    digest = hashlib.sha256(b"1\n2\n3\n").hexdigest()
    _mirror_manifest(chain, f"values.txt\t6\t{digest}", monkeypatch)
    findings = audit(chain)
    assert not failures(findings)  # the record and the pin agree
    (ok,) = [f for f in findings if f.file == "resources/raw/toy/manifest.json"]
    assert ok.status == OK and "the mirror's MANIFEST.tsv: values.txt" in ok.reason


def test_raw_input_whose_pin_differs_is_a_mismatch(chain, monkeypatch):
    other = hashlib.sha256(b"1\n2\n4\n").hexdigest()
    _mirror_manifest(chain, f"values.txt\t6\t{other}", monkeypatch)
    bad = _bad(audit(chain))["resources/raw/toy/manifest.json"]
    assert any(
        r.startswith("raw: mirror file values.txt was fetched with sha256")
        and f"MANIFEST.tsv pins {other[:12]}" in r
        for r in bad
    )


def test_a_manifests_claim_of_a_pin_is_not_what_the_audit_says(chain, monkeypatch):
    """The manifest says MANIFEST.tsv pins it; the user's mirror has no row: the audit's summary
    comes from the pins alone, so the file is pinned by nothing (a warning), never "pinned"."""
    _mirror_manifest(chain, None, monkeypatch)
    findings = [f for f in audit(chain) if f.file == "resources/raw/toy/manifest.json"]
    said = {f.status: f.reason for f in findings}
    assert "mirror file values.txt is pinned by nothing" in said[WARN]
    assert "unverified: values.txt" in said[OK] and "MANIFEST.tsv" not in said[OK]


def test_raw_input_pinned_by_a_row_cut_short_is_a_mismatch(chain, monkeypatch):
    _mirror_manifest(chain, "values.txt\t6", monkeypatch)  # the row cut short before its sha256
    bad = _bad(audit(chain))["resources/raw/toy/manifest.json"]
    assert any("its pins cannot be read" in r and "MANIFEST.tsv line 2" in r for r in bad)


def test_deleted_raw_download_is_caught(chain):
    os.remove("resources/raw/toy/values.txt")
    assert (
        "raw: raw file missing (listed in resources/raw/toy/manifest.json)"
        in _bad(audit(chain))["resources/raw/toy/values.txt"]
    )


def test_changed_script_and_module_are_caught(chain):
    with open("step.py", "a") as handle:
        handle.write("# edited\n")
    record = json.loads(record_path("results/table.csv").read_text())
    record["code"]["modules"]["isotropy.io"] = (
        "0" * 64
    )  # as if made by another version of isotropy.io
    record["code"]["modules"]["isotropy.gone"] = "0" * 64
    record_path("results/table.csv").write_text(json.dumps(record))
    bad = _bad(audit(chain))
    assert "code: its script step.py changed since it was made" in bad["results/toy/metric.csv"]
    assert "code: module isotropy.io changed since it was made" in bad["results/table.csv"]
    assert "code: module isotropy.gone, which made it, no longer exists" in bad["results/table.csv"]


def test_input_newer_than_output(chain):
    later = os.stat("results/table.csv").st_mtime + 60
    # Re-made with identical content: a warning, since the table is what that content gives.
    os.utime("results/toy/metric.csv", (later, later))
    findings = audit(chain)
    assert not failures(findings)
    assert (
        Finding(
            "results/table.csv",
            WARN,
            "stale",
            "input results/toy/metric.csv is newer than this file but identical to what it was "
            "made from",
        )
        in findings
    )


def test_results_without_record_and_missing_inputs(chain):
    Path("results/orphan.csv").write_text("a\n")
    os.remove("results/toy/metric.csv")
    bad = _bad(audit(chain))
    assert "record: no provenance record: its origin is unknown" in bad["results/orphan.csv"]
    assert "input: input results/toy/metric.csv is missing" in bad["results/table.csv"]
    assert "missing: file does not exist" in bad["results/toy/metric.csv"]


def test_table_and_tsv(chain, tmp_path):
    with open("results/toy/metric.csv", "a") as handle:
        handle.write("99\n")
    findings = audit(chain)
    text = format_table(findings)
    lines = text.splitlines()
    assert lines[0].split() == ["FILE", "STATUS", "CHECK", "REASON"]
    assert lines[1].split()[1] == FAIL  # mismatches first
    assert lines[-1] == "3 files audited: 1 ok, 0 with warnings, 2 with mismatches"
    write_tsv(findings, tmp_path / "audit.tsv")
    import pandas as pd

    table = pd.read_csv(tmp_path / "audit.tsv", sep="\t")
    assert list(table.columns) == ["file", "status", "check", "reason"] and len(table) == len(
        findings
    )


def test_the_audit_rules_table_is_shown_once(tmp_path, monkeypatch, capfd):
    """Issue 83: `make audit` printed its table and logged it, and the log's records go to the
    terminal too."""
    monkeypatch.chdir(tmp_path)  # an empty folder: the table is its header and its tally
    table = SimpleNamespace(table=str(tmp_path / "audit.tsv"))
    log = [str(tmp_path / "audit.log")]
    job = SimpleNamespace(log=log, config={}, params=table, threads=1, output=[])
    runpy.run_path(str(ROOT / "scripts/audit_results.py"))["main"](job)
    shown = capfd.readouterr()
    terminal = shown.out + shown.err
    assert terminal.count("FILE") == 1 and terminal.count("files audited") == 1, terminal
    assert (tmp_path / "audit.log").read_text().count("files audited") == 1


# ---------------------------------------------------------------------------------------------
# A toy Snakemake workflow: the results its target declares, audited against its scripts

TOY_SNAKEFILE = """
configfile: "config.yaml"

rule all:
    input: "results/table.csv"

rule download:
    output: manifest="resources/raw/toy/manifest.json"
    script: "download.py"

rule metric:
    input: manifest="resources/raw/toy/manifest.json"
    output: metric="results/toy/metric.csv"
    params: factor=config["factor"]
    script: "metric.py"

rule table:
    input: metric="results/toy/metric.csv"
    output: table="results/table.csv"
    script: "table.py"
"""

TOY_SCRIPTS = {
    "download.py": """
import hashlib, json
from pathlib import Path
raw = Path(snakemake.output.manifest).parent
raw.mkdir(parents=True, exist_ok=True)
(raw / "values.txt").write_text("1\\n2\\n3\\n")
digest = hashlib.sha256((raw / "values.txt").read_bytes()).hexdigest()
files = [{"path": "values.txt", "sha256": digest}]
Path(snakemake.output.manifest).write_text(json.dumps({"origin": "toy", "files": files}))
""",
    "metric.py": """
from pathlib import Path
from isotropy.provenance import record_step
raw = Path(snakemake.input.manifest).parent
values = [int(v) for v in (raw / "values.txt").read_text().split()]
lines = "".join(f"{v * snakemake.params.factor}\\n" for v in values)
Path(snakemake.output.metric).write_text("value\\n" + lines)
record_step(snakemake, seeds=[0])
""",
    "table.py": """
from pathlib import Path
from isotropy.provenance import record_step
values = [int(v) for v in Path(snakemake.input.metric).read_text().split()[1:]]
Path(snakemake.output.table).write_text(f"total\\n{sum(values)}\\n")
record_step(snakemake)
""",
}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy workflow (its own folder) run once into a working directory: (workflow, workdir)."""
    base = tmp_path_factory.mktemp("toy")
    workflow = base / "workflow"
    workflow.mkdir()
    (workflow / "Snakefile").write_text(TOY_SNAKEFILE)
    (workflow / "config.yaml").write_text("factor: 2\n")
    for name, text in TOY_SCRIPTS.items():
        (workflow / name).write_text(text)
    workdir = base / "work"
    snakefile, config = str(workflow / "Snakefile"), str(workflow / "config.yaml")
    folders = ["--snakefile", snakefile, "--directory", str(workdir), "--configfile", config]
    snakemake(*folders, "--quiet", "all", timeout=300, check=True)
    assert (workdir / "results/table.csv").read_text() == "total\n12\n"
    return workflow, workdir


def _copy(workdir: Path, dest: Path) -> Path:
    shutil.copytree(workdir, dest, symlinks=True)  # copy2: modification times kept
    return dest


@pytest.mark.slow
def test_toy_workflow_audits_clean(toy, capsys, monkeypatch):
    workflow, workdir = toy
    monkeypatch.setattr(records, "WORKFLOW_ROOT", workflow)  # the toy's scripts are its code
    args = ["-d", str(workdir), "--configfile", str(workflow / "config.yaml")]
    assert main(args) == 0, capsys.readouterr()
    assert "0 with mismatches" in capsys.readouterr().out


@pytest.mark.slow
def test_toy_workflow_tampering_is_caught(toy, tmp_path):
    workflow, workdir = toy
    metric = _copy(workdir, tmp_path / "metric")
    with open(metric / "results/toy/metric.csv", "a") as handle:
        handle.write("99\n")
    assert "results/toy/metric.csv" in _bad(audit(metric, workflow_root=workflow))

    raw = _copy(workdir, tmp_path / "raw")
    (raw / "resources/raw/toy/values.txt").write_text("1\n2\n4\n")
    assert list(_bad(audit(raw, workflow_root=workflow))) == ["resources/raw/toy/values.txt"]

    original = (workflow / "metric.py").read_text()
    stat = (workflow / "metric.py").stat()
    try:
        (workflow / "metric.py").write_text(original + "# edited\n")
        assert _bad(audit(workdir, workflow_root=workflow)) == {
            "results/toy/metric.csv": ["code: its script metric.py changed since it was made"]
        }
    finally:
        (workflow / "metric.py").write_text(original)
        # Its time too: Snakemake takes a script newer than its outputs for changed code, and
        # the module's later tests share this workflow.
        os.utime(workflow / "metric.py", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not failures(audit(workdir, workflow_root=workflow))


def _toy_args(workflow: Path, workdir: Path, *configs: Path) -> list[str]:
    return ["-d", str(workdir), "--configfile", *map(str, configs or [workflow / "config.yaml"])]


@pytest.mark.slow
def test_cli_takes_several_config_files_like_snakemake(toy, tmp_path, capsys, monkeypatch):
    """`--configfile a b c` lays the files over each other (issue 26, case 2): none of them is
    taken for a file to audit, and a tampered result is still caught."""
    workflow, workdir = toy
    monkeypatch.setattr(records, "WORKFLOW_ROOT", workflow)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("factor: 2\n")
    empty_ok = tmp_path / "more.yaml"
    empty_ok.write_text("unused: 1\n")
    args = _toy_args(workflow, workdir, workflow / "config.yaml", overlay, empty_ok)
    assert main(args) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "config.yaml" not in out and "overlay.yaml" not in out  # never audited as files
    assert "3 files audited: 3 ok" in out
    work = _copy(workdir, tmp_path / "work")
    with open(work / "results/table.csv", "a") as handle:
        handle.write("1\n")
    assert main(_toy_args(workflow, work, workflow / "config.yaml", overlay)) == 1
    assert "MISMATCH results/table.csv: modified after it was made" in capsys.readouterr().err


@pytest.mark.slow
def test_config_files_given_as_files_to_audit_fail(toy, capsys):
    """isotropy-audit audits the whole folder: a config file given without --configfile is an
    unknown argument, never a file to audit nor a config file silently left out."""
    workflow, workdir = toy
    config = str(workflow / "config.yaml")
    args = ["-d", str(workdir), config]
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The real workflow's tiny run


@pytest.mark.slow
def test_audit_rule_and_cli_pass_on_the_tiny_run(tiny_run):
    workdir, command, mirror = tiny_run
    run_with_mirror(command + ["audit"], mirror, timeout=900, check=True)
    import pandas as pd

    table = pd.read_csv(workdir / "results/audit.tsv", sep="\t")
    assert (table["status"] != FAIL).all()
    audited = set(table["file"])
    for name in (
        "results/main/figure2.pdf",
        "results/main/table1.csv",
        "results/glue/table3.csv",
        "results/claims.csv",
    ):
        assert name in audited
    # The walk reached the raw downloads.
    assert any(f.startswith("resources/raw/") and f.endswith("manifest.json") for f in audited)

    config = command[command.index("--configfile") + 1]
    cli = [sys.executable, "-m", "isotropy.audit", "-d", str(workdir), "--configfile", config]
    cli = run_captured(cli, env=snakemake_environment(mirror), timeout=900, check=True)
    assert "0 with mismatches" in cli.stdout


@pytest.mark.slow
def test_tampered_trace_of_the_tiny_run_is_caught(tiny_run, tmp_path):
    workdir, _, _ = tiny_run
    copy = _copy(workdir, tmp_path / "work")
    trace = copy / "results/main/miniLM/polarity/seed0/trace.parquet"
    import pandas as pd

    frame = pd.read_parquet(trace)
    frame.loc[frame.index[-1], "silhouette"] += 0.1
    frame.to_parquet(trace)
    findings = walk(copy)
    bad = _bad(findings)
    assert any(
        r.startswith("checksum: modified after it was made")
        for r in bad["results/main/miniLM/polarity/seed0/trace.parquet"]
    )
    for downstream in (
        "results/main/correlations.csv",
        "results/main/figure2.pdf",
        "results/main/figure3.png",
    ):
        assert any(
            r.startswith("input: input results/main/miniLM/polarity/seed0/trace.parquet (sha256")
            for r in bad[downstream]
        ), downstream
