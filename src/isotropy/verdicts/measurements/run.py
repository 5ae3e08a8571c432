"""Every measurement of this run, for rules ``check_claims`` and ``compare_with_papers``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.standins import StandIns
from isotropy.traces import read_result_table, read_traces
from isotropy.verdicts.measurements import COLUMNS


def measure(
    tables: Mapping[str, pd.DataFrame | None],
    config: Mapping[str, Any],
    stand: StandIns,
    measures: Mapping[str | tuple[str, ...], Callable[..., list[dict[str, Any]]]],
) -> pd.DataFrame:
    """Every measurement of this run (``tables``: by input name; ``measures``: input name or
    names -> (their tables, None where absent, config, stand-ins) -> rows)."""
    rows: list[dict[str, Any]] = []
    for names, measure_tables in measures.items():
        read = [tables.get(name) for name in ((names,) if isinstance(names, str) else names)]
        if any(table is not None for table in read):
            rows += measure_tables(*read, config, stand)
    return pd.DataFrame(rows, columns=COLUMNS)


def load_tables(
    inputs: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]],
    run_keys: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, pd.DataFrame]:
    """The result tables of ``inputs``, read (traces tagged with their keys)."""
    tables = {}
    for name, value in inputs.items():
        if name.endswith("_traces"):
            study = name.removesuffix("_traces")
            keys = run_keys[study]
            files = [str(value)] if isinstance(value, (str, os.PathLike)) else list(map(str, value))
            if len(keys) != len(files):
                raise ValueError(f"{study}: {len(keys)} run keys for {len(files)} traces")
            tables[name] = read_traces(
                files, [{k: v for k, v in key.items() if k != "seed"} for key in keys]
            )
        elif name not in ("published", "protocol_effects"):  # configuration, not results
            tables[name] = read_result_table(Path(str(value)))
    return tables


def as_preview(table: pd.DataFrame, stamp: str) -> pd.DataFrame:
    """A verdict table of a preview: its main-study rows, evidence in the preview's folder, the
    stamp in a first column ``preview``."""
    rows = table[table["study"] == "main"].reset_index(drop=True)
    if "evidence" in rows:
        main, preview = paths.study_file("", "main"), paths.study_file("", "preview")
        rows["evidence"] = rows["evidence"].astype(str).str.replace(main, preview, regex=False)
    rows.insert(0, "preview", stamp)
    return rows
