"""Evaluation of a fine-tuned model: the task's validation scores, IsoScore* per layer, TwoNN and
the CLS states' geometry per layer (:mod:`isotropy.finetune.cls_geometry`).

SQuAD v1.1 scoring: best answer span per example, official normalisation, exact match and F1.
"""

from __future__ import annotations

import collections
import math
import re
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from isotropy import metrics
from isotropy.compute import autocast
from isotropy.configuration.finetune import TrainingSettings
from isotropy.finetune.cls_geometry import cls_layer_geometry
from isotropy.finetune.features import Features, collate, model_inputs, to_device
from isotropy.finetune.regularisers import RunningCovariance
from isotropy.readers.tasks import TaskSpec


@torch.no_grad()
def evaluate_model(
    model,
    tokenizer,
    spec: TaskSpec,
    table: pd.DataFrame,
    features: Features,
    settings: TrainingSettings,
    device: torch.device,
    mixed_precision: bool = False,
    references: torch.Tensor | None = None,
    head_method: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> dict[str, Any]:
    """Validation scores, IsoScore* per layer of the sentence embeddings (the position-0 token,
    [CLS]) and TwoNN of the last layer; per layer, I(W), IsoScore and mean norms of the CLS states
    (:func:`isotropy.finetune.cls_geometry.cls_layer_geometry`).

    IsoScore* shrinks each layer's covariance towards that layer's Σ_S (ζ = ``settings.eval_zeta``).
    ``references`` (layers × dim × dim) is Σ_S from up to ``reference_sample_size`` *training*
    token states, as the authors' code builds it (``estimate_reference_covariance`` with
    ``per_layer``): ``isoscore_star``. Σ_S over every non-padding *validation* token, our earlier
    choice, gives ``isoscore_star_validation_reference`` (and ``isoscore_star`` without
    ``references``). ``head_method``: the head's input transform in every batch (the cluster
    method), applied again to each batch's last-layer CLS states to measure them.
    """
    run = (model, tokenizer, spec, features, settings, device, mixed_precision, head_method)
    outputs, sentence, validation_references, geometry = _validation_pass(*run)

    def per_layer(reference: torch.Tensor) -> list[float]:
        return [
            float(metrics.isoscore_star(sentence[layer], reference[layer], zeta=settings.eval_zeta))
            for layer in range(sentence.shape[0])
        ]

    on_validation = per_layer(validation_references)
    if references is not None and tuple(references.shape) != tuple(validation_references.shape):
        raise ValueError(
            f"training Σ_S has shape {tuple(references.shape)}; "
            f"the model's layers need {tuple(validation_references.shape)}"
        )
    isoscores = per_layer(references.float().cpu()) if references is not None else on_validation
    last = sentence[-1].numpy()
    return {
        "scores": task_scores(spec, table, features, settings, outputs),
        "isoscore_star_layers": isoscores,
        "isoscore_star": isoscores[-1],
        "isoscore_star_reference": f"{'validation' if references is None else 'training'} tokens",
        "isoscore_star_layers_validation_reference": on_validation,
        "isoscore_star_validation_reference": on_validation[-1],
        "twonn": float(metrics.twonn_dimension(torch.from_numpy(last))),
        "eval_sentences": int(sentence.shape[1]),
        "embedding_dim": int(sentence.shape[2]),
        **cls_layer_geometry(sentence, *geometry),
    }


def _validation_pass(
    model,
    tokenizer,
    spec: TaskSpec,
    features: Features,
    settings: TrainingSettings,
    device: torch.device,
    mixed: bool,
    method: Callable[[torch.Tensor], torch.Tensor] | None,
) -> tuple:
    """One pass over the validation features: the head's outputs per batch, the position-0 states
    of every layer (layers × sentences × dim), Σ_S of the validation tokens, and the CLS
    geometry's other inputs (mean token state and norm per layer; the head's transformed input)."""
    was_training = model.training
    model.eval()
    outputs, sentence_chunks, moments = [], [], RunningCovariance()
    head_chunks: list[torch.Tensor] = []
    norm_sums: torch.Tensor | None = None
    batches = torch.arange(len(features)).split(settings.eval_batch_size)
    for indices in tqdm(batches, desc="validation", leave=False):
        batch = to_device(collate(features, indices.tolist(), tokenizer), device)
        with autocast(device, mixed):
            out = model(**model_inputs(batch), output_hidden_states=True)
        if spec.kind == "qa":
            outputs.append(torch.stack([out.start_logits, out.end_logits], dim=-1).float().cpu())
        else:
            outputs.append(out.logits.float().cpu())
        layers = torch.stack(tuple(out.hidden_states[1:])).float()  # layers × batch × tokens × dim
        sentence_chunks.append(layers[:, :, 0, :].cpu())
        if method is not None:
            head_chunks.append(method(layers[-1, :, 0, :]).double().cpu())
        tokens = layers[:, batch["attention_mask"].bool()].double()  # layers × tokens × dim
        moments.add(tokens)
        norms = tokens.norm(dim=-1).sum(dim=1).cpu()
        norm_sums = norms if norm_sums is None else norm_sums + norms
    model.train(was_training)
    assert moments.sums is not None and norm_sums is not None, "no validation features"
    token_means, token_norms = (moments.sums / moments.count).cpu(), norm_sums / moments.count
    head_input = torch.cat(head_chunks).numpy() if head_chunks else None
    sentence = torch.cat(sentence_chunks, dim=1)
    return outputs, sentence, moments.covariance().cpu(), (token_means, token_norms, head_input)


def task_scores(
    spec: TaskSpec, table: pd.DataFrame, features: Features, settings: TrainingSettings, outputs
) -> dict[str, Any]:
    """The task's validation scores from the head's outputs (SQuAD: EM and F1 of the best spans)."""
    if spec.kind != "qa":
        logits = torch.cat(outputs, dim=0).numpy()
        return classification_scores(spec, logits, np.asarray(features.extra["labels"]))
    # Dynamic padding gives each QA batch its own length; pad logits with -inf to the longest.
    width = max(c.shape[1] for c in outputs)
    pad = [
        torch.nn.functional.pad(c, (0, 0, 0, width - c.shape[1]), value=-math.inf) for c in outputs
    ]
    logits = torch.cat(pad, dim=0).numpy()
    spans = (logits[..., 0], logits[..., 1], settings.n_best, settings.max_answer_length)
    return squad_scores(squad_predictions(table, features, *spans), table["answers"].tolist())


def classification_scores(
    spec: TaskSpec, logits: np.ndarray, labels: np.ndarray
) -> dict[str, float]:
    """GLUE-style scores, the definitions of the ``evaluate`` glue metric (scikit-learn, scipy)."""
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

    if spec.kind == "regression":
        predictions = logits.reshape(-1)
        return {
            "pearson": float(pearsonr(predictions, labels)[0]),
            "spearmanr": float(spearmanr(predictions, labels)[0]),
        }
    predictions = logits.argmax(axis=-1)
    scores = {"accuracy": float(accuracy_score(labels, predictions))}
    if spec.name in ("mrpc", "qqp"):
        scores["f1"] = float(f1_score(labels, predictions))
    if spec.name == "cola":
        scores["matthews_correlation"] = float(matthews_corrcoef(labels, predictions))
    return scores


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
    if features.example_index is None or features.offsets is None:
        raise ValueError("SQuAD predictions need features made with example indices and offsets")
    all_offsets = features.offsets
    by_example: dict[int, list[int]] = collections.defaultdict(list)
    for feature, example in enumerate(features.example_index):
        by_example[example].append(feature)
    answers = []
    for example in range(len(table)):
        context = table["context"].iloc[example]
        best_score, best_text = -math.inf, ""
        for feature in by_example.get(example, []):
            offsets = all_offsets[feature]
            length = len(offsets)
            starts = np.argsort(start_logits[feature][:length])[::-1][:n_best]
            ends = np.argsort(end_logits[feature][:length])[::-1][:n_best]
            for s in starts:
                for e in ends:
                    if None in (offsets[s], offsets[e]) or not 0 <= e - s < max_answer_length:
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
    """Exact match and F1 as fractions in [0, 1] (the official script's percentages / 100, so
    runs.csv and Figure 6 average every task on one scale), each the best over an example's gold
    answers (SQuAD v1.1 official script; computed here because ``evaluate`` cannot fetch its
    metric script offline)."""
    if len(predictions) != len(references) or not predictions:
        raise ValueError(
            f"need one prediction per example, got {len(predictions)} predictions for "
            f"{len(references)} examples"
        )
    exact = [
        max(float(normalize_answer(p) == normalize_answer(g)) for g in gold)
        for p, gold in zip(predictions, references)
    ]
    f1 = [max(squad_f1(p, g) for g in gold) for p, gold in zip(predictions, references)]
    return {"exact_match": float(np.mean(exact)), "f1": float(np.mean(f1))}
