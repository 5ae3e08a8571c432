"""The fine-tuned model: a pretrained transformer with a new task head, and its tokenizer."""

from __future__ import annotations

from isotropy.istar.tasks import TaskSpec
from isotropy.models import ModelSpec, load_pretrained


def load_model_and_tokenizer(spec: ModelSpec, task: TaskSpec):
    """The task model (sequence classification/regression head, or span extraction head) and its tokenizer."""
    from transformers import (
        AutoModelForQuestionAnswering,
        AutoModelForSequenceClassification,
        AutoTokenizer,
    )

    tokenizer = load_pretrained(spec, AutoTokenizer.from_pretrained)
    # The task head is always new: a folder that already holds a head of another size is fine.
    head = {"ignore_mismatched_sizes": True}
    if task.kind == "qa":
        if not tokenizer.is_fast:
            raise ValueError(
                f"SQuAD needs a fast tokenizer (offset mappings); {spec.source} has a slow one"
            )
        model = load_pretrained(spec, AutoModelForQuestionAnswering.from_pretrained, **head)
    else:
        problem = "regression" if task.kind == "regression" else "single_label_classification"
        model = load_pretrained(
            spec,
            AutoModelForSequenceClassification.from_pretrained,
            num_labels=task.num_labels,
            problem_type=problem,
            **head,
        )
    return model, tokenizer
