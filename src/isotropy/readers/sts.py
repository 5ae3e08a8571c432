"""The STS sets of the geometry study (Rajaee & Pilehvar): STS-B, SICK-R and the SemEval STS
tasks of 2012-2016, pairs with gold scores, each split read from its source ``hf_<sts>_<split>``:
the hub's ``data.parquet`` (MTEB's copies), SemEval-2014's own SICK file, or the mirror's
original files (STS-B tsv, SICK.txt, the SemEval test sets in SentEval's layout).
"""

from __future__ import annotations

import csv
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd

from isotropy.readers.glue import GLUE_SPLIT_FILES
from isotropy.readers.registry import raw_file
from isotropy.sources import HUB_FILE

log = logging.getLogger(__name__)

_SICK_FILE = "SICK.txt"  # SICK from a mirror: every split in one file


SEMEVAL_STS = ("sts12", "sts13", "sts14", "sts15", "sts16")
STS_DATASETS = ("stsb", "sickr", *SEMEVAL_STS)
# Data sets a mirror may lack: planned out with one line instead of failing (all but STS-B).
OPTIONAL_STS = tuple(name for name in STS_DATASETS if name != "stsb")


def sts_source(name: str, split: str) -> str:
    """The source of one split of an STS set."""
    return f"hf_{name}_{split}"


def read_semeval_sts(folder: str | os.PathLike) -> pd.DataFrame:
    """Every scored pair of a SemEval STS test set in SentEval's layout: for each subset,
    ``STS.input.<subset>.txt`` (sentence1 TAB sentence2) and ``STS.gs.<subset>.txt`` (a gold
    score a line; an empty one is left out, as SentEval does)."""
    folder = Path(folder)
    frames = []
    for path in sorted(folder.glob("STS.input.*.txt")):
        subset = path.name.removeprefix("STS.input.").removesuffix(".txt")
        gold_path = folder / f"STS.gs.{subset}.txt"
        if not gold_path.is_file():
            raise FileNotFoundError(f"{path} has no gold file {gold_path.name} beside it")
        lines = path.read_text(encoding="utf-8").splitlines()
        scores = gold_path.read_text(encoding="utf-8").splitlines()
        if len(lines) != len(scores):
            raise ValueError(
                f"{path.name} has {len(lines)} pairs but {gold_path.name} {len(scores)} scores"
            )
        rows = []
        for number, (line, score) in enumerate(zip(lines, scores), start=1):
            if not score.strip():
                continue
            parts = line.split("\t")
            if len(parts) < 2:
                raise ValueError(f"{path}, line {number}: expected two tab-separated sentences")
            rows.append((parts[0], parts[1], float(score)))
        frames.append(pd.DataFrame(rows, columns=["sentence1", "sentence2", "score"]))
    return _pairs(pd.concat(frames, ignore_index=True), str(folder))


def _pairs(table: pd.DataFrame, origin: str) -> pd.DataFrame:
    """(sentence1, sentence2, score) of an STS table, each pair with a finite gold score."""
    table = table[["sentence1", "sentence2", "score"]].astype({"score": float})
    if table.empty:
        raise ValueError(f"STS data from {origin} has no pair")
    if not np.isfinite(table["score"].to_numpy(dtype=float)).all():
        raise ValueError(f"STS data from {origin} has missing or non-numeric gold scores")
    return table.reset_index(drop=True)


def read_sts(name: str, split: str, raw_dir: str | os.PathLike) -> pd.DataFrame:
    """Pairs and gold scores (sentence1, sentence2, score) of an STS split from its download."""
    raw_dir = Path(raw_dir)
    hub = raw_dir / HUB_FILE
    if hub.is_file():
        data = pd.read_parquet(hub)
        if name == "stsb":
            data = data.rename(columns={"label": "score"})
        return _pairs(data, f"{hub} ({name} {split})")
    if name in SEMEVAL_STS:
        folders = sorted({p.parent for p in raw_dir.rglob("STS.input.*.txt")})
        if len(folders) != 1:
            raise FileNotFoundError(
                f"{name} {split}: expected one folder of STS.input.*.txt files under {raw_dir}; "
                f"found {len(folders)}"
            )
        return read_semeval_sts(folders[0])
    # STS-B from a mirror (GLUE tsv), or SICK: SemEval-2014 Task 1's own file of the split (as
    # SentEval reads them), else the mirror's SICK.txt of every split; quotes are not balanced.
    semeval = raw_dir / ("SICK_test_annotated.txt" if split == "test" else f"SICK_{split}.txt")
    if name == "stsb":  # the schema allows its train and validation splits only
        path = raw_file(raw_dir, GLUE_SPLIT_FILES[split])
    else:
        path = semeval if semeval.is_file() else raw_file(raw_dir, _SICK_FILE)
    table = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, keep_default_na=False, dtype=str)
    table.columns = [str(c).strip() for c in table.columns]
    if path == semeval:
        log.info("SICK-R %s: SemEval-2014's own file %s", split, path)
    elif name != "stsb" and split != "all":
        table = table[table["SemEval_set"].str.upper() == split.upper()]
    table = table.rename(
        columns={"sentence_A": "sentence1", "sentence_B": "sentence2", "relatedness_score": "score"}
    )
    return _pairs(table, str(path))
