"""Provenance records: what record_step / build_record write, checked against hashlib and the OS."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

import isotropy.io
from isotropy import provenance
from isotropy.intake import RECORD_SUFFIX as SUFFIX
from isotropy.provenance import build_record, read_record, record_path, record_step


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("data").mkdir()
    Path("data/a.txt").write_text("alpha\n")
    Path("data/sub").mkdir()
    Path("data/sub/b.bin").write_bytes(bytes(range(256)) * 10)
    Path("out.csv").write_text("x\n1\n")
    Path("script.py").write_text("print('made out.csv')\n")
    return tmp_path


def test_build_record_hashes_every_input_and_output(files):
    record = build_record(
        rule="make",
        inputs=["data"],
        outputs=["out.csv"],
        params={"k": 3},
        wildcards={"seed": "0"},
        config={"main": {"seeds": [0, 1]}},
        script="script.py",
        seeds=[0],
        device=SimpleNamespace(type="cpu"),  # as a torch.device reads
    )
    # A folder input stands for every file inside it.
    assert set(record["inputs"]) == {"data/a.txt", "data/sub/b.bin"}
    for name, entry in {**record["inputs"], **record["outputs"]}.items():
        assert entry["sha256"] == sha(Path(name))
        assert entry["bytes"] == os.path.getsize(name)
        assert entry["mtime"] == os.stat(name).st_mtime
    assert (
        record["rule"] == "make"
        and record["params"] == {"k": 3}
        and record["wildcards"] == {"seed": "0"}
    )
    assert record["seeds"] == [0] and record["config"] == {"main": {"seeds": [0, 1]}}
    assert record["device"].startswith("cpu:")
    assert record["code"]["script_sha256"] == sha(Path("script.py"))
    assert record["started"] <= record["finished"]
    json.dumps(record)  # plain JSON throughout
    modules = record["code"]["modules"]
    assert modules["isotropy.io"] == sha(Path(isotropy.io.__file__))
    # Modules that only log or write records do not count as code of the result.
    assert "isotropy.provenance" not in modules and "isotropy.logs" not in modules
    assert record["record_version"] == provenance.RECORD_VERSION
    assert record["packages"]["pandas"] == __import__("pandas").__version__
    hardware = record["hardware"]
    assert hardware["cpu_count"] == os.cpu_count() and hardware["cpu"]
    names = re.findall(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
    assert not names or hardware["cpu"] == names[0].strip()


class Params(dict):
    """Snakemake's params/wildcards objects offer items(); a dict is the same for record_step."""


def _job(**fields) -> SimpleNamespace:
    """A job reading data/a.txt and writing out.csv and second.json, as Snakemake hands it."""
    Path("second.json").write_text("{}")
    job = dict(rule="make", input=["data/a.txt"], output=["out.csv", "second.json"])
    job |= dict(params=Params(), wildcards=Params(), config={}, scriptdir=None)
    return SimpleNamespace(**(job | fields))


def test_record_step_writes_a_record_beside_every_output(files):
    params, wildcards = Params(k=1, nested={"a": (1, 2)}), Params(seed="3")
    snakemake = _job(params=params, wildcards=wildcards, config={"device": "cpu"})
    record = record_step(snakemake, seeds=[3], extra={"note": "test"})
    for output in ("out.csv", "second.json"):
        assert record_path(output) == Path(output + SUFFIX)
        assert read_record(output) == json.loads(json.dumps(record, sort_keys=True, default=str))
    assert read_record("data/a.txt") is None  # inputs get no record
    assert record["params"] == {"k": 1, "nested": {"a": [1, 2]}} and record["extra"] == {
        "note": "test"
    }
    assert sorted(Path(".").rglob(f"*{SUFFIX}")) == [
        Path(f"out.csv{SUFFIX}"),
        Path(f"second.json{SUFFIX}"),
    ]


def test_every_workflow_script_records_provenance():
    """Each step must leave a record beside its outputs, or the audit cannot trace it."""
    scripts = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))
    # A raw download's and an assembled model's manifest.json is their record; the audit writes no
    # result.
    # sensitivity_partial.py is no workflow step: run by hand on a grid that has not finished, it
    # writes provisional tables to results/sensitivity/partial/ that name the cells not yet run.
    exempt = {
        "download_source.py",
        "assemble_model.py",
        "audit_results.py",
        "sensitivity_partial.py",
    }
    missing = [
        s.name
        for s in scripts
        if s.name not in exempt and not re.search(r"record_step\(\s*snakemake\b", s.read_text())
    ]
    assert not missing, f"scripts without record_step: {missing}"


# ---------------------------------------------------------------------------------------------
# Never a record without its file


@pytest.mark.parametrize(
    "size, said", [(2048, "2,048 bytes written before it stopped"), (0, "nothing written yet")]
)
def test_a_full_disk_while_writing_a_result_names_it_and_keeps_nothing(files, size, said):
    from isotropy.io import DiskFullError, atomic_path

    with pytest.raises(DiskFullError) as info:
        with atomic_path("results/table.csv") as tmp:
            tmp.write_bytes(b"x" * size)
            raise OSError(errno.ENOSPC, "No space left on device")
    message = str(info.value)  # never "0 bytes needed"; one line
    assert message.startswith(
        f"no space left on the device of results/table.csv while writing it ({said}, "
    )
    assert "\n" not in message and message.endswith("and run again")
    assert list(Path("results").iterdir()) == []


def test_a_record_that_cannot_be_written_takes_its_twins_with_it(files, monkeypatch):
    snakemake = _job()
    real = provenance.write_json

    def full_on_second(path, data):
        if str(path).startswith("second.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(provenance, "write_json", full_on_second)
    with pytest.raises(OSError):
        record_step(snakemake)
    assert list(Path(".").rglob(f"*{SUFFIX}")) == []


def test_a_job_starting_removes_the_records_of_the_outputs_it_re_makes(files):
    """Snakemake removes a job's outputs before it runs; their records went nowhere (orphans)."""
    import logging

    from isotropy.logs import configure_from_snakemake

    Path("out.csv.provenance.json").write_text("{}")  # its file removed by Snakemake
    Path("other.csv.provenance.json").write_text("{}")
    try:
        configure_from_snakemake(SimpleNamespace(log=[], output=["out.csv"]))
    finally:
        logging.getLogger().handlers.clear()
    assert not Path("out.csv.provenance.json").exists()
    assert Path("other.csv.provenance.json").exists()
