"""Rules ``check_claims`` and ``compare_with_papers`` (rules/provenance.smk): loading the result
tables for :func:`measurements.measure`. Their inputs are
:func:`isotropy.workflow.verdict_inputs.workflow_inputs`, the configuration they read
:func:`isotropy.workflow.verdict_inputs.config_subset`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import paths
from isotropy.traces import read_result_table, read_traces


def load_tables(
    inputs: Mapping[str, str | os.PathLike | Sequence[str | os.PathLike]],
    run_keys: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, pd.DataFrame]:
    """The result tables named by :func:`isotropy.workflow.verdict_inputs.workflow_inputs`, read (traces
    tagged with their keys)."""
    tables = {}
    for name, value in inputs.items():
        if name.endswith("_traces"):
            study = name.removesuffix("_traces")
            keys = run_keys[study]
            files = [str(v) for v in value]
            if len(keys) != len(files):
                raise ValueError(f"{study}: {len(keys)} run keys for {len(files)} traces")
            tables[name] = read_traces(files, [{k: v for k, v in key.items() if k != "seed"} for key in keys])  # fmt: skip
        elif name != "published":
            tables[name] = read_result_table(Path(value))
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
