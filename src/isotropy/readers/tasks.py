"""The I-STAR tasks and their splits, each the source ``hf_<task>_<split>``: the hub's
``data.parquet``, or a mirror's GLUE tsv file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from isotropy.readers.glue import GLUE_FORMATS, GLUE_SPLIT_FILES, read_glue
from isotropy.readers.sts import read_sts
from isotropy.sources import HUB_FILE


@dataclass(frozen=True)
class TaskSpec:
    """What a task is: its kind, labels, text columns on the hub and headline metric."""

    name: str
    kind: str  # "classification", "regression" or "qa"
    num_labels: int
    primary_metric: str
    hub_columns: tuple[str, ...]  # text columns on the hub, in (text, text_pair) order
    rows: tuple[int, int]  # (training, validation) rows, as published: the estimate's sizes


_TASKS = (
    TaskSpec("sst2", "classification", 2, "accuracy", ("sentence",), (67349, 872)),
    TaskSpec("qnli", "classification", 2, "accuracy", ("question", "sentence"), (104743, 5463)),
    TaskSpec("rte", "classification", 2, "accuracy", ("sentence1", "sentence2"), (2490, 277)),
    TaskSpec("mrpc", "classification", 2, "f1", ("sentence1", "sentence2"), (3668, 408)),
    TaskSpec("qqp", "classification", 2, "f1", ("question1", "question2"), (363846, 40430)),
    TaskSpec("cola", "classification", 2, "matthews_correlation", ("sentence",), (8551, 1043)),
    TaskSpec("stsb", "regression", 1, "pearson", ("sentence1", "sentence2"), (5749, 1500)),
    TaskSpec("sst5", "classification", 5, "accuracy", ("text",), (8544, 1101)),
    TaskSpec("squad", "qa", 2, "f1", ("question", "context"), (87599, 10570)),
    # SuperGLUE WiC (the Rajaei & Sheikhi slides' second fine-tuning task), online only: the two
    # sentences as a pair; the target word is in both, not given to the model separately.
    TaskSpec("wic", "classification", 2, "accuracy", ("sentence1", "sentence2"), (5428, 638)),
)
TASKS: dict[str, TaskSpec] = {spec.name: spec for spec in _TASKS}


def task_spec(task: str) -> TaskSpec:
    try:
        return TASKS[task]
    except KeyError:
        raise ValueError(f"unknown I-STAR task {task!r}; expected one of {sorted(TASKS)}") from None


ISTAR_SPLITS = ("train", "validation")
# I-STAR tasks read from a mirror's GLUE tsv files (the others come from the hub); each label's
# class id is its place in the task's label domain, which is the hub's numbering for these tasks.
_GLUE_TSV_TASKS = ("cola", "sst2", "mrpc", "rte", "qnli")
TASK_COLUMNS = ["text", "text_pair", "label"]


def task_source(task: str, split: str) -> str:
    """The source that holds one split (:data:`ISTAR_SPLITS`) of an I-STAR task."""
    task_spec(task)
    return f"hf_{task}_{split}"


def read_task_split(task: str, split: str, raw_dir: str | os.PathLike) -> pd.DataFrame:
    """One split of an I-STAR task from its download: ``text``, optional ``text_pair`` and
    ``label`` (int class id, float for STS-B); SQuAD: ``id``, ``question``, ``context``,
    ``answers``, ``answer_starts``."""
    raw_dir, spec = Path(raw_dir), task_spec(task)
    if task == "stsb":  # pairs and gold scores, as the geometry study reads them
        return read_sts(task, split, raw_dir).set_axis(TASK_COLUMNS, axis=1)
    if not (raw_dir / HUB_FILE).is_file():  # a mirror's GLUE tsv file
        if task not in _GLUE_TSV_TASKS:
            raise ValueError(
                f"I-STAR task {task!r} has no GLUE tsv reader; it comes from the hub only"
            )
        table = read_glue(task, raw_dir, GLUE_SPLIT_FILES[split])
        return table.assign(label=table["label"].map(GLUE_FORMATS[task].labels.index).astype(int))
    table = pd.read_parquet(raw_dir / HUB_FILE)
    if spec.kind == "qa":
        return pd.DataFrame(
            {
                "id": table["id"].astype(str),
                "question": table["question"].str.lstrip(),
                "context": table["context"],
                "answers": [list(a["text"]) for a in table["answers"]],
                "answer_starts": [[int(s) for s in a["answer_start"]] for a in table["answers"]],
            }
        )
    texts = table[list(spec.hub_columns)].astype(str)
    out = texts.set_axis(TASK_COLUMNS[: len(spec.hub_columns)], axis=1)
    return out.assign(label=table["label"].astype(int))


def load_task_split(
    task: str,
    split: str,
    raw_dir: str | os.PathLike,
    subset: int | None = None,
    subset_seed: int = 0,
) -> pd.DataFrame:
    """A task's split without its unlabelled rows (label −1), or a seeded random ``subset`` of
    them (the same for every run)."""
    spec = task_spec(task)
    table = read_task_split(task, split, raw_dir)
    if spec.kind != "qa":
        table = table[table["label"] >= 0].reset_index(drop=True)
    if len(table) == 0:
        raise ValueError(f"the {split} split of {task!r} is empty")
    if subset is not None and subset < len(table):
        rows = np.random.default_rng(subset_seed).choice(len(table), size=subset, replace=False)
        table = table.iloc[np.sort(rows)].reset_index(drop=True)
    return table
