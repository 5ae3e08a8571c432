"""Auditing or reporting someone else's folder runs nothing from it: its .snakemake records are
checked before Snakemake reads them, and nothing of it is imported (docs/reliability.md). The
real Snakemake on forged records: tests/test_hostile_folder.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from tiny_workflow import make_workdir, run_make

from isotropy import trust

ROOT = Path(__file__).resolve().parents[1]
OUT = base64.urlsafe_b64encode(b"out.txt").decode()
# What Snakemake 9.27 wrote for a one-rule shell job (its conda env one of the checkout's).
PLAIN = {
    "rule": "make",
    "input": [],
    "log": [],
    "shellcmd": "echo made > out.txt",
    "params": [],
    "code": "echo made > {output}",
    "record_format_version": 6,
    "conda_env": base64.b64encode((ROOT / "envs" / "data.yaml").read_bytes()).decode(),
    "container_img_url": None,
    "software_stack_hash": "d41d8cd98f00b204e9800998ecf8427e",
    "job_hash": 8755468525125,
    "starttime": 1795590380.9400945,
    "endtime": 1795590380.9406729,
    "incomplete": False,
    "external_jobid": None,
    "input_checksums": {"a.txt": "sha256:" + "ab" * 32, "b.txt": "cd" * 32},
}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


SCRIPT = "</script><script>document.title='INJECTED'</script>"
# A conda_env that is not one of the checkout's envs/*.yaml, whatever it holds (a tag, YAML
# escapes, an alias bomb: it is never parsed).
NOT_AN_ENV = "conda_env is not null or the base64 of one of this workflow's envs/*.yaml"
HOSTILE = {
    "conda_env JSON list": ({"conda_env": ["x"]}, NOT_AN_ENV),
    "conda_env another env": ({"conda_env": _b64("name: x\ndependencies: [python]\n")}, NOT_AN_ENV),
    "rule script": ({"rule": f"make{SCRIPT}"}, "rule is not a rule name"),
    "container script": (
        {"container_img_url": f"docker://x{SCRIPT}"},
        "container_img_url is not an image URL",
    ),
    "unknown key": ({"payload": "x"}, "keys Snakemake never writes: 'payload'"),
    "job_hash text": ({"job_hash": "1; rm -rf /"}, "job_hash is not an integer"),
    "time far away": ({"endtime": 1e308}, "endtime is not a time"),
    "checksums": ({"input_checksums": {"a": "<b>"}}, "input_checksums is not a mapping"),
    "inputs": ({"input": "a.txt"}, "input is not a list of paths"),
    "params a mapping": ({"params": [{"a": 1}]}, "its params is not a list of text"),
    "input a line break": ({"input": ["a\nb"]}, "its input holds '\\n'"),
}


def _folder(tmp_path: Path, record: object, name: str = OUT) -> Path:
    metadata = tmp_path / ".snakemake" / "metadata"
    metadata.mkdir(parents=True, exist_ok=True)
    text = record if isinstance(record, str) else json.dumps(record)
    (metadata / name).write_text(text)
    return tmp_path


def test_the_fields_are_the_ones_snakemake_writes():
    from snakemake.persistence import MetadataRecord

    assert set(trust.SCHEMAS["snakemake_record"]["properties"]) == set(MetadataRecord.model_fields)


def test_a_record_snakemake_wrote_passes(tmp_path):
    assert trust.folder_problems(_folder(tmp_path, PLAIN)) == []
    assert trust.folder_problems(tmp_path / "nothing here") == []


DAMAGED = {  # the text of a record, and what its one problem says
    "NaN": ('{"rule": "make", "starttime": NaN}', "NaN is not a number Snakemake writes"),
    "Infinity": ('{"rule": "make", "endtime": Infinity}', "Infinity is not a number"),
    "a list": ("[1, 2]", "it is a JSON list, not an object"),
    "not JSON": ("{oops", "it is not JSON"),
    "nested 100000": ("[" * 100_000 + "]" * 100_000, "it is nested deeper than 64 levels"),
    "nested 65": ("[" * 65 + "]" * 65, "it is nested deeper than 64 levels"),
}


@pytest.mark.parametrize("case", [*HOSTILE, *DAMAGED])
def test_a_hostile_record_or_damaged_record_is_refused_naming_its_file(tmp_path, case):
    record, expected = DAMAGED[case] if case in DAMAGED else HOSTILE[case]
    parsed = case in HOSTILE  # a record read: its output named
    problems = trust.folder_problems(_folder(tmp_path, {**PLAIN, **record} if parsed else record))
    assert len(problems) == 1, problems
    file, reason = problems[0]
    assert file == f".snakemake/metadata/{OUT}" and expected in reason and "\n" not in reason
    assert not parsed or "the record of 'out.txt': " in reason


# --- make report / make audit: the check runs before Snakemake; no `python -m` imports the folder
def _linked_folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A folder whose audit log, report overview and a benchmarks folder are links outside it."""
    (tmp_path / "work").mkdir()
    workdir = make_workdir(tmp_path / "work", "TARGET=preview_study\n")
    victim, secret = tmp_path / "victim.txt", tmp_path / "secret.txt"
    victim.write_text("the user's own file\n")
    secret.write_text("a private key\n")
    (workdir / "logs" / "audit.log").symlink_to(victim)
    (workdir / "results" / "report").mkdir(parents=True)
    (workdir / "results" / "report" / "overview.html").symlink_to(secret)
    (workdir / "benchmarks").mkdir()
    (workdir / "benchmarks" / "main").symlink_to(tmp_path, target_is_directory=True)
    return workdir, victim, secret


