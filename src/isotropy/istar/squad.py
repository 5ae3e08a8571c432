"""SQuAD v1.1 scoring: best answer span per example, official normalisation, exact match and F1."""

from __future__ import annotations

import collections
import math
import re
import string
from collections.abc import Sequence

import numpy as np
import pandas as pd

from isotropy.istar.features import Features


def squad_predictions(
    table: pd.DataFrame,
    features: Features,
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    n_best: int = 20,
    max_answer_length: int = 30,
) -> list[str]:
    """Best answer text per example: the highest start + end logit over the ``n_best`` starts and
    ends of every feature window, restricted to context tokens, end ≥ start, at most
    ``max_answer_length`` tokens; the text is cut from the context by character offsets."""
    by_example: dict[int, list[int]] = collections.defaultdict(list)
    for feature, example in enumerate(features.example_index):
        by_example[example].append(feature)
    answers = []
    for example in range(len(table)):
        context = table["context"].iloc[example]
        best_score, best_text = -math.inf, ""
        for feature in by_example.get(example, []):
            offsets = features.offsets[feature]
            length = len(offsets)
            starts = np.argsort(start_logits[feature][:length])[::-1][:n_best]
            ends = np.argsort(end_logits[feature][:length])[::-1][:n_best]
            for s in starts:
                for e in ends:
                    if (
                        offsets[s] is None
                        or offsets[e] is None
                        or e < s
                        or e - s + 1 > max_answer_length
                    ):
                        continue
                    score = start_logits[feature][s] + end_logits[feature][e]
                    if score > best_score:
                        best_score, best_text = score, context[offsets[s][0] : offsets[e][1]]
        answers.append(best_text)
    return answers


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 official normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def squad_f1(prediction: str, truth: str) -> float:
    predicted, gold = normalize_answer(prediction).split(), normalize_answer(truth).split()
    common = collections.Counter(predicted) & collections.Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def squad_scores(
    predictions: Sequence[str], references: Sequence[Sequence[str]]
) -> dict[str, float]:
    """Exact match and F1 as fractions in [0, 1] (the official script's percentages / 100, so runs.csv
    and Figure 6 average every task on one scale), each the best over an example's gold answers
    (SQuAD v1.1 official script; computed here because ``evaluate`` cannot fetch its metric script
    offline)."""
    if len(predictions) != len(references) or not predictions:
        raise ValueError(
            f"need one prediction per example, got {len(predictions)} predictions for {len(references)} examples"
        )
    exact = [
        max(float(normalize_answer(p) == normalize_answer(g)) for g in gold)
        for p, gold in zip(predictions, references)
    ]
    f1 = [max(squad_f1(p, g) for g in gold) for p, gold in zip(predictions, references)]
    return {"exact_match": float(np.mean(exact)), "f1": float(np.mean(f1))}
