"""The I-STAR tasks: kind, labels, text columns, where their data come from, headline metric."""

from __future__ import annotations

from dataclasses import dataclass

REGULARISERS = ("none", "istar", "cosreg")


@dataclass(frozen=True)
class TaskSpec:
    """What a task is: its kind, labels, text columns on the hub and headline metric.

    Its data: the sources ``hf_<task>_<split>`` (isotropy.readers.task_source).
    """

    name: str
    kind: str  # "classification", "regression" or "qa"
    num_labels: int
    primary_metric: str
    hub_path: str  # Hugging Face datasets path
    hub_name: str | None  # configuration name (GLUE task)
    hub_columns: tuple[str, ...]  # text columns on the hub, in (text, text_pair) order


TASKS: dict[str, TaskSpec] = {
    "sst2": TaskSpec(
        "sst2", "classification", 2, "accuracy", "nyu-mll/glue", "sst2", ("sentence",)
    ),
    "qnli": TaskSpec(
        "qnli", "classification", 2, "accuracy", "nyu-mll/glue", "qnli", ("question", "sentence")
    ),
    "rte": TaskSpec(
        "rte", "classification", 2, "accuracy", "nyu-mll/glue", "rte", ("sentence1", "sentence2")
    ),
    "mrpc": TaskSpec(
        "mrpc", "classification", 2, "f1", "nyu-mll/glue", "mrpc", ("sentence1", "sentence2")
    ),
    "qqp": TaskSpec(
        "qqp", "classification", 2, "f1", "nyu-mll/glue", "qqp", ("question1", "question2")
    ),
    "cola": TaskSpec(
        "cola", "classification", 2, "matthews_correlation", "nyu-mll/glue", "cola", ("sentence",)
    ),
    "stsb": TaskSpec(
        "stsb", "regression", 1, "pearson", "nyu-mll/glue", "stsb", ("sentence1", "sentence2")
    ),
    "sst5": TaskSpec("sst5", "classification", 5, "accuracy", "SetFit/sst5", None, ("text",)),
    "squad": TaskSpec("squad", "qa", 2, "f1", "rajpurkar/squad", None, ("question", "context")),
}


def task_spec(task: str) -> TaskSpec:
    try:
        return TASKS[task]
    except KeyError:
        raise ValueError(f"unknown I-STAR task {task!r}; expected one of {sorted(TASKS)}") from None
