"""The I-STAR grids run on a GPU (issue 69) are committed under docs/data/istar_gpu_*, and
docs/istar-gpu.md is rendered from it (tests/istar_gpu_page.py): these tests fail when the page
is stale or a committed file differs from its record's checksum (shown on planted edits), and
check that the device calls' folders combine into exactly the committed files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import istar_gpu_page as istar_gpu
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.covers("istar:fig5", "istar:fig6", "istar:fig7", "istar:finding")
def test_the_page_is_the_committed_grid_rendered():
    stale = f"{istar_gpu.DOC} is stale: run `python tests/istar_gpu_page.py`"
    assert (ROOT / istar_gpu.DOC).read_text(encoding="utf-8") == istar_gpu.page(ROOT), stale


@pytest.fixture
def docs(tmp_path):
    """A copy of the committed grids, their records and the main study's device record."""
    (tmp_path / istar_gpu.DATA).mkdir(parents=True)
    for name in (ROOT / istar_gpu.DATA).glob("istar_gpu_*"):
        shutil.copy(name, tmp_path / istar_gpu.DATA / name.name)
    shutil.copy(ROOT / istar_gpu.MAIN_RUN, tmp_path / istar_gpu.MAIN_RUN)
    return tmp_path


def test_a_planted_edit_is_caught(docs):
    page = istar_gpu.page(docs)
    (docs / istar_gpu.DOC).write_text(page.replace("| 0 | 0.8341", "| 0 | 0.8441"))
    assert (docs / istar_gpu.DOC).read_text(encoding="utf-8") != istar_gpu.page(docs)
    for prefix in (istar_gpu.SUBSET, istar_gpu.WHOLE):
        runs_file = istar_gpu.grid_files(prefix)[0]
        runs = pd.read_csv(docs / runs_file)
        runs.loc[0, "metric"] += 0.01
        runs.to_csv(docs / runs_file, index=False)
        with pytest.raises(ValueError, match=f"{runs_file.name} does not match the checksum"):
            istar_gpu.page(docs)
        shutil.copy(ROOT / runs_file, docs / runs_file)


@pytest.mark.parametrize("prefix", ["istar_gpu", "istar_gpu_whole"])
def test_the_device_calls_combine_into_the_committed_files(docs, tmp_path, prefix):
    runs_file, metrics_file, costs_file, tests_file, record_file = istar_gpu.grid_files(prefix)
    record = json.loads((docs / record_file).read_text(encoding="utf-8"))
    runs = pd.read_csv(docs / runs_file)
    metrics = (docs / metrics_file).read_text(encoding="utf-8").splitlines(keepends=True)
    calls = []
    for index, call in enumerate(record["calls"]):
        done = set(call["wall_seconds_per_run"])
        folder = tmp_path / f"call{index}"
        folder.mkdir()
        paths = [
            f"results/istar/miniLM/sst2/{r.regulariser}_{r['lambda']:g}/seed{r.seed}/metrics.json"
            for _, r in runs.iterrows()
        ]
        mine = [path in done for path in paths]
        runs[mine].to_csv(folder / "runs.csv", index=False)
        lines = [line for line in metrics if _run_path(line) in done]
        (folder / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
        (folder / "record.json").write_text(json.dumps(call), encoding="utf-8")
        shutil.copy(docs / costs_file, folder / "costs.csv")
        calls.append(folder)
    if (docs / tests_file).is_file():
        shutil.copy(docs / tests_file, calls[-1] / "cuda_tests.log")
    out = tmp_path / "out"
    shutil.copytree(docs / istar_gpu.DATA, out / istar_gpu.DATA)
    for name in record["files_sha256"]:
        (out / name).unlink()
    combined = istar_gpu.combine(calls, out, prefix)
    assert combined["files_sha256"] == record["files_sha256"]
    assert combined["what"] == record["what"]
    assert istar_gpu.page(out) == istar_gpu.page(ROOT)


def _run_path(line: str) -> str:
    run = json.loads(line)
    lam = float(run["lambda"])
    return f"results/istar/miniLM/sst2/{run['regulariser']}_{lam:g}/seed{run['seed']}/metrics.json"
