"""Reading a run's trace and the result tables, validated before any step reads them.

A trace (``trace.parquet``, one row per recorded update) must have the registry's columns in the
registry's order (a swap of two metric names is a different order), integer seeds and steps,
finite values within each column's bounds, the steps its run's ``summary.json`` says were
recorded, and its last row equal to that summary's final state. A trace or table with a
provenance record beside it must also still have the sha256 the record gives. Any failure is a
:class:`ResultFileError`: one line naming the file, the cause and what to do.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isotropy.intake import (
    MAX_READ_BYTES,
    MAX_TABLE_BYTES,
    FolderError,
    escaped,
    parquet_problem,
    read_inside,
    read_json,
)
from isotropy.metrics import registry
from isotropy.paths import CORRELATION_TABLES, COUNT_TABLES
from isotropy.provenance import read_record

REMAKE_TRACE = "re-make it: snakemake --forcerun optimize_embeddings (or delete it and re-run)"
REMAKE_TABLE = "re-make it: snakemake --forcerun <the rule that made it> (or delete it and re-run)"
# The value columns' bounds: loss and accuracy here, every metric from the registry.
STATE_BOUNDS = {"loss": (0.0, math.inf), "accuracy": (0.0, 1.0)}
# The columns each result table read by the verdicts must have, by file name (isotropy.paths').
COUNT_COLUMNS = ("encoder", "dataset", "items", "rows", "dim", "params")
TABLE_COLUMNS = dict.fromkeys(COUNT_TABLES.values(), COUNT_COLUMNS)
CORRELATION_COLUMNS = ("encoder", "dataset", "scope", "points", "pearson_r", "spearman_rho")
TABLE_COLUMNS |= dict.fromkeys(CORRELATION_TABLES.values(), CORRELATION_COLUMNS)


class ResultFileError(ValueError):
    """A trace or result table that cannot be used, said in one line with its file."""

    def __init__(self, path: str | os.PathLike, cause: str, remedy: str) -> None:
        super().__init__(f"{path}: {cause}; {remedy}")


def trace_columns() -> list[str]:
    """A trace's columns, in order: seed, step, then the registry's value columns."""
    return ["seed", "step", *registry.trace_columns()]


def _matches_record(path: Path, data: bytes) -> str | None:
    """Why ``path``'s ``data`` differ from its provenance record (None: match, or no record)."""
    try:
        if (record := read_record(path)) is None:  # through the door, capped
            return None
        entries = {Path(name).resolve(): entry for name, entry in record["outputs"].items()}
        entry = entries.get(path.resolve())
        recorded = None if entry is None else str(entry["sha256"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "its provenance record is damaged"
    if recorded is None:  # made in another folder: nothing here to compare with
        return None
    if hashlib.sha256(data).hexdigest() != recorded:
        return "it was modified after it was made (its sha256 differs from its provenance record)"
    return None


def evaluates(step: Any, updates: int, stride: int) -> Any:
    """Whether a run of ``updates`` updates with ``metric_stride`` ``stride`` evaluates the state
    after ``step`` updates (an int, or an array of them): step 0, every ``stride``-th update and
    the last. The one definition: the optimisation records these steps, a trace is checked to
    hold one row each, the costs count them."""
    return (step == 0) | (step % stride == 0) | (step == updates)


def evaluation_steps(updates: int, stride: int) -> list[int]:
    """The steps :func:`evaluates` picks, in order (a trace has one row each)."""
    return [step for step in range(updates + 1) if evaluates(step, updates, stride)]


def evaluation_count(updates: int, stride: int) -> int:
    """``len(evaluation_steps(updates, stride))`` without the list (a test holds the two equal):
    step 0, the ``updates // stride`` multiples of ``stride``, the last step if it is not one."""
    return 1 + updates // stride + (updates % stride != 0)


def _steps_problem(steps: np.ndarray, settings: Mapping) -> str | None:
    """Why ``steps`` (rising from 0) are not those the run's settings evaluate: counted first (a
    summary may claim 10**11 updates), then :func:`evaluates` over the whole array at once."""
    updates, stride = settings.get("updates"), settings.get("metric_stride")
    if not isinstance(updates, int) or not isinstance(stride, int) or stride < 1 or updates < 0:
        return None
    count, stride = evaluation_count(updates, stride), min(stride, max(updates, 1))  # same steps
    if len(steps) == count and steps[-1] == updates and evaluates(steps, updates, stride).all():
        return None
    return f"it has {len(steps)} rows, but its run recorded {count} steps (summary.json)"


def trace_problem(frame: pd.DataFrame, summary: Mapping | None = None) -> str | None:
    """Why ``frame`` is not a usable trace (None: it is); ``summary`` is its run's summary.json."""
    expected = trace_columns()
    if list(frame.columns[: len(expected)]) != expected:  # a study may add columns after these
        return f"its columns are {list(frame.columns)}, not {expected} (in this order)"
    if frame.empty:
        return "it has no rows"
    for name in ("seed", "step"):
        if not pd.api.types.is_integer_dtype(frame[name]):
            return f"column {name} is not integer"
    values = frame[list(frame.columns[2:])]
    if not all(pd.api.types.is_numeric_dtype(values[c]) for c in values):
        return "a value column is not numeric"
    for name in values:  # a column at a time: never a copy of the whole table
        if not np.isfinite(values[name].to_numpy(dtype=float)).all():
            return f"column {name} holds NaN or infinite values"
    bounds = {**STATE_BOUNDS, **{m.name: m.bounds for m in registry.trace_metrics()}}
    for name, (low, high) in bounds.items():
        if not frame[name].between(low, high).all():
            return f"column {name} leaves its range [{low:g}, {high:g}]"
    steps = frame["step"].to_numpy()
    if steps[0] != 0 or (steps[1:] <= steps[:-1]).any():
        return "its steps do not rise from 0"
    return _summary_problem(frame, summary) if summary is not None else None


def _summary_problem(frame: pd.DataFrame, summary: Mapping) -> str | None:
    """The trace against its run's summary.json: seed, recorded steps and final state."""
    settings = summary.get("settings") or {}
    seed = settings.get("seed", 0)
    if "seed" in settings and (not isinstance(seed, int) or (frame["seed"] != seed).any()):
        return f"its seed column is not the run's seed {settings['seed']}"
    if (problem := _steps_problem(frame["step"].to_numpy(), settings)) is not None:
        return problem
    final = summary.get("final") or {}
    last = frame.iloc[-1]
    differing = [
        name
        for name, value in final.items()
        if name in frame.columns
        and isinstance(value, (int, float))
        and not math.isclose(float(last[name]), float(value), rel_tol=1e-9, abs_tol=1e-12)
    ]
    if differing:
        columns = ", ".join(differing)
        return f"its last row differs from the run's final state in summary.json ({columns})"
    return None


def _read_checked(path: Path, read: Callable, what: str, remake: str, cap: int) -> pd.DataFrame:
    """``read`` of the file's bytes (through the door) once they match its record; a file that
    does not, or that ``read`` cannot parse, is a ResultFileError saying so."""
    try:
        data = read_inside(path.parent, path.name, cap)
    except FolderError as error:
        raise ResultFileError(path, _cause(path, error), remake) from None
    if (problem := _matches_record(path, data)) is not None:
        raise ResultFileError(path, problem, remake)
    try:
        return read(io.BytesIO(data))
    except (OSError, ValueError) as error:
        raise ResultFileError(path, f"not {what} ({error})", remake) from None


def _cause(path: Path, error: FolderError) -> str:
    return str(error).removeprefix(f"{escaped(str(path), 300)}: ")


def _parquet(data: io.BytesIO) -> pd.DataFrame:
    """The table, once its row groups show it fits the intake's row and memory caps."""
    if (problem := parquet_problem(data)) is not None:
        raise ValueError(problem)
    return pd.read_parquet(data)


def read_trace(path: str | os.PathLike) -> pd.DataFrame:
    """A run's trace, checked (:func:`trace_problem`, its summary.json beside it, its record)."""
    path = Path(path)
    frame = _read_checked(path, _parquet, "a readable parquet file", REMAKE_TRACE, MAX_READ_BYTES)
    summary = None
    if os.path.lexists(summary_path := path.with_name("summary.json")):
        try:  # through the door: a regular file, capped, nesting and values bounded
            summary = read_json(path.parent, summary_path.name)
        except FolderError as error:
            raise ResultFileError(summary_path, _cause(summary_path, error), REMAKE_TRACE) from None
        summary = summary if isinstance(summary, Mapping) else {}
    if (problem := trace_problem(frame, summary)) is not None:
        raise ResultFileError(path, problem, REMAKE_TRACE)
    return frame


def read_traces(paths: Iterable[str | Path], keys: Iterable[dict]) -> pd.DataFrame:
    """Every run's checked trace (:func:`read_trace`), tagged with its keys (e.g. encoder)."""
    frames = [read_trace(path).assign(**key) for path, key in zip(paths, keys)]
    if not frames:
        raise ValueError("no traces given")
    return pd.concat(frames, ignore_index=True)


def read_result_table(path: str | os.PathLike) -> pd.DataFrame:
    """A result table (CSV) the verdicts read: its record's sha256, parsed, rows, its columns."""
    path = Path(path)
    table = _read_checked(path, pd.read_csv, "a readable CSV table", REMAKE_TABLE, MAX_TABLE_BYTES)
    missing = [c for c in TABLE_COLUMNS.get(path.stem, ()) if c not in table.columns]
    if missing:
        raise ResultFileError(path, f"it lacks the columns {missing}", REMAKE_TABLE)
    if table.empty and path.stem in TABLE_COLUMNS:
        raise ResultFileError(path, "it has no rows", REMAKE_TABLE)
    return table
