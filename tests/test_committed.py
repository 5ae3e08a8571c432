"""Every committed run (isotropy.committed): its files match their checksums and its pages are
what they render, failing on a planted edit of each; and the GLUE study's copy."""

from __future__ import annotations

import json
import os
import shutil
from hashlib import sha256
from pathlib import Path

import pandas as pd
import pytest
import yaml

from isotropy import paths
from isotropy.committed import REGISTRY, glue, optimisation
from isotropy.committed.__main__ import main as command
from isotropy.committed.record import CommittedRun
from isotropy.io import markdown_table
from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "results"
RUNS = [pytest.param(run, id=run.name) for run in REGISTRY]


def _needs_commit(run: CommittedRun) -> None:
    if not run.committed(ROOT):
        pytest.skip(f"{run.name}: no committed run yet ({run.records[0].path})")


@pytest.mark.parametrize("run", RUNS)
def test_every_committed_file_matches_its_record_and_every_page_is_fresh(run):
    _needs_commit(run)
    assert run.problems(ROOT) == []
    # coverage reads a page's tables from Page.tables: a table written by hand, it would not see
    for page in run.pages:
        shown, tables = page.render(ROOT), page.tables(ROOT)
        assert sum(line.startswith("|---") for line in shown.splitlines()) == len(tables)
        assert all(markdown_table(table) in shown for table in tables), page.path


