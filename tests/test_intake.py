"""Someone else's folder, audited in quarantine: one intake copies what the audit reads,
``make report`` re-makes nothing the audit does not vouch for, and every name is printed escaped
(docs/reliability.md)."""

from __future__ import annotations

import ast
import contextlib
import errno
import json
import os
import re
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from tiny_workflow import make_workdir, run_make

from isotropy import audit as audit_cli
from isotropy import intake, trust
from isotropy.audit import FAIL, NOT_COPIED, Finding, audit, format_table, write_tsv
from isotropy.io import sha256_file, write_json
from isotropy.traces import ResultFileError, read_trace

DIGEST = "0" * 64
ROOT = Path(__file__).resolve().parents[1]


def _entries(files: dict[str, str]) -> dict:
    return {name: {"sha256": digest, "bytes": 1, "mtime": 0} for name, digest in files.items()}


def _record(outputs: dict[str, str], inputs: dict[str, str] | None = None) -> dict:
    return {"rule": "r", "outputs": _entries(outputs), "inputs": _entries(inputs or {})}


def _result(folder: Path, name: str, text: str, inputs: dict[str, str] | None = None) -> Path:
    """A result file with a provenance record that vouches for it (and names ``inputs``)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    write_json(f"{path}.provenance.json", _record({name: sha256_file(path)}, inputs))
    return path


def _cli(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "isotropy.audit", "-d", str(folder), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


# --- loss: report.html a link to a folder, or a folder ----------------------------------------
@pytest.mark.parametrize("planted", ["link to a folder", "file", "partial link"])
def test_report_html_is_renamed_into_place_never_written_into(tmp_path, planted):
    """A link there or at report.partial.html is replaced, what it points to left alone."""
    (tmp_path / "work").mkdir()
    workdir = make_workdir(tmp_path / "work", "TARGET=preview_study\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kept = elsewhere / "report.partial.html"
    kept.write_text("the user's own file\n")
    if planted == "link to a folder":
        (workdir / "report.html").symlink_to(elsewhere, target_is_directory=True)
    elif planted == "partial link":
        (workdir / "report.partial.html").symlink_to(kept)
    else:
        (workdir / "report.html").write_text("old")
    result = run_make(workdir, "report")
    assert kept.read_text() == "the user's own file\n"
    assert result.returncode == 0, result.stderr
    assert (workdir / "report.html").read_text() == "<html></html>\n"
    assert not (workdir / "report.html").is_symlink()


# --- loss and hang: links, hard links, pipes and sockets --------------------------------------
def _plant(kind: str, path: Path, outside: Path) -> None:
    """A link to ``outside``, a hard link of it, a pipe or a socket at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        path.symlink_to(outside)
    elif kind == "hard link":
        os.link(outside, path)
    elif kind == "pipe":
        os.mkfifo(path)
    else:  # bound by its name in its folder: a socket's path holds at most 107 bytes
        with socket.socket(socket.AF_UNIX) as server, contextlib.chdir(path.parent):
            server.bind(path.name)


# What the folder check says of each, and the intake (which never opens a link or a socket).
PLANTED = {
    "link": ("is a link to ", "cannot be opened (a link on its path): never followed"),
    "hard link": ("has 2 hard links", "has 2 hard links"),
    "pipe": ("is a pipe (FIFO), not a file", "is a pipe (FIFO), not a file"),
    "socket": ("is a socket, not a file", "cannot be opened"),
}


@pytest.mark.parametrize(
    "where", [".snakemake/metadata/eA==", "results/table.csv", "resources/published_values.csv"]
)
@pytest.mark.parametrize("kind", PLANTED)
def test_a_link_hard_linked_file_pipe_or_socket_is_refused_unread(tmp_path, kind, where):
    outside = tmp_path / "outside.txt"
    outside.write_text("a file elsewhere\n")
    folder = tmp_path / "work"
    _plant(kind, folder / where, outside)
    checked, copied = PLANTED[kind]
    assert dict(trust.folder_problems(folder))[where].startswith(checked)
    if where.startswith(".snakemake"):  # nothing of it is believed: the audit reads none of it
        assert not [f for f in audit(folder) if f.file.startswith(".snakemake")]
    else:
        _result(folder, "results/x.csv", "x\n", {where: DIGEST})
        refused = intake.intake(folder, tmp_path / "copy")
        assert copied in refused[where] and not (tmp_path / "copy" / where).exists()
    assert outside.read_text() == "a file elsewhere\n"


