""":func:`measure`: every measurement of this run (:mod:`isotropy.verdicts.measurements`), and for
rules ``check_claims`` and ``compare_with_papers`` (rules/provenance.smk) the result tables
loaded for it and a preview's rows stamped. Their inputs are
:func:`isotropy.workflow.inputs.workflow_inputs`, the configuration they read
:func:`isotropy.workflow.inputs.config_subset`."""

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
    """Every measurement of this run. ``tables``: result tables by input name, an absent name
    meaning that table is not part of the run; ``measures`` (what the studies' records measure,
    :func:`isotropy.studies.table_measures`): input name, or names read together -> (each of
    those tables, None where absent, config, stand-ins) -> rows, called when one is present."""
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
    """The result tables named by :func:`isotropy.workflow.inputs.workflow_inputs`, read (traces
    tagged with their keys)."""
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
    """A verdict table (claims or paper comparison) measured on a preview's results as the main
    study's: its main-study rows only, evidence pointing at the preview's folder, and the preview's
    stamp in a first column ``preview`` on every row (as the preview's own tables have it)."""
    rows = table[table["study"] == "main"].reset_index(drop=True)
    if "evidence" in rows:
        main, preview = paths.study_file("", "main"), paths.study_file("", "preview")
        rows["evidence"] = rows["evidence"].astype(str).str.replace(main, preview, regex=False)
    rows.insert(0, "preview", stamp)
    return rows
