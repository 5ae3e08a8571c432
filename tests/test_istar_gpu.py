"""The device calls' folders of the committed I-STAR grids combine into exactly the committed
files (isotropy.committed.istar_gpu; freshness: tests/test_committed.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from isotropy.committed import istar_gpu

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def docs(tmp_path):
    """A copy of the committed grids, their records and the main study's device record."""
    (tmp_path / istar_gpu.DATA).mkdir(parents=True)
    for name in (ROOT / istar_gpu.DATA).glob("istar_gpu_*"):
        shutil.copy(name, tmp_path / istar_gpu.DATA / name.name)
    shutil.copy(ROOT / istar_gpu.MAIN_RUN, tmp_path / istar_gpu.MAIN_RUN)
    return tmp_path


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
        mine = [_run_path(run) in done for run in runs.to_dict("records")]
        runs[mine].to_csv(folder / "runs.csv", index=False)
        lines = [line for line in metrics if _run_path(json.loads(line)) in done]
        (folder / "metrics.jsonl").write_text("".join(lines), encoding="utf-8")
        (folder / "record.json").write_text(json.dumps(call), encoding="utf-8")
        shutil.copy(docs / costs_file, folder / "costs.csv")
        calls.append(folder)
    if (docs / tests_file).is_file():
        shutil.copy(docs / tests_file, calls[-1] / "cuda_tests.log")
    out = tmp_path / "out"
    shutil.copytree(docs / istar_gpu.DATA, out / istar_gpu.DATA)
    for name in [*record["files_sha256"], record_file]:
        (out / name).unlink()
    istar_gpu.combine(calls[:1], out, prefix)  # then a later copy adds the calls after it
    combined = istar_gpu.combine(calls[1:], out, prefix)
    assert combined["files_sha256"] == record["files_sha256"]
    assert combined["what"] == record["what"]
    assert istar_gpu.COMMITTED.pages[0].render(out) == istar_gpu.COMMITTED.pages[0].render(ROOT)


def _run_path(run: dict) -> str:
    lam = float(run["lambda"])
    return f"results/istar/miniLM/sst2/{run['regulariser']}_{lam:g}/seed{run['seed']}/metrics.json"