# --- wrong: `make report` launders a forgery --------------------------------------------------


# The report's plan (a dry run) names the jobs it re-makes: their outputs are not judged.
PLAN = "rule check_claims_preview:\n    output: results/preview/claims.csv, x.md\n"


@pytest.mark.parametrize("consumer", ["results/preview/claims.csv", "results/figure.png"])
def test_make_report_judges_all_but_what_it_re_makes(tmp_path, consumer):
    """Stale claims, which the report re-makes, never block a report of a preview and an overlay
    run over it; any other stale or forged file stops it in one line, re-making nothing."""
    workdir = make_workdir(tmp_path, "TARGET=preview_study\n")
    (workdir / "plan.txt").write_text(PLAN)
    made_from = sha256_file(_result(workdir, "results/table.csv", "the real table\n"))
    _result(workdir, consumer, "claims\n", {"results/table.csv": made_from})
    _result(workdir, "results/table.csv", "a forged table\n")
    (workdir / "logs/effective-config").mkdir()
    for files in ("config.yaml", "config.yaml tests/config/tiny.yaml"):
        made = f"# made with: {files}\npreview: {{seeds: [0]}}\n"
        (workdir / "logs/effective-config/preview_study.yaml").write_text(made)
        result = run_make(workdir, "report")
        if consumer.endswith("claims.csv"):
            assert result.returncode == 0 and f"(made with {files})" in result.stdout
            continue
        calls = (workdir / "calls.txt").read_text().splitlines()  # a plan alone
        assert result.returncode != 0 and all(" -n " in call for call in calls)
        refusal = [line for line in result.stderr.splitlines() if "refused" in line]
        assert len(refusal) == 1 and "make report: refused: the audit of" in refusal[0]
        assert consumer in refusal[0] and "changed" in refusal[0]


# --- wrong: pins from the folder --------------------------------------------------------------
WORDS = "supersense_words"  # config/sources.yaml pins its sha256


def test_a_folders_config_that_re_pins_a_source_is_not_believed(tmp_path, capsys):
    """A config re-pinning a source to a poisoned file: the project's pin names it."""
    from isotropy.workflow.config import SOURCES_CONFIG, read_config_file

    project = read_config_file(SOURCES_CONFIG)["sources"][WORDS]
    raw = tmp_path / "work" / "resources" / "raw" / WORDS
    raw.mkdir(parents=True)
    (raw / "words.txt").write_bytes(b"poisoned\n")
    poisoned = sha256_file(raw / "words.txt")
    fetched = {"url": project["url"], "sha256": poisoned, "git_blob": project["git_blob"]}
    manifest = {"source": WORDS, "files": [{"path": "words.txt", "sha256": poisoned}]}
    manifest["inputs"] = [{**fetched, "pinned_by": ["config"]}]
    write_json(raw / "manifest.json", manifest)
    # A result made from it: the audit walks from results/ to the manifest.
    inputs = {f"resources/raw/{WORDS}/manifest.json": sha256_file(raw / "manifest.json")}
    _result(tmp_path / "work", "results/x.csv", "x\n", inputs)
    overlay = yaml.safe_dump({"sources": {WORDS: {"sha256": poisoned}}})
    effective = tmp_path / "work" / "logs" / "effective-config" / "all.yaml"
    effective.parent.mkdir(parents=True)
    effective.write_text(overlay)
    yours = tmp_path / "yours.yaml"
    yours.write_text(overlay)
    for configs in ([ROOT / "config.yaml", effective], [ROOT / "config.yaml", yours]):
        args = ["-d", str(tmp_path / "work"), "--configfile", *map(str, configs)]
        assert audit_cli.main(args) == 1
        named = capsys.readouterr().out
        assert f"config pins {project['sha256'][:12]}" in named


