"""The SemEval STS test sets of 2012-2016 (STS 2015 = SemEval-2015 task 2): sources, readers,
and their planning with and without a mirror."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from isotropy import sources
from isotropy.readers.sts import read_semeval_sts, read_sts
from isotropy.workflow import config as workflow_config
from isotropy.workflow import inputs as workflow_inputs

REPO_ROOT = Path(__file__).resolve().parents[1]
# Two subsets of STS 2015 in SentEval's layout; the second line of 'belief' has no gold score
# (SemEval released some pairs unscored; SentEval drops them).
SUBSETS = {
    "images": (["A dog runs.\tA dog is running.", "A cat.\tA car."], ["4.8", "0.4"]),
    "belief": (["I think so.\tI believe so.", "Maybe.\tNo idea.", "Yes.\tNo."], ["4.0", "", "1.2"]),
}


def write_senteval_layout(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for subset, (pairs, scores) in SUBSETS.items():
        (folder / f"STS.input.{subset}.txt").write_text("\n".join(pairs) + "\n", encoding="utf-8")
        (folder / f"STS.gs.{subset}.txt").write_text("\n".join(scores) + "\n", encoding="utf-8")


def expected_pairs() -> pd.DataFrame:
    rows = [
        ("I think so.", "I believe so.", 4.0),
        ("Yes.", "No.", 1.2),
        ("A dog runs.", "A dog is running.", 4.8),
        ("A cat.", "A car.", 0.4),
    ]  # subsets in file-name order (belief before images), unscored pairs left out
    return pd.DataFrame(rows, columns=["sentence1", "sentence2", "score"])


def test_senteval_layout_reads_as_the_sts_table_and_its_errors_name_the_file(tmp_path):
    """As a source of kind files leaves it (its download: tests/test_download.py)."""
    folder = tmp_path / "raw" / "STS15-en-test"
    write_senteval_layout(folder)
    pd.testing.assert_frame_equal(read_sts("sts15", "test", tmp_path / "raw"), expected_pairs())
    (folder / "STS.gs.images.txt").write_text("4.8\n", encoding="utf-8")
    said = "STS.input.images.txt has 2 pairs but STS.gs.images.txt 1"
    with pytest.raises(ValueError, match=said):
        read_semeval_sts(folder)
    (folder / "STS.gs.images.txt").unlink()
    with pytest.raises(FileNotFoundError, match="no gold file STS.gs.images.txt"):
        read_semeval_sts(folder)
    with pytest.raises(FileNotFoundError, match="expected one folder of STS.input.*found 0"):
        read_sts("sts15", "test", tmp_path / "empty")


def test_offline_run_plans_the_sets_out_with_one_line_each(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    config = workflow_config.load_config(
        [REPO_ROOT / "config.yaml", REPO_ROOT / "config" / "offline.yaml"]
    ).config
    config = workflow_config.check_loaded_config({**config, "mirror": str(tmp_path)})  # no STS
    lacking = {"sickr", "sts12", "sts13", "sts14", "sts15", "sts16"}
    assert set(workflow_inputs.unavailable_sts_datasets(config)) == lacking
    files = workflow_inputs.collected_sts_files(config)
    assert {path.split("/")[3] for path in files(None)} == {"stsb"}
    files(None)  # said once per data set, however often the input function runs
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 6 and all("is not in the data mirror" in line for line in said)
    config = config.model_copy(update={"mirror": None})  # every set planned (from the hub)
    assert workflow_inputs.unavailable_sts_datasets(config) == []