@pytest.mark.parametrize("target", ["report", "audit"])
def test_make_refuses_links_and_a_forged_record_before_snakemake(tmp_path, target):
    workdir, victim, _ = _linked_folder(tmp_path)
    tag = _b64(f"!!python/object/apply:os.system ['touch {workdir / 'MARKER'}']")
    _folder(workdir, {**PLAIN, "conda_env": tag})
    result = run_make(workdir, target)
    assert result.returncode != 0 and not (workdir / "calls.txt").exists(), result.stderr
    for link in ("logs/audit.log", "results/report/overview.html", "benchmarks/main"):
        assert f"{link}: is a link to" in result.stderr
    assert "remove the link" in result.stderr
    assert f".snakemake/metadata/{OUT}: the record of 'out.txt': its conda_env" in result.stderr
    assert victim.read_text() == "the user's own file\n" and not (workdir / "MARKER").exists()
    assert not (workdir / "report.html").exists()


@pytest.mark.parametrize("target", ["report", "audit"])
def test_make_imports_nothing_from_the_folder(tmp_path, target):
    """Make's own `python -m` steps all run, and none imports ./isotropy/ from the folder."""
    workdir = make_workdir(tmp_path, "TARGET=preview_study\n")
    (workdir / "isotropy").mkdir()
    (workdir / "isotropy" / "__init__.py").write_text("open('MARKER', 'w').close()\n")
    result = run_make(workdir, target)
    assert not (workdir / "MARKER").exists(), result.stderr
    assert (workdir / "calls.txt").exists(), result.stderr


# --- the config files make gives Snakemake: YTE templating runs Python while Snakemake loads them

YTE = '__use_yte__: true\nx: ?__import__("os").system("touch MARKER")\n'


def test_make_report_refuses_the_folders_effective_config_if_it_is_a_yte_template(tmp_path):
    """Snakemake loads every config file with YTE: `__use_yte__: true` would run its Python."""
    workdir = make_workdir(tmp_path, "TARGET=preview_study\n")
    (workdir / "logs" / "effective-config").mkdir()
    (workdir / "logs" / "effective-config" / "preview_study.yaml").write_text(YTE)
    result = run_make(workdir, "report")
    assert result.returncode != 0 and not (workdir / "calls.txt").exists(), result.stderr
    said = "logs/effective-config/preview_study.yaml: sets __use_yte__: Snakemake would run"
    assert said in result.stderr


@pytest.mark.parametrize("text", [YTE, "a: !!python/name:os.system\n"])
def test_a_config_file_that_is_not_plain_yaml_is_refused_by_the_loader_too(tmp_path, text):
    from isotropy.workflow.config import ConfigError, read_config_file

    config = tmp_path / "config.yaml"  # the checkout's Snakefile reads the folder's
    config.write_text(text)
    assert dict(trust.workflow_problems(tmp_path)).keys() == {str(config)}
    with pytest.raises(ConfigError, match="config.yaml"):
        read_config_file(config)
    assert not Path("MARKER").exists()


def test_snakemakes_incomplete_markers_are_checked_too(tmp_path):
    """Snakemake reads each marker's external_jobid to resume a cluster job."""
    incomplete = tmp_path / ".snakemake" / "incomplete"
    incomplete.mkdir(parents=True)
    (incomplete / OUT).write_text(json.dumps({"external_jobid": "4242_1"}))
    (incomplete / "migration_underway").write_text("")
    assert trust.folder_problems(tmp_path) == []
    (incomplete / OUT).write_text(json.dumps({"external_jobid": "1; scancel -u $USER"}))
    (incomplete / "eA==").write_text(json.dumps({"external_jobid": None, "cmd": "x"}))
    problems = dict(trust.folder_problems(tmp_path))
    assert "its external_jobid is not a job id" in problems[f".snakemake/incomplete/{OUT}"]
    assert "keys Snakemake never writes: 'cmd'" in problems[".snakemake/incomplete/eA=="]