@pytest.mark.parametrize("kind", ["pipe", "link"])  # read forever, or waited on forever
def test_an_audit_configfile_that_is_a_pipe_or_links_to_dev_zero_is_one_line(tmp_path, kind):
    _plant(kind, config := tmp_path / "work/logs/effective-config/all.yaml", Path("/dev/zero"))
    _result(tmp_path / "work", "results/x.csv", "x\n")
    result = _cli(tmp_path / "work", "--configfile", str(config), timeout=30)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert f"{config}: {PLANTED[kind][1].split(':')[0]}" in result.stderr


# --- hang, tracebacks: names in a record that are not paths inside the folder -------------------
@pytest.mark.parametrize(
    "name, said",
    [  # hang: hashed as given; tracebacks: an IndexError, "File name too long" of the copy
        ("/proc/self/pagemap", "names a path outside the folder (absolute, or with '..')"),
        ("../outside.txt", "names a path outside the folder (absolute, or with '..')"),
        (".", "names the folder itself"),
        ("./.", "names the folder itself"),
        ("results/" + "a" * 5000, "names a path of 5,008 characters"),
    ],
)
def test_a_record_naming_a_path_outside_the_folder_is_one_finding_never_read(tmp_path, name, said):
    folder = tmp_path / "work"
    _result(folder, "results/table.csv", "x\n", {name: DIGEST})
    record = json.loads((folder / "results" / "table.csv.provenance.json").read_text())
    record["code"] = {"script": name, "script_sha256": DIGEST, "modules": {}}
    record["outputs"][name] = {"sha256": DIGEST, "bytes": 1, "mtime": 0}
    write_json(folder / "results" / "table.csv.provenance.json", record)
    result = _cli(folder, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert said in result.stdout
    assert "never read (named by results/table.csv.provenance.json)" in result.stdout
    assert max(map(len, result.stdout.splitlines())) < 700  # a long name is shortened
    assert "/proc" not in name or "script under /proc" in result.stdout


# --- memory and depth: an alias bomb, or a nesting 100,000 deep, in the effective config ---------

MAPPING_BOMB = "a0: &a0 {x: 1, y: 2, z: 3, w: 4, v: 5, u: 6, t: 7, s: 8, r: 9}\n" + "".join(
    f"a{i}: &a{i} {{{', '.join(f'k{j}: *a{i - 1}' for j in range(9))}}}\n" for i in range(1, 10)
)


@pytest.mark.parametrize(
    "text, said",
    [
        (MAPPING_BOMB, "alias"),  # under a kilobyte: 9^10 values
        ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than 64 levels"),
    ],
)
def test_an_alias_bomb_or_a_config_nested_100000_deep_is_one_line(tmp_path, text, said):
    config = tmp_path / "effective.yaml"
    config.write_text(text)
    assert said in (intake.config_file_problem(config) or "")
    command = [sys.executable, "-m", "isotropy.trust", "-d", str(tmp_path), "--configfile"]
    ran = subprocess.run([*command, str(config)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr and said in ran.stderr
    # The audit reads only the mirror of a config file it is given, through the same loader.
    ran = _cli(tmp_path, "--configfile", str(config))
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and said in ran.stderr


# --- crash: a trace of millions of rows, read whole before any row check ----------------------
def test_the_size_and_count_caps_refuse_before_a_copy(tmp_path, monkeypatch):
    """Past the per-file, total or file-count cap: refused, named, not copied; the rest copied."""
    folder = tmp_path / "work"
    for name, size in (("a.txt", 10), ("b.txt", 30), ("c.txt", 10), ("d.txt", 10), ("e.txt", 1)):
        (folder / "results").mkdir(parents=True, exist_ok=True)
        (folder / "results" / name).write_bytes(b"x" * size)
    monkeypatch.setattr(intake, "MAX_FILE_BYTES", 20)
    monkeypatch.setattr(intake, "MAX_TOTAL_BYTES", 25)
    refused = intake.intake(folder, tmp_path / "copy")
    assert "larger than the intake's cap of 20 bytes" in refused["results/b.txt"]
    assert "passes the intake's cap of 25 bytes in all" in refused["results/d.txt"]
    copied = sorted(p.name for p in (tmp_path / "copy" / "results").iterdir())
    assert copied == ["a.txt", "c.txt", "e.txt"]
    monkeypatch.setattr(intake, "MAX_FILES", 2)
    refused = intake.intake(folder, tmp_path / "copy2")
    assert "past the 2 files the intake copies" in refused["results/e.txt"]
    assert sorted(p.name for p in (tmp_path / "copy2" / "results").iterdir()) == copied[:2]
    # Disk: the caps (256 GiB in all) exceeded the free disk of an ordinary machine.
    monkeypatch.setattr(intake, "MAX_FILES", 10)
    free = shutil.disk_usage(tmp_path)._replace(free=intake.DISK_MARGIN + 15)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: free)
    cause = intake.intake(folder, tmp_path / "copy3")["results/c.txt"]
    assert "cap of 15 bytes in all, the workspace's free space less a margin" in cause
    # A refused file's bytes are given back: the files that fit after it are taken.
    monkeypatch.undo()
    pd.DataFrame({"seed": [0] * 2000}).to_parquet(folder / "results" / "a.parquet")
    monkeypatch.setattr(intake, "MAX_ROWS", 1000)
    monkeypatch.setattr(intake, "MAX_TOTAL_BYTES", (folder / "results/a.parquet").stat().st_size)
    assert list(intake.intake(folder, tmp_path / "copy4")) == ["results/a.parquet"]


def test_a_killed_audit_leaves_no_workspace_nor_a_staging_folder(tmp_path, monkeypatch):
    """SIGTERM: removed as it stops; SIGKILL (of make report's gate too): by the next audit,
    which leaves a live audit's alone, and names a folder planted as a staging file."""
    temp, folder = Path(tempfile.mkdtemp(dir=tmp_path)), tmp_path / "work"
    _result(folder, "results/a.csv", "a\n")
    code = "import sys, time; from isotropy import audit as a; a.walk = lambda *_, **k: "
    code += "print('copied', flush=True) or time.sleep(60); a.audit(sys.argv[1])"
    monkeypatch.setenv("TMPDIR", str(temp))
    for sig, left in ((signal.SIGTERM, 0), (signal.SIGKILL, 1)):
        command = [sys.executable, "-c", code, str(folder)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as run:
            assert run.stdout and run.stdout.readline() == "copied\n"
            run.send_signal(sig)
        assert len(list(temp.iterdir())) == left
    (temp / f"isotropy-audit-{os.getpid()}-live").mkdir()
    planted = folder / "results" / ".audit.tsv.x1.part.tsv"  # one io.atomic_path removes
    (planted / "kept").mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    (bad,) = [f for f in audit(folder) if f.status == FAIL]
    write_tsv([bad], folder / "results" / "audit.tsv")  # once a traceback: IsADirectoryError
    assert [p.name for p in temp.iterdir()] == [f"isotropy-audit-{os.getpid()}-live"]
    assert bad.file == "results/.audit.tsv.x1.part.tsv" and bad.check == "intake"
    assert bad.reason.startswith("is a folder, not a file") and (planted / "kept").is_dir()


# --- crash: .snakemake/metadata, .snakemake or logs/effective-config a plain file -------------
@pytest.mark.parametrize("name", [".snakemake", ".snakemake/metadata", "logs/effective-config"])
def test_a_record_folder_that_is_a_file_is_refused(tmp_path, name):
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text("not a folder\n")
    assert "is not a folder" in dict(trust.folder_problems(tmp_path))[name]


# --- crash: a full disk ------------------------------------------------------------------------
def test_a_full_disk_is_one_line_naming_the_cause(tmp_path, monkeypatch, capsys):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "audit.tsv"))

    monkeypatch.setattr(audit_cli, "audit", full)  # the intake's copy fills the disk
    code = audit_cli.main(["-d", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "No space left on device" in err


# --- crash: a record nested 100,000 deep, or naming 70,000 inputs (over 200,000 values) ------
@pytest.mark.parametrize(
    "record, said",
    [
        (lambda: "[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
        (
            lambda: json.dumps(_record({}, {f"results/in{i}.csv": DIGEST for i in range(70_000)})),
            "holds more than 200,000 values",
        ),
    ],
)
def test_a_record_nested_deep_or_naming_many_inputs_is_one_finding(tmp_path, record, said):
    trace = tmp_path / "results" / "trace.parquet"
    trace.parent.mkdir()
    pd.DataFrame({"seed": [0], "step": [0]}).to_parquet(trace)
    Path(f"{trace}.provenance.json").write_text(record())
    with pytest.raises(ResultFileError, match="provenance record"):
        read_trace(trace)
    findings = audit(tmp_path)
    (finding,) = [f for f in findings if f.check == "record"]
    assert finding.file == "results/trace.parquet" and said in finding.reason
    assert len(format_table(findings).splitlines()) < 10
    # findings of one cause are one line with a count
    missing = [Finding(f"results/{i}.csv", FAIL, "missing", "gone") for i in range(5000)]
    lines = format_table(missing).splitlines()
    assert len(lines) == 3 and "(5,000 files)" in lines[1]


def test_each_depth_cap_reads_64_levels_and_refuses_the_65th():
    """Each cap's edge, which the cases nested 100,000 deep pass far beyond: a JSON record or a
    config file 64 levels deep, a name of 65 parts, is read; one more is not (JSON: test_trust)."""
    nested = "[" * 64 + "]" * 64
    assert intake.size_and_depth(intake.parse_json(nested)) == (64, 64)
    assert intake.size_and_depth(intake.load_yaml(nested.encode())) == (64, 64)
    assert intake.name_problem("/".join(["d"] * 65)) is None
    with pytest.raises(yaml.YAMLError, match="nested deeper than 64 levels"):
        intake.load_yaml(f"[{nested}]".encode())
    assert "a path over 64 folders deep" in (intake.name_problem("/".join(["d"] * 66)) or "")


# --- each limit bounds what it names; every entry accounted for -------------------------------
def _zigzag(value: int) -> bytes:
    """``value`` as Thrift's compact protocol writes an i64: zigzag, then a varint."""
    value, out = 2 * value, b""
    while value >= 0x80:
        out, value = out + bytes([value & 0x7F | 0x80]), value >> 7
    return out + bytes([value])


@pytest.mark.parametrize("footer", [None, 100])
def test_rows_are_counted_from_the_row_groups_before_any_read(tmp_path, monkeypatch, footer):
    """Memory: a footer claiming 100 rows over larger row groups passes no cap."""
    monkeypatch.setattr(intake, "MAX_ROWS", 1000)
    trace = tmp_path / "work" / "results" / "main" / "trace.parquet"
    trace.parent.mkdir(parents=True)
    pd.DataFrame({"seed": [0] * 2000, "step": range(2000)}).to_parquet(trace)
    if footer is not None:  # FileMetaData's num_rows: field 3 (0x16), the first after the schema
        data = trace.read_bytes()
        end = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
        at = data.index(b"\x16" + _zigzag(2000), end)
        trace.write_bytes(data[:at] + b"\x16" + _zigzag(footer) + data[at + 3 :])
        meta = pq.ParquetFile(trace).metadata
        assert (meta.num_rows, meta.row_group(0).num_rows) == (100, 2000)  # the forgery
    refused = intake.intake(tmp_path / "work", tmp_path / "copy")
    said = f"2,000 rows (its footer says{f' {footer}' if footer else ''})"
    assert said in refused["results/main/trace.parquet"]
    with pytest.raises(ResultFileError, match="2,000 rows"):
        read_trace(trace)


def test_a_table_past_the_memory_budget_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(intake, "MAX_READ_BYTES", 100_000, raising=False)
    monkeypatch.setattr(intake, "MAX_RECORD_BYTES", 1000)
    folder = tmp_path / "work"
    (folder / "results").mkdir(parents=True)
    # A result CSV past an eighth of the budget, a JSON file past the record cap: never copied.
    sizes = {"a.csv": 12_500, "b.csv": 12_501, "a.json": 1000, "b.JSON": 1001, "b.jsonl": 12_501}
    sizes["b.jsonl.provenance.json"] = 1001  # a record: copied, never parsed; the audit says why
    for name, size in sizes.items():
        (folder / "results" / name).write_text("0\n".rjust(size))
    narrow = {"seed": [0] * 2000, "step": range(2000)}  # 32,000 bytes once read: taken
    pd.DataFrame(narrow).to_parquet(folder / "results" / "narrow.parquet")
    wide = pd.DataFrame({**narrow, **{f"extra{i}": 0.0 for i in range(20)}})  # 352,000 bytes
    wide.to_parquet(folder / "results" / "trace.parquet")
    refused = intake.intake(folder, tmp_path / "copy")
    assert [name for name in sizes if f"results/{name}" in refused] == ["b.csv", "b.JSON"]
    assert "12,501 bytes, past the intake's cap of 12,500 for a .csv" in refused["results/b.csv"]
    assert "1,001 bytes, past the intake's cap of 1,000 for a .json" in refused["results/b.JSON"]
    copied = ["a.csv", "a.json", "b.jsonl", "b.jsonl.provenance.json", "narrow.parquet"]
    assert sorted(os.listdir(tmp_path / "copy" / "results")) == copied
    cause = refused["results/trace.parquet"]
    assert "bytes once read (2,000 rows of 22 columns), past the intake's budget" in cause
    with pytest.raises(ResultFileError, match="budget of 100,000 bytes of memory"):
        read_trace(folder / "results" / "trace.parquet")


def test_a_sparse_file_is_copied_sparse(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    (folder / "results").mkdir(parents=True)
    sparse = folder / "results" / "sparse.bin"
    with open(sparse, "wb") as handle:
        handle.truncate(64 * 2**20)
        handle.write(b"data at the start")
    if sparse.stat().st_blocks * 512 >= 2**20:
        pytest.skip("this file system stores no holes")
    assert intake.intake(folder, tmp_path / "copy") == {}
    copy = tmp_path / "copy" / "results" / "sparse.bin"
    assert copy.stat().st_size == 64 * 2**20 and copy.stat().st_blocks * 512 < 2**20
    assert sha256_file(copy) == sha256_file(sparse)
    monkeypatch.setenv("ISOTROPY_INTAKE_MAX_HASHED_BYTES", str(32 * 2**20))  # holes hashed too
    assert "is 67,108,864 bytes, past the cap of 33,554,432 hashed in all" in _cli(folder).stdout


@pytest.fixture
def deep_folder(tmp_path, monkeypatch):
    """A results tree 1,100 folders deep (made and removed by relative paths: its full path is
    longer than the system takes, and Python's own walks recurse)."""
    folder = tmp_path / "work"
    _result(folder, "results/x.csv", "x\n")
    monkeypatch.chdir(folder / "results")
    for depth in range(1, 1101):  # a relative name of 2,200 characters: within PATH_MAX
        os.mkdir("/".join(["d"] * depth))
    Path("/".join(["d"] * 1100 + ["deep.csv"])).write_text("x\n")
    yield folder
    os.remove("/".join(["d"] * 1100 + ["deep.csv"]))
    for depth in range(1100, 0, -1):
        os.rmdir("/".join(["d"] * depth))


def test_a_results_tree_past_the_depth_cap_is_one_line(deep_folder):
    deep = "results/" + "/".join(["d"] * 64)  # 65 folders deep
    findings = {f.file: f.reason for f in audit(deep_folder) if f.status == FAIL}
    assert findings == {deep: "lies over 64 folders deep: nothing in it is read" + NOT_COPIED}
    problems = dict(trust.folder_problems(deep_folder))
    assert problems == {deep: "lies over 64 folders deep: nothing in it is read"}
    command = [sys.executable, "-m", "isotropy.trust", "-d", str(deep_folder)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert "lies over 64 folders deep" in ran.stderr


@pytest.mark.parametrize("locked", ["results/locked", "results"])
def test_a_folder_that_cannot_be_listed_is_a_finding(tmp_path, monkeypatch, locked):
    folder = tmp_path / "work"
    _result(folder, "results/a.csv", "a\n")
    _result(folder, "results/locked/b.csv", "b\n")
    if os.geteuid() == 0:  # root reads every folder: the refusal it would get, planted
        scandir = os.scandir

        def refusing(path="."):
            if isinstance(path, (str, Path)) and Path(path) == folder / locked:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return scandir(path)

        monkeypatch.setattr(os, "scandir", refusing)
    (folder / locked).chmod(0)
    try:
        findings = audit(folder)
    finally:
        (folder / locked).chmod(0o755)
    refused = [f for f in findings if f.check == "intake"]
    assert [(f.file, f.status) for f in refused] == [(locked, FAIL)]
    assert refused[0].reason.startswith("cannot be listed (Permission denied)")
    assert "1 with mismatches" in format_table(findings).splitlines()[-1]


def test_an_entry_that_vanishes_before_it_is_opened_is_a_finding(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    _result(folder, "results/a.csv", "a\n")
    _result(folder, "results/gone.csv", "b\n")
    open_inside = intake.open_inside

    def vanishing(root_fd: int, name: str) -> int:
        if name == "results/gone.csv":
            os.remove(folder / name)
        return open_inside(root_fd, name)

    monkeypatch.setattr(intake, "open_inside", vanishing)
    refused = intake.intake(folder, tmp_path / "copy")
    said = "vanished or cannot be opened (No such file or directory)"
    assert refused == {"results/gone.csv": said}


def test_a_name_that_is_not_utf8_is_audited_and_tabulated(tmp_path):
    folder = tmp_path / "work"
    (folder / "results").mkdir(parents=True)
    Path(os.fsdecode(os.fsencode(folder / "results") + b"/caf\xe9.csv")).write_text("x\n")
    findings = audit(folder)
    assert [f.file for f in findings] == ["results/caf\udce9.csv"]
    assert "results/caf\\udce9.csv  FAIL" in format_table(findings)
    write_tsv(findings, tmp_path / "audit.tsv")
    assert "results/caf\\udce9.csv\tFAIL" in (tmp_path / "audit.tsv").read_text("utf-8")


def test_other_spellings_of_an_honest_path_and_names_at_the_cap_are_one_file(tmp_path):
    """A name at the cap (1,024 characters, 255 bytes a part): no phantom finding, no traceback."""
    folder = tmp_path / "work"
    made_from = sha256_file(_result(folder, "results/in.csv", "in\n"))
    _result(folder, "results/sub/f.csv", "f\n")
    _result(folder, "results/" + "/".join(["b" * 200] * 5) + "/c.csv", "c\n")  # 1,018 in all
    (folder / "results" / ("a" * 250)).write_text("a\n")  # no record's name fits beside it
    spellings = {"results//in.csv": made_from, "results/./in.csv": made_from}
    _result(folder, "results/table.csv", "x\n", spellings)
    (bad,) = [f for f in audit(folder) if f.status == FAIL]
    assert (bad.file, bad.check) == ("results/" + "a" * 250, "record")  # none: its origin unknown
    _result(folder, "results/table.csv", "x\n", {**spellings, "results/sub/.": DIGEST})
    assert intake.intake(folder, tmp_path / "copy") == {}


def test_names_never_forge_a_line_of_make_audits_log(tmp_path, monkeypatch, capfd):
    """A line break, an escape or a right-to-left mark in a name forges no line of the log; the
    table is logged once (the log's records reach the terminal too), never also printed."""
    forged = "x.csv\nresults_y.csv  ok  all  checksum\n40 files audited: 40 ok\x1b[2J\u202e.csv"
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / forged).write_text("x\n")  # no record: a mismatch, logged
    monkeypatch.chdir(tmp_path)
    table = SimpleNamespace(table=str(tmp_path / "audit.tsv"))
    job = SimpleNamespace(log=[str(tmp_path / "audit.log")], config={}, params=table)
    with pytest.raises(SystemExit, match="1"):
        runpy.run_path(str(ROOT / "scripts" / "audit_results.py"))["main"](job)
    shown = capfd.readouterr()
    log = (tmp_path / "audit.log").read_text()
    for text in (log, shown.out + shown.err):
        lines = text.splitlines()
        assert not [line for line in lines if line.startswith(("40 files", "results_y"))]
        assert len([line for line in lines if line.startswith("1 files audited")]) == 1, text
        assert text.count("FILE") == 1 and "\x1b" not in text and "\u202e" not in text
    assert "MISMATCH results/x.csv\\nresults_y.csv" in log and "\\u202e" in log


# --- the door: a module that reads outside files reads them through isotropy.intake alone -----
# Modules reading files the project did not just write (docs/reliability.md's table of doors);
# a tuple: those functions alone. DIRECT: the reads left direct, each with why it is no such file.
OUTSIDE = {m: () for m in "committed audit provenance trust traces reporting".split()}
OUTSIDE["io"], OUTSIDE["estimate"] = ("commit_files", "checked_record"), ("finished_run",)
READS = {"open", "fdopen", "read_text", "read_bytes", "read_csv", "read_parquet", "read_json"}
READS |= {"read_table", "ParquetFile", "load", "safe_load", "loadtxt", "copyfile", "copy2"}
DIRECT = {
    ("trust", ""): "the package's records.schema.yaml and the checkout's envs/*.yaml",
    ("provenance", "hardware"): "/proc/cpuinfo",
    **dict.fromkeys([("traces", "_parquet"), ("traces", "read_result_table")], "bytes it read"),
}


def _direct_reads(module: str, source: str, only: tuple[str, ...] = ()) -> set[tuple]:
    """(module, top-level function or class) of each read of a file but through the door; one
    of bytes already read (io.BytesIO) or of a file opened to be written is none."""
    found = set()
    for unit in (u for u in ast.parse(source).body if not only or getattr(u, "name", "") in only):
        calls = [c for c in ast.walk(unit) if isinstance(c, ast.Call) and c.args]
        modes = [c.args[1:2] + [k.value for k in c.keywords if k.arg == "mode"] for c in calls]
        exempt = {
            id(c.func)
            for c, mode in zip(calls, modes)
            if ast.unparse(c.args[0]).startswith(("io.BytesIO(", "io.StringIO("))
            or set("wxa") & set(str(getattr((mode or [c])[0], "value", "")))
        }
        for node in ast.walk(unit):
            what = getattr(node, "attr", getattr(node, "id", None) == "open" and "open")
            door = what in READS and ast.unparse(node).startswith("intake.")
            if what in READS and id(node) not in exempt and not door:
                found.add((module, getattr(unit, "name", "")))
    return found


def test_every_module_reading_outside_files_reads_them_through_the_door(tmp_path):
    found: set[tuple] = set()
    for path in sorted((ROOT / "src" / "isotropy").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT / "src" / "isotropy").with_suffix("").parts)
        if (top := module.split(".")[0]) in OUTSIDE:
            found |= _direct_reads(module.removesuffix(".__init__"), path.read_text(), OUTSIDE[top])
    assert found == set(DIRECT), sorted(found ^ set(DIRECT))
    planted = "def f(p):\n    return pd.read_csv(p), open(p, 'w'), intake.read_json(p, 'x')\n"
    assert _direct_reads("m", planted) == {("m", "f")}
    (tmp_path / "f").write_bytes(b'a\n"b\xff')  # a quote never closed, a byte not UTF-8
    for read, said in [(intake.read_csv, "f: not CSV"), (intake.read_text, "f: byte 4 is not")]:
        with pytest.raises(intake.FolderError, match=said):
            read(tmp_path, "f")
    table = (ROOT / "docs/reliability.md").read_text().split("## One door")[1].split("\n## ")[0]
    rows = [r.split(" | ") for r in table.splitlines() if r.startswith("| ")][1:]
    assert {m for r in rows for m in re.findall(r"`isotropy\.(\w+)`", r[-1])} == set(OUTSIDE)
    assert all(hasattr(intake, door) for r in rows for door in re.findall(r"`(\w+)`", r[2]))
