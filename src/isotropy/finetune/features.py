"""Featurisation: the fine-tuned model (a pretrained transformer with a new task head) and its
tokenizer, tokenised examples (classification, regression, SQuAD windows) and batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd
import torch

from isotropy.configuration.finetune import TrainingSettings
from isotropy.models import ModelSpec, load_pretrained
from isotropy.readers.tasks import TaskSpec


def load_model_and_tokenizer(spec: ModelSpec, task: TaskSpec):
    """The task model (sequence classification/regression or span extraction) and its tokenizer."""
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


@dataclass
class Features:
    """Tokenised examples ready to batch; ``extra``: per-feature tensors (labels, positions)."""

    encodings: list[dict[str, list[int]]]
    extra: dict[str, list] = field(default_factory=dict)
    # SQuAD evaluation only: feature → example row, and context offsets (None outside the context).
    example_index: list[int] | None = None
    offsets: list[list[tuple[int, int] | None]] | None = None

    def __len__(self) -> int:
        return len(self.encodings)


MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _encodings(enc) -> list[dict[str, list[int]]]:
    """One dict of model inputs per tokenised sequence."""
    keys = [k for k in MODEL_INPUTS if k in enc]
    return [{k: enc[k][i] for k in keys} for i in range(len(enc["input_ids"]))]


def classification_features(
    table: pd.DataFrame, tokenizer, max_length: int, regression: bool
) -> Features:
    pairs = table["text_pair"].tolist() if "text_pair" in table else None
    enc = tokenizer(table["text"].tolist(), pairs, truncation=True, max_length=max_length)
    labels = table["label"].astype(float if regression else int).tolist()
    return Features(_encodings(enc), {"labels": labels})


def qa_train_features(table: pd.DataFrame, tokenizer, max_length: int, doc_stride: int) -> Features:
    """Standard SQuAD training features: overlapping context windows labelled with the answer span
    (first answer), or the [CLS] position when the window does not contain it."""
    enc = _qa_tokenize(table, tokenizer, max_length, doc_stride)
    starts, ends = [], []
    for i, offsets in enumerate(enc["offset_mapping"]):
        row = table.iloc[enc["overflow_to_sample_mapping"][i]]
        ids = enc["input_ids"][i]
        cls_index = ids.index(tokenizer.cls_token_id) if tokenizer.cls_token_id in ids else 0
        answer_start = int(row["answer_starts"][0])
        answer_end = answer_start + len(row["answers"][0])
        sequence_ids = enc.sequence_ids(i)
        context = [t for t, s in enumerate(sequence_ids) if s == 1]
        first, last = context[0], context[-1]
        if not (offsets[first][0] <= answer_start and offsets[last][1] >= answer_end):
            starts.append(cls_index)
            ends.append(cls_index)
            continue
        start = first
        while start <= last and offsets[start][0] <= answer_start:
            start += 1
        end = last
        while end >= first and offsets[end][1] >= answer_end:
            end -= 1
        starts.append(start - 1)
        ends.append(end + 1)
    return Features(_encodings(enc), {"start_positions": starts, "end_positions": ends})


def qa_eval_features(table: pd.DataFrame, tokenizer, max_length: int, doc_stride: int) -> Features:
    enc = _qa_tokenize(table, tokenizer, max_length, doc_stride)
    offsets = [
        [
            tuple(o) if s == 1 else None
            for o, s in zip(enc["offset_mapping"][i], enc.sequence_ids(i))
        ]
        for i in range(len(enc["input_ids"]))
    ]
    index = list(enc["overflow_to_sample_mapping"])
    return Features(_encodings(enc), {}, example_index=index, offsets=offsets)


def _qa_tokenize(table: pd.DataFrame, tokenizer, max_length: int, doc_stride: int):
    if tokenizer.padding_side != "right":
        raise ValueError("SQuAD features assume right padding (question first, then context)")
    return tokenizer(
        [q.lstrip() for q in table["question"]],
        table["context"].tolist(),
        truncation="only_second",
        max_length=max_length,
        stride=doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
    )


def collate(features: Features, indices: Sequence[int], tokenizer) -> dict[str, torch.Tensor]:
    batch = tokenizer.pad([features.encodings[i] for i in indices], return_tensors="pt")
    for name, values in features.extra.items():
        picked = [values[i] for i in indices]
        dtype = torch.float32 if isinstance(picked[0], float) else torch.long
        batch[name] = torch.tensor(picked, dtype=dtype)
    return dict(batch)


def epoch_order(n: int, seed: int, epoch: int) -> torch.Tensor:
    """The shuffled example order of one epoch: a function of (seed, epoch) only, so a resumed run
    replays exactly the batches of an uninterrupted one."""
    generator = torch.Generator().manual_seed(1_000_003 * (seed + 1) + epoch)
    return torch.randperm(n, generator=generator)


def model_inputs(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v for k, v in batch.items() if k in MODEL_INPUTS}


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def task_features(
    spec: TaskSpec,
    tokenizer,
    train: pd.DataFrame,
    validation: pd.DataFrame,
    settings: TrainingSettings,
) -> tuple[Features, Features]:
    """(training, evaluation) features of a task: SQuAD windows, or a sequence (pair) an example."""
    if spec.kind == "qa":
        return (
            qa_train_features(train, tokenizer, settings.max_length, settings.doc_stride),
            qa_eval_features(validation, tokenizer, settings.max_length, settings.doc_stride),
        )
    regression = spec.kind == "regression"
    return (
        classification_features(train, tokenizer, settings.max_length, regression),
        classification_features(validation, tokenizer, settings.max_length, regression),
    )
