"""GLUE training splits (appendix A): one data set per task, read from its source
``glue_<task>``."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from functools import partial

import pandas as pd

from isotropy.readers.registry import DatasetSpec, raw_file, read_utf8_lines

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GlueFormat:
    """Columns of a GLUE task's tsv files: by header name, or by position without a header."""

    text: str | int
    label: str | int
    text_pair: str | int | None = None
    width: int | None = None  # number of fields in a row, for a file without a header
    labels: tuple[str, ...] = ("0", "1")  # the task's label domain, as written in the file


ENTAILMENT = ("entailment", "not_entailment")  # QNLI's and RTE's labels
NLI = ("contradiction", "entailment", "neutral")  # MNLI's
GLUE_FORMATS: dict[str, GlueFormat] = {
    # CoLA: source, label, original annotation, sentence; no header.
    "cola": GlueFormat(text=3, label=1, width=4),
    "sst2": GlueFormat(text="sentence", label="label"),
    "mrpc": GlueFormat(text="#1 String", text_pair="#2 String", label="Quality"),
    "qqp": GlueFormat(text="question1", text_pair="question2", label="is_duplicate"),
    "mnli": GlueFormat(text="sentence1", text_pair="sentence2", label="gold_label", labels=NLI),
    "qnli": GlueFormat(text="question", text_pair="sentence", label="label", labels=ENTAILMENT),
    "rte": GlueFormat(text="sentence1", text_pair="sentence2", label="label", labels=ENTAILMENT),
    "wnli": GlueFormat(text="sentence1", text_pair="sentence2", label="label"),
}
GLUE_TASKS = tuple(GLUE_FORMATS)
GLUE_SPLIT_FILES = {"train": "train.tsv", "validation": "dev.tsv"}  # a task's splits in GLUE


def read_glue(task: str, raw_dir: str | os.PathLike, file_name: str = "train.tsv") -> pd.DataFrame:
    """A GLUE task's split from its tsv file (no quoting), items without a label dropped; a label
    outside the task's domain is an error naming its line, never a class of its own."""
    spec = GLUE_FORMATS[task]
    path = raw_file(raw_dir, file_name)
    lines = read_utf8_lines(path)
    keys = [key for key in (spec.text, spec.text_pair, spec.label) if key is not None]
    index: dict[str | int, int] = {key: int(key) for key in keys if isinstance(key, int)}
    width, first = spec.width, 1
    if width is None:  # a header names the columns
        header = lines.pop(0).split("\t") if lines else []
        if missing := [key for key in keys if key not in header]:
            raise ValueError(
                f"{path}, line 1: header {header} lacks column(s) {missing}; is this the {task} "
                f"{file_name}?"
            )
        index, width, first = {key: header.index(str(key)) for key in keys}, len(header), 2
    rows, unlabelled = [], 0
    for lineno, line in enumerate(lines, first):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != width:
            raise ValueError(
                f"{path}, line {lineno}: expected {width} tab-separated fields, found {len(fields)}"
            )
        label = fields[index[spec.label]].strip()
        if label in {"", "-"}:
            unlabelled += 1
            continue
        if label not in spec.labels:
            raise ValueError(
                f"{path}, line {lineno}: label {label!r} is not a {task} label "
                f"(one of {', '.join(spec.labels)}); fix or remove the row, or re-download the task"
            )
        rows.append([fields[index[key]].strip() for key in keys])
    if unlabelled:
        log.info("%s: dropped %d items without a label", task, unlabelled)
    columns = ["text", "text_pair", "label"] if spec.text_pair is not None else ["text", "label"]
    return pd.DataFrame(rows, columns=columns)


DATASETS = {
    task: DatasetSpec(
        partial(read_glue, task),
        sources={"raw_dir": f"glue_{task}"},
        unit="sentence" if spec.text_pair is None else "pair",
        layouts={"raw_dir": "glue"},
    )
    for task, spec in GLUE_FORMATS.items()
}
