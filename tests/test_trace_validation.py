"""Corrupted traces and tables are refused before any table, figure or verdict uses them: one
line naming the file, the cause and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isotropy.io import write_json
from isotropy.provenance import build_record, record_path
from isotropy.traces import ResultFileError, read_result_table, read_trace, trace_columns
from isotropy.verdicts.measurements import load_tables

UPDATES = 12


def _run(folder: Path, *, record: bool = True) -> Path:
    """A run folder with a 13-row trace (updates 0..12) and the summary.json beside it."""
    folder.mkdir(parents=True)
    steps = np.arange(UPDATES + 1)
    frame = pd.DataFrame(
        {
            "seed": 0,
            "step": steps,
            "loss": 0.7 - 0.01 * steps,
            "accuracy": np.linspace(0.5, 1.0, len(steps)),
            "isoscore": 0.18 - 0.004 * steps,
            "silhouette": 0.007 + 0.005 * steps,
        }
    )
    assert list(frame.columns) == trace_columns()
    trace = folder / "trace.parquet"
    frame.to_parquet(trace)
    final = frame.iloc[-1].to_dict()
    summary = {
        "settings": {"seed": 0, "updates": UPDATES, "metric_stride": 1},
        "final": {
            k: (int(v) if k in ("seed", "step") else v) for k, v in final.items() if k != "seed"
        },
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    if record:
        write_record(trace)
    return trace


def write_record(trace: Path) -> None:
    """The trace's provenance record, as the optimisation writes it (also a forger's step)."""
    outputs = [str(trace), str(trace.parent / "summary.json")]
    write_json(
        record_path(trace), build_record(rule="optimize_embeddings", inputs=[], outputs=outputs)
    )


@pytest.fixture
def trace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return _run(Path("results/main/miniLM/polarity/seed0"))


def _refused(trace: Path, *phrases: str) -> str:
    with pytest.raises(ResultFileError) as info:
        read_trace(trace)
    message = str(info.value)
    assert message.startswith(f"{trace}: ") and "\n" not in message and "re-make it" in message
    for phrase in phrases:
        assert phrase in message, message
    return message


def test_swapped_metric_names_are_refused(trace):
    assert len(read_trace(trace)) == UPDATES + 1  # sound before the swap
    frame = pd.read_parquet(trace).rename(
        columns={"isoscore": "silhouette", "silhouette": "isoscore"}
    )
    record_path(trace).unlink()  # even without its record: the registry's column order
    frame.to_parquet(trace)
    _refused(trace, "its columns are", "in this order")


def test_swapped_metric_values_are_refused(trace):
    frame = pd.read_parquet(trace)
    frame[["isoscore", "silhouette"]] = frame[["silhouette", "isoscore"]].to_numpy()
    frame.to_parquet(trace)
    _refused(trace, "sha256 differs from its provenance record")
    record_path(trace).unlink()  # without its record: its summary's final state disagrees
    _refused(trace, "last row differs from the run's final state", "isoscore", "silhouette")


@pytest.mark.parametrize(
    "column, value, phrase",
    [
        ("silhouette", np.nan, "column silhouette holds NaN"),
        ("loss", np.inf, "column loss holds NaN or infinite"),
        ("isoscore", 1.5, "column isoscore leaves its range [0, 1]"),
        ("accuracy", -0.1, "column accuracy leaves its range [0, 1]"),
        ("isoscore", "high", "not numeric"),
    ],
)
def test_bad_values_are_refused(trace, column, value, phrase):
    record_path(trace).unlink()
    frame = pd.read_parquet(trace)
    if isinstance(value, str):
        frame[column] = frame[column].astype(str)
    frame.loc[3, column] = value
    frame.to_parquet(trace)
    _refused(trace, phrase)


def test_an_unreadable_trace_is_refused(trace):
    record_path(trace).unlink()
    trace.write_bytes(b"PAR1 not really")
    _refused(trace, "not a readable parquet file")


def test_the_verdicts_refuse_a_corrupted_trace_and_table(trace, tmp_path):
    keys = {"main": [{"encoder": "miniLM", "dataset": "polarity", "seed": 0}]}
    assert len(load_tables({"main_traces": [str(trace)]}, keys)["main_traces"]) == UPDATES + 1
    record_path(trace).unlink()
    pd.read_parquet(trace).iloc[:6].to_parquet(trace)
    with pytest.raises(ResultFileError, match="6 rows"):
        load_tables({"main_traces": [str(trace)]}, keys)
    table = Path("results/main/correlations.csv")
    table.write_text("encoder,dataset,scope,points,spearman_rho\nminiLM,polarity,all,13,0.9\n")
    said = r"correlations.csv: it lacks the columns \['pearson_r'\]"
    with pytest.raises(ResultFileError, match=said):
        load_tables({"main_correlations": str(table)}, keys)


def test_a_result_table_edited_after_its_record_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = Path("results/main/table1.csv")
    table.parent.mkdir(parents=True)
    table.write_text("encoder,dataset,items,rows,dim,params\nminiLM,polarity,160,160,384,62208\n")
    write_json(record_path(table), build_record(rule="tabulate", inputs=[], outputs=[str(table)]))
    assert len(read_result_table(table)) == 1
    table.write_text("encoder,dataset,items,rows,dim,params\nminiLM,polarity,9,9,384,62208\n")
    with pytest.raises(ResultFileError, match="sha256 differs from its provenance record"):
        read_result_table(table)
