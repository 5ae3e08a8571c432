"""A transform of the CLS state that a fine-tuned model's task head reads, applied inside the
forward pass (a pre-hook on the head's input module), so that the gradient flows through it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class HeadTransform:
    """A named transform of the CLS states the head reads, with the settings it was made with
    (recorded in the run's metrics and in its checkpoint's signature)."""

    name: str
    settings: Mapping[str, Any]
    transform: Callable[[torch.Tensor], torch.Tensor]
    # Called as prepare(model, training features, tokenizer, settings, device) before every
    # epoch and before the evaluation: a transform fitted offline (on the training set's CLS
    # states) fits itself there. None: nothing to fit.
    prepare: Callable[..., None] | None = None

    def record(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings}


def head_input_module(model: Any) -> torch.nn.Module:
    """The module whose first input holds the CLS state the task head reads: BERT's pooler,
    DistilBERT's ``pre_classifier``, else the classification head (RoBERTa, MPNet)."""
    pooler = getattr(model.base_model, "pooler", None)
    if isinstance(pooler, torch.nn.Module):
        return pooler
    for name in ("pre_classifier", "classifier"):
        module = getattr(model, name, None)
        if isinstance(module, torch.nn.Module):
            return module
    raise ValueError(
        f"{type(model).__name__} has no pooler or classifier to transform the input of"
    )


@contextlib.contextmanager
def transform_head_input(
    model: Any, transform: Callable[[torch.Tensor], torch.Tensor]
) -> Iterator[torch.nn.Module]:
    """Replace the CLS states at the head's input by ``transform(states)`` (batch × dim in, the
    same out) in every forward pass while the block runs, training and evaluation alike."""

    def before_head(module: torch.nn.Module, args: tuple) -> tuple:
        hidden, *rest = args
        if hidden.dim() == 3:  # batch × tokens × dim: position 0 is the CLS state
            first = transform(hidden[:, 0])
            hidden = torch.cat([first[:, None], hidden[:, 1:]], dim=1)
        else:  # batch × dim: the CLS states already
            hidden = transform(hidden)
        return (hidden, *rest)

    module = head_input_module(model)
    handle = module.register_forward_pre_hook(before_head)
    try:
        yield module
    finally:
        handle.remove()