def _copy_of_the_docs(tmp_path: Path) -> Path:
    """The committed files and pages in a folder of their own (the README too, and the tests and
    config the coverage page reads)."""
    for folder in ("docs", "tests", "config"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__py*"))
    for name in ("README.md", "config.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("run", RUNS)
def test_a_planted_edit_of_a_committed_file_or_a_page_is_told(run, tmp_path):
    _needs_commit(run)
    root = _copy_of_the_docs(tmp_path)
    page = root / run.pages[0].path
    text = page.read_text(encoding="utf-8")
    end = (run.pages[0].block or ("", ""))[1]  # an edit inside the generated block, or a table's
    edited = text.replace(end, f"a hand edit\n{end}", 1) if end else text.replace(" | ", " |  ", 1)
    page.write_text(edited, encoding="utf-8")
    assert run.problems(root) == [
        f"{run.name}: {run.pages[0].path} is stale: run "
        f"`python -m isotropy.committed write {run.name}`"
    ]
    page.write_text(text, encoding="utf-8")
    assert run.problems(root) == []
    for record in run.records:
        committed = root / record.files[0]
        committed.write_bytes(committed.read_bytes() + b"\n")
        (told,) = run.problems(root)
        assert f"{record.files[0]} does not match the checksum {record.path}" in told
        shutil.copy(ROOT / record.files[0], committed)


# --- appendix A's committed run, followed on the golden tiny run's GLUE outputs -----------
@pytest.fixture(scope="module")
def glue_results(tmp_path_factory) -> Path:
    """The golden tiny run's GLUE study laid out as a run's results/glue, and its effective
    configuration (config.yaml with tests/config/tiny.yaml's glue section)."""
    folder = tmp_path_factory.mktemp("glue")
    results = folder / "work" / "results" / "glue"
    for trace in (GOLDEN / "glue").glob("*/*/seed*/trace.csv"):
        target = results / trace.relative_to(GOLDEN / "glue").with_suffix(".parquet")
        target.parent.mkdir(parents=True, exist_ok=True)
        pd.read_csv(trace).to_parquet(target)
        provenance = {
            "code": {"git_commit": "0" * 40, "dirty": False},
            "outputs": {},
            "packages": {"torch": "2.13.0+cpu", "transformers": "5"},
            "device": "cpu:x86_64",
            "hardware": {"cpu_count": 2},
            "inputs": {f"resources/data/{trace.parts[-3]}.parquet": {"sha256": trace.parts[-3]}},
        }
        target.with_name("trace.parquet.provenance.json").write_text(json.dumps(provenance))
    for name in ("table2.csv", "table3.csv"):
        shutil.copyfile(GOLDEN / "glue" / name, results / name)
    config = load_config([str(ROOT / "config.yaml"), str(ROOT / "tests/config/tiny.yaml")]).config
    (folder / "effective.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (folder / "facts.json").write_text(json.dumps({"wall": "2 min", "machine": "2 cores"}))
    return folder


@pytest.fixture
def copied(glue_results, tmp_path, monkeypatch) -> Path:
    """A repository folder into which the golden GLUE run was copied by the one command."""
    monkeypatch.delenv("ISOTROPY_MIRROR", raising=False)
    root = tmp_path / "repo"
    (root / "docs" / "data").mkdir(parents=True)
    assert not glue.COMMITTED.committed(root)
    argv = ["--root", str(root), "copy", "glue", str(glue_results / "work/results/glue")]
    argv += ["--effective-config", str(glue_results / "effective.yaml")]
    assert command([*argv, "--facts", str(glue_results / "facts.json")]) == 0
    return root


def test_the_glue_copy_is_checked_fresh_and_judged(copied, capsys):
    assert command(["--root", str(copied), "check", "glue"]) == 0
    assert "1 committed runs: every file and page fresh" in capsys.readouterr().out
    record = json.loads((copied / glue.COMMITTED.records[0].path).read_text(encoding="utf-8"))
    assert set(record["files_sha256"]) == {str(f) for f in glue.COMMITTED.records[0].files}
    assert record["code_commit"] == "0" * 40 and record["device"][0] == "cpu:x86_64"
    assert record["data_sha256"] == {f"resources/data/{t}.parquet": t for t in ("rte", "wnli")}
    assert record["packages"]["torch"] == "2.13.0+cpu" and record["run"]["wall"] == "2 min"
    assert record["config"]["glue"]["tasks"] == ["rte", "wnli"]
    assert set(record["config"]["encoders"]) == {"miniLM"}
    traces = (GOLDEN / "glue").glob("*/*/seed*/trace.csv")
    assert set(record["sources_sha256"]) == {
        f"results/glue/{t.relative_to(GOLDEN / 'glue').with_suffix('.parquet')}" for t in traces
    }
    page = (copied / glue.DOC).read_text(encoding="utf-8")
    for heading in ("Table 3's counterpart", "Figure 4's counterpart", "Table 2's counterpart"):
        assert f"## {heading}" in page
    # the tiny run's own verdicts: its 8 updates are not appendix A's 250, so the protocol gate
    # leaves every claim and correlation unjudged (IsoScore still rises 0.0950 → 0.0957)
    assert "| miniLM/rte | 0 | +0.0950 | +0.0957 |" in page
    assert f"| miniLM/rte |{' ➖ not comparable |' * 4}" in page
    assert "| miniLM/rte | +0.281; +0.281 | **not comparable** | +0.500; +0.500 |" in page
    assert "| miniLM/wnli | items | 635 | 80 | **differs** |" in page
    assert "- 5: all-distilroberta-v1 has no offline copy" in page
    # every trace value round-trips (the main study's copy is the same code)
    traces = optimisation.committed_tables("glue", copied)["glue_traces"]
    for trace in (GOLDEN / "glue").glob("*/*/seed*/trace.csv"):
        original = pd.read_csv(trace)
        key = (trace.parts[-4], trace.parts[-3], original["seed"].iloc[0])
        ours = traces[traces[["encoder", "dataset", "seed"]].apply(tuple, axis=1) == key]
        ours = ours[original.columns].reset_index(drop=True)
        pd.testing.assert_frame_equal(ours, original, check_exact=True)


def test_the_committed_claims_are_what_the_verdict_code_judges_and_an_edit_fails(copied, capsys):
    committed = (copied / glue.COMMITTED.records[0].files[3]).read_text(encoding="utf-8")
    assert optimisation.committed_claims("glue", copied).to_csv(index=False) == committed
    traces = copied / glue.COMMITTED.records[0].files[2]
    planted = pd.read_csv(traces)
    planted.loc[0, "isoscore"] += 0.5
    planted.to_csv(traces, index=False)  # gzipped, as its name says
    assert command(["--root", str(copied), "check", "glue"]) == 1
    told = capsys.readouterr().out
    assert "glue_traces.csv.gz does not match the checksum docs/data/glue_run.json" in told


@pytest.mark.slow
def test_the_tiny_runs_glue_study_is_copied(tiny_run, tmp_path):
    """The tiny workflow run's own GLUE outputs, provenance records and configuration (a planted
    edit: test_the_committed_claims_are_what_the_verdict_code_judges_and_an_edit_fails)."""
    workdir, _, _ = tiny_run
    root = tmp_path / "repo"
    (root / "docs" / "data").mkdir(parents=True)
    (effective,) = sorted((workdir / "logs" / "effective-config").glob("*.yaml"))[:1]
    argv = ["--root", str(root), "copy", "glue", str(workdir / "results" / "glue")]
    assert command([*argv, "--effective-config", str(effective)]) == 0
    assert command(["--root", str(root), "check", "glue"]) == 0
    assert "| miniLM/rte | 0 | +0.0950 | +0.0957 |" in (root / glue.DOC).read_text(encoding="utf-8")
    record = json.loads((root / glue.COMMITTED.records[0].path).read_text())
    for data in map(paths.dataset_table, ("rte", "wnli")):  # as the traces' records name them
        assert record["data_sha256"][data] == sha256((workdir / data).read_bytes()).hexdigest()


def test_a_copy_without_a_finished_run_or_its_page_markers_writes_nothing(
    tmp_path, glue_results, capsys
):
    (tmp_path / "docs/data").mkdir(parents=True)  # a repository with no committed run yet
    root, elsewhere = ["--root", str(tmp_path)], ["--root", str(tmp_path / "docs")]
    copy = ["copy", "glue", str(tmp_path)]
    effective = ["--effective-config", str(glue_results / "effective.yaml")]
    (link := tmp_path / "facts.json").symlink_to(glue_results / "effective.yaml")  # was followed
    for argv in (
        [*root, *copy, *effective],
        [*root, *copy, "--facts", str(tmp_path)],
        [*root, *copy, "--facts", str(link)],
        [*elsewhere, "check"],
        [*elsewhere, *copy, *effective],
    ):
        with pytest.raises(SystemExit, match="2"):  # one line, never a traceback
            command(argv)
    said = capsys.readouterr().err
    assert "table2.csv is missing" in said and f"--facts: {tmp_path}: is a folder" in said
    assert f"--facts: {link}: cannot be opened (a link on its path)" in said
    assert said.count(f"--root {tmp_path / 'docs'} is not this repository: no docs/data") == 2
    extensions = next(run for run in REGISTRY if run.name == "extensions")
    (tmp_path / "docs/extensions.md").write_text("no markers\n", encoding="utf-8")
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("question,setup,item,quantity,seed,value\n", encoding="utf-8")
    with pytest.raises(ValueError, match="markers"):
        extensions.copy_in(tmp_path, [seeds], {"run": "a test"}, None)
    assert not any((tmp_path / "docs/data").iterdir())


def _plant(folder: Path, cause: str, monkeypatch) -> None:
    results, effective = folder / "work/results/glue", folder / "effective.yaml"
    if cause == "render":  # a page that fails once the data is copied (a preview as the study)
        monkeypatch.setattr(glue, "_table2", lambda _: int("a preview"))
    elif cause == "data":  # WNLI's trace says it read another version of RTE's data set
        record = next(results.glob("*/wnli/*/*.json"))
        record.write_text(record.read_text().replace("wnli.", "rte."))
    elif cause == "fifo":
        (trace := next(results.glob("*/*/seed*/trace.parquet"))).unlink()
        os.mkfifo(trace)
    elif cause == "link":
        (results / "table2.csv").unlink()
        (results / "table2.csv").symlink_to(folder / "facts.json")
    else:
        text = {"null": "null\n", "list": "- 1\n", "bad": "a: [b\n"}.get(cause)
        effective.write_text(text or effective.read_text() + "glue: {}\n", encoding="utf-8")


@pytest.mark.parametrize(
    "cause, said",
    [("fifo", "is a pipe (FIFO), not a file"), ("link", "table2.csv: cannot be opened (a link")]
    + [("null", "yaml: it holds a NoneType, not a mapping"), ("list", "it holds a list, not a")]
    + [("bad", "effective.yaml: it is not plain YAML"), ("twice", "gives the key 'glue' again")]
    + [("render", "invalid literal for int() with base 10: 'a preview'")]
    + [("data", "the run's files read two versions of resources/data/rte.parquet")],
)
def test_a_hostile_run_is_one_line_and_copies_nothing(
    cause, said, glue_results, tmp_path, capsys, monkeypatch
):
    folder = shutil.copytree(glue_results, tmp_path / "run", symlinks=True)
    _plant(folder, cause, monkeypatch)
    (root := tmp_path / "repo" / "docs" / "data").mkdir(parents=True)
    argv = ["--root", str(root.parents[1]), "copy", "glue", str(folder / "work/results/glue")]
    with pytest.raises(SystemExit, match="2"):
        command([*argv, "--effective-config", str(folder / "effective.yaml")])
    assert said in capsys.readouterr().err and not any(root.iterdir())
    assert os.listdir(root.parents[1]) == ["docs"]  # no staging left behind


@pytest.mark.parametrize(
    "named, said",
    [("/dev/zero", "names a path outside"), ("../../x.csv", "names a path outside")]
    + [("docs/data/pipe", "is a pipe (FIFO), not a file"), (None, "nested deeper than 64")]
    + [("", "lists [], the study names ['docs/data/extensions_seeds.csv']")],
)
def test_a_record_naming_what_is_no_committed_file_is_one_line(named, said, tmp_path):
    _needs_commit(run := next(run for run in REGISTRY if run.name == "extensions"))
    os.mkfifo((root := _copy_of_the_docs(tmp_path)) / "docs/data/pipe")
    files = {named: "0"} if named else {}
    record = "[" * 10**5 + "]" * 10**5 if named is None else json.dumps({"files_sha256": files})
    (root / run.records[0].path).write_text(record, encoding="utf-8")
    (told,) = run.problems(root)
    assert said in told and "\n" not in told
