"""I-STAR fine-tuning (Rudman & Eickhoff, ICLR 2024): IsoScore* regularisation, CosReg, baseline.

One run fine-tunes a pretrained transformer on one task with

    loss = task loss + λ · penalty,

where the penalty is ``1 − IsoScore*(H)`` for I-STAR (H = the non-padding token hidden states
of every transformer layer in the mini-batch, shrunk towards Σ_S with ζ = 0.2, Σ_S re-estimated
at the start of every epoch from a large sample of the current model's token states) and the
mean pairwise cosine similarity of the batch's last-layer token states for CosReg. λ < 0 pushes
towards anisotropy. After training, the run reports the task's standard validation metric,
IsoScore* (ζ = 0.75) of the validation sentence embeddings (position-0 token, [CLS]) of every
layer, and the TwoNN intrinsic dimension of the last layer's sentence embeddings.

A run checkpoints after every epoch into its output folder and resumes from there; training is
deterministic per seed on the CPU (seeded initialisation, per-epoch seeded shuffling, restored
RNG state), so an interrupted and resumed run reaches the same weights as an uninterrupted one.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import math
import os
import random
import re
import string
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from isotropy import metrics
from isotropy.io import atomic_path, write_json
from isotropy.provenance import note_data_file, note_hub_dataset

log = logging.getLogger(__name__)

REGULARISERS = ("none", "istar", "cosreg")
CHECKPOINT_NAME = "checkpoint.pt"
MIRROR_ENV = "ISOTROPY_MIRROR"  # read by isotropy.download.resolve_mirror


# ---------------------------------------------------------------------------------------------
# Tasks and data


@dataclass(frozen=True)
class TaskSpec:
    """What a task is: its kind, labels, text columns, sources and headline metric."""

    name: str
    kind: str  # "classification", "regression" or "qa"
    num_labels: int
    primary_metric: str
    hub_path: str  # Hugging Face datasets path
    hub_name: str | None  # configuration name (GLUE task)
    hub_columns: tuple[str, ...]  # text columns on the hub, in (text, text_pair) order
    mirror_folder: str | None = None  # folder under <mirror>/glue


TASKS: dict[str, TaskSpec] = {
    "sst2": TaskSpec("sst2", "classification", 2, "accuracy", "nyu-mll/glue", "sst2", ("sentence",), "SST-2"),
    "qnli": TaskSpec("qnli", "classification", 2, "accuracy", "nyu-mll/glue", "qnli", ("question", "sentence"), "QNLI"),
    "rte": TaskSpec("rte", "classification", 2, "accuracy", "nyu-mll/glue", "rte", ("sentence1", "sentence2"), "RTE"),
    "mrpc": TaskSpec("mrpc", "classification", 2, "f1", "nyu-mll/glue", "mrpc", ("sentence1", "sentence2"), "MRPC"),
    "qqp": TaskSpec("qqp", "classification", 2, "f1", "nyu-mll/glue", "qqp", ("question1", "question2"), "QQP"),
    "cola": TaskSpec("cola", "classification", 2, "matthews_correlation", "nyu-mll/glue", "cola", ("sentence",), "CoLA"),
    "stsb": TaskSpec("stsb", "regression", 1, "pearson", "nyu-mll/glue", "stsb", ("sentence1", "sentence2"), "STS-B"),
    "sst5": TaskSpec("sst5", "classification", 5, "accuracy", "SetFit/sst5", None, ("text",)),
    "squad": TaskSpec("squad", "qa", 2, "f1", "rajpurkar/squad", None, ("question", "context")),
}

# GLUE's label order for the string-labelled tsv files (as in the hub's ClassLabel names).
_NLI_LABELS = {"entailment": 0, "not_entailment": 1}


def task_spec(task: str) -> TaskSpec:
    try:
        return TASKS[task]
    except KeyError:
        raise ValueError(f"unknown I-STAR task {task!r}; expected one of {sorted(TASKS)}") from None


def resolve_mirror(configured: str | os.PathLike | None = None) -> Path | None:
    """The offline mirror folder (``$ISOTROPY_MIRROR`` over the config value); None = the hub."""
    from isotropy.download import resolve_mirror as shared_resolve

    return shared_resolve(configured)


def _read_tsv_rows(path: Path) -> list[list[str]]:
    # GLUE tsv files hold unbalanced quotes (MRPC, SST-2): split on tabs, never parse quoting.
    with open(path, encoding="utf-8-sig") as handle:
        return [line.rstrip("\n").rstrip("\r").split("\t") for line in handle if line.strip()]


def _mirror_file(mirror: Path, spec: TaskSpec, split: str) -> Path:
    if spec.mirror_folder is None:
        raise FileNotFoundError(
            f"I-STAR task {spec.name!r} is not part of the offline mirror {mirror} (only GLUE tsv files are); "
            f"unset mirror/{MIRROR_ENV} to load {spec.hub_path!r} from the Hugging Face hub"
        )
    name = {"train": "train.tsv", "validation": "dev.tsv"}[split]
    path = mirror / "glue" / spec.mirror_folder / name
    if not path.is_file():
        raise FileNotFoundError(
            f"I-STAR task {spec.name!r} needs its {split} split, {path}, which the mirror {mirror} does not have; "
            f"unset mirror/{MIRROR_ENV} to load it from the Hugging Face hub, or choose another task"
        )
    return path


def check_tasks_available(tasks: Sequence[str], mirror: str | os.PathLike | None = None) -> None:
    """With a mirror set, every task needs both its splits there: one error naming all that do not.

    Called by rule ``finetune``'s input function while the workflow builds its DAG, so a missing
    file stops the run before any job starts, with the tasks the mirror does hold; a DAG that
    needs no I-STAR run is not concerned. Without a mirror (the hub) nothing is checked.
    """
    folder = resolve_mirror(mirror)
    if folder is None:
        return
    problems = [problem for problem in (_mirror_problem(folder, task) for task in tasks) if problem]
    if problems:
        held = [task for task in TASKS if _mirror_problem(folder, task) is None]
        raise FileNotFoundError("; ".join(problems) + f". Tasks the mirror holds: {', '.join(held) or 'none'} (set istar.tasks to those)")


def task_inputs(task: str, mirror: str | os.PathLike | None = None) -> list[str]:
    """Rule ``finetune``'s input function: no file inputs, after :func:`check_tasks_available`."""
    check_tasks_available([task], mirror)
    return []


def _mirror_problem(folder: Path, task: str) -> str | None:
    """Why the mirror cannot serve ``task`` (a split missing), or None when it holds both splits."""
    try:
        for split in ("train", "validation"):
            _mirror_file(folder, task_spec(task), split)
    except FileNotFoundError as error:
        return str(error)
    return None


def read_mirror_split(task: str, split: str, mirror: str | os.PathLike) -> pd.DataFrame:
    """One split of a GLUE task from the mirror's original tsv files.

    Returns columns ``text``, optional ``text_pair``, and ``label`` (int class id, float for STS-B),
    the same table :func:`load_task_split` returns from the hub.
    """
    spec = task_spec(task)
    path = _mirror_file(Path(mirror), spec, split)
    rows = _read_tsv_rows(path)
    note_data_file(path)
    if task == "cola":  # no header: source, label, original label, sentence
        return pd.DataFrame({"text": [r[3] for r in rows], "label": [int(r[1]) for r in rows]})
    header, body = rows[0], rows[1:]
    column = {name: i for i, name in enumerate(header)}
    if task == "sst2":
        return pd.DataFrame({"text": [r[column["sentence"]].strip() for r in body], "label": [int(r[column["label"]]) for r in body]})
    if task == "mrpc":
        return pd.DataFrame(
            {
                "text": [r[3] for r in body],
                "text_pair": [r[4] for r in body],
                "label": [int(r[0]) for r in body],
            }
        )
    if task in ("rte", "qnli"):
        first, second = spec.hub_columns
        return pd.DataFrame(
            {
                "text": [r[column[first]] for r in body],
                "text_pair": [r[column[second]] for r in body],
                "label": [_NLI_LABELS[r[-1]] for r in body],
            }
        )
    if task == "stsb":
        return pd.DataFrame(
            {
                "text": [r[column["sentence1"]] for r in body],
                "text_pair": [r[column["sentence2"]] for r in body],
                "label": [float(r[-1]) for r in body],
            }
        )
    raise FileNotFoundError(f"no mirror reader for I-STAR task {task!r}")  # pragma: no cover - guarded above


def read_hub_split(task: str, split: str) -> pd.DataFrame:
    """One split from the Hugging Face hub through ``datasets`` (needs the network or its cache)."""
    import datasets

    spec = task_spec(task)
    args = (spec.hub_path, spec.hub_name) if spec.hub_name else (spec.hub_path,)
    dataset = datasets.load_dataset(*args, split=split)
    note_hub_dataset(dataset, spec.hub_path, config=spec.hub_name, split=split)
    table = dataset.to_pandas()
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
    out = pd.DataFrame({"text": table[spec.hub_columns[0]].astype(str)})
    if len(spec.hub_columns) > 1:
        out["text_pair"] = table[spec.hub_columns[1]].astype(str)
    out["label"] = table["label"].astype(float if spec.kind == "regression" else int)
    return out


def load_task_split(
    task: str,
    split: str,
    mirror: str | os.PathLike | None = None,
    subset: int | None = None,
    subset_seed: int = 0,
) -> pd.DataFrame:
    """A task's ``train`` or ``validation`` split, from the mirror when one is set, else the hub.

    ``subset`` keeps a seeded random sample of that many rows (the same for every run), for
    scaled-down runs. Rows without a gold label (label −1) are dropped.
    """
    if split not in ("train", "validation"):
        raise ValueError(f"split must be 'train' or 'validation', got {split!r}")
    spec = task_spec(task)
    folder = resolve_mirror(mirror)
    table = read_mirror_split(task, split, folder) if folder else read_hub_split(task, split)
    if spec.kind != "qa":
        table = table[table["label"] >= 0].reset_index(drop=True)
    if len(table) == 0:
        raise ValueError(f"the {split} split of {task!r} is empty")
    if subset is not None and subset < len(table):
        rows = np.random.default_rng(subset_seed).choice(len(table), size=subset, replace=False)
        table = table.iloc[np.sort(rows)].reset_index(drop=True)
    return table


# ---------------------------------------------------------------------------------------------
# Models


@dataclass(frozen=True)
class ModelSpec:
    """A pretrained model: hub name and pinned revision, or a local folder (``path`` wins)."""

    model: str | None = None
    revision: str | None = None
    path: str | None = None

    @property
    def source(self) -> str:
        if self.path:
            from isotropy.embeddings import resolve_model_path

            return resolve_model_path(str(self.path))  # a folder, or package:<module>
        if not self.model:
            raise ValueError("a model entry needs `model` (hub name) or `path` (local folder)")
        return self.model


def load_model_and_tokenizer(spec: ModelSpec, task: TaskSpec):
    """The task model (sequence classification/regression head, or span extraction head) and its tokenizer."""
    from transformers import AutoModelForQuestionAnswering, AutoModelForSequenceClassification, AutoTokenizer

    kwargs = {} if spec.path else {"revision": spec.revision}
    tokenizer = AutoTokenizer.from_pretrained(spec.source, **kwargs)
    # The task head is always new: a folder that already holds a head of another size is fine.
    head = {"ignore_mismatched_sizes": True}
    if task.kind == "qa":
        if not tokenizer.is_fast:
            raise ValueError(f"SQuAD needs a fast tokenizer (offset mappings); {spec.source} has a slow one")
        model = AutoModelForQuestionAnswering.from_pretrained(spec.source, **head, **kwargs)
    else:
        problem = "regression" if task.kind == "regression" else "single_label_classification"
        model = AutoModelForSequenceClassification.from_pretrained(
            spec.source, num_labels=task.num_labels, problem_type=problem, **head, **kwargs
        )
    return model, tokenizer


# ---------------------------------------------------------------------------------------------
# Regularisers


def token_points(hidden_states: Sequence[torch.Tensor], attention_mask: torch.Tensor) -> torch.Tensor:
    """Non-padding token states of every transformer layer, stacked into (tokens × layers, dim).

    ``hidden_states[0]`` (the embedding lookup) is left out, as in the authors' code.
    """
    if len(hidden_states) < 2:
        raise ValueError("need the hidden states of the embedding layer and at least one transformer layer")
    stacked = torch.stack(tuple(hidden_states[1:]))  # layers × batch × tokens × dim
    return stacked[:, attention_mask.bool()].reshape(-1, stacked.shape[-1])


def istar_penalty(points: torch.Tensor, reference_covariance: torch.Tensor, zeta: float) -> torch.Tensor:
    """``1 − IsoScore*(points)``: 0 for an isotropic batch, 1 for a single direction."""
    return 1.0 - metrics.isoscore_star(points.float(), reference_covariance.float(), zeta=zeta)


def cosine_penalty(points: torch.Tensor) -> torch.Tensor:
    """CosReg as the authors compute it: the sum of all n² cosines of the rows, the n self-cosines
    (each 1) included, divided by n².

    That is 1/n + (n − 1)/n × the mean over distinct pairs; the two differ by at most 1/n and have
    the same gradient direction. Uses Σ_{i,j} cos(x_i, x_j) = ‖Σ_i x̂_i‖², so memory stays linear
    in n. Unlike the authors' code, the rows are non-padding token states only (the caller masks).
    """
    n = points.shape[0]
    if n < 2:
        raise ValueError(f"CosReg needs at least 2 token states in a batch, found {n}")
    unit = torch.nn.functional.normalize(points.float(), dim=1)
    total = unit.sum(dim=0)
    return (total @ total) / (n * n)


# ---------------------------------------------------------------------------------------------
# Features and batches


@dataclass
class Features:
    """Tokenised examples ready to batch; ``extra`` holds per-feature tensors (labels, positions)."""

    encodings: list[dict[str, list[int]]]
    extra: dict[str, list] = field(default_factory=dict)
    # SQuAD evaluation only: feature → example row, and context offsets (None outside the context).
    example_index: list[int] | None = None
    offsets: list[list[tuple[int, int] | None]] | None = None

    def __len__(self) -> int:
        return len(self.encodings)


_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def classification_features(table: pd.DataFrame, tokenizer, max_length: int, regression: bool) -> Features:
    pairs = table["text_pair"].tolist() if "text_pair" in table else None
    enc = tokenizer(table["text"].tolist(), pairs, truncation=True, max_length=max_length)
    keys = [k for k in _MODEL_INPUTS if k in enc]
    encodings = [{k: enc[k][i] for k in keys} for i in range(len(table))]
    labels = table["label"].astype(float if regression else int).tolist()
    return Features(encodings, {"labels": labels})


def qa_train_features(table: pd.DataFrame, tokenizer, max_length: int, doc_stride: int) -> Features:
    """Standard SQuAD training features: overlapping context windows labelled with the answer span
    (first answer), or the [CLS] position when the window does not contain it."""
    enc = _qa_tokenize(table, tokenizer, max_length, doc_stride)
    starts, ends = [], []
    for i, offsets in enumerate(enc["offset_mapping"]):
        row = table.iloc[enc["overflow_to_sample_mapping"][i]]
        cls_index = enc["input_ids"][i].index(tokenizer.cls_token_id) if tokenizer.cls_token_id in enc["input_ids"][i] else 0
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
    keys = [k for k in _MODEL_INPUTS if k in enc]
    encodings = [{k: enc[k][i] for k in keys} for i in range(len(enc["input_ids"]))]
    return Features(encodings, {"start_positions": starts, "end_positions": ends})


def qa_eval_features(table: pd.DataFrame, tokenizer, max_length: int, doc_stride: int) -> Features:
    enc = _qa_tokenize(table, tokenizer, max_length, doc_stride)
    offsets = [
        [tuple(o) if s == 1 else None for o, s in zip(enc["offset_mapping"][i], enc.sequence_ids(i))]
        for i in range(len(enc["input_ids"]))
    ]
    keys = [k for k in _MODEL_INPUTS if k in enc]
    encodings = [{k: enc[k][i] for k in keys} for i in range(len(enc["input_ids"]))]
    return Features(encodings, {}, example_index=list(enc["overflow_to_sample_mapping"]), offsets=offsets)


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


# ---------------------------------------------------------------------------------------------
# Training


@dataclass
class TrainingSettings:
    """Optimisation, regularisation and evaluation settings of one run (config ``istar.training``)."""

    learning_rate: float = 1e-5
    batch_size: int = 32
    epochs: int = 4
    max_length: int = 256
    weight_decay: float = 0.0
    scheduler: str = "linear"
    warmup_ratio: float = 0.0
    max_steps: int | None = None
    mixed_precision: bool = True
    zeta: float = 0.2
    reference_sample_size: int = 250_000
    eval_zeta: float = 0.75
    eval_batch_size: int = 64
    train_subset: int | None = None
    eval_subset: int | None = None
    subset_seed: int = 0
    doc_stride: int = 128
    max_answer_length: int = 30
    n_best: int = 20
    keep_checkpoint: bool = False

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> "TrainingSettings":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown I-STAR training settings {unknown}; known: {sorted(known)}")
        return cls(**values)


class TrainingInterrupted(RuntimeError):
    """Raised by ``stop_after_epoch`` after that epoch's checkpoint is written (simulates a kill)."""


def format_lambda(lam: float) -> str:
    """λ as it appears in paths: ``-5``, ``0.5``, ``0``."""
    text = f"{float(lam):g}"
    return "0" if text == "-0" else text


def check_run(regulariser: str, lam: float) -> None:
    if regulariser not in REGULARISERS:
        raise ValueError(f"unknown regulariser {regulariser!r}; expected one of {REGULARISERS}")
    if regulariser == "none" and lam != 0:
        raise ValueError(f"regulariser 'none' takes λ = 0, got {lam}")
    if not math.isfinite(lam):
        raise ValueError(f"λ must be finite, got {lam}")


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _autocast(device: torch.device, enabled: bool):
    if device.type == "cuda" and enabled:
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast("cuda", dtype=dtype)
    return contextlib.nullcontext()


def _to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _model_inputs(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v for k, v in batch.items() if k in _MODEL_INPUTS}


@torch.no_grad()
def estimate_reference_covariance(
    model,
    features: Features,
    tokenizer,
    sample_size: int,
    batch_size: int,
    device: torch.device,
    seed: int,
    mixed_precision: bool = False,
    per_layer: bool = False,
) -> torch.Tensor:
    """Σ_S: the unbiased covariance of ``sample_size`` token states (all layers, no padding) of the
    current model in eval mode, from training examples in a seeded random order.

    With ``per_layer``, one covariance per transformer layer (layers × dim × dim), each over the
    same ``sample_size`` token positions: the evaluation reference of the authors' code, built
    from training tokens. Accumulated as running sums in float64, so 250,000 × 768 states never
    sit in memory at once.
    """
    was_training = model.training
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(features), generator=generator)
    total, sums, products = 0, None, None
    progress = tqdm(total=sample_size, desc="Σ_S sample", unit="state", leave=False)
    for indices in order.split(batch_size):
        batch = _to_device(collate(features, indices.tolist(), tokenizer), device)
        with _autocast(device, mixed_precision):
            out = model(**_model_inputs(batch), output_hidden_states=True)
        if per_layer:  # layers × tokens × dim
            points = torch.stack(tuple(out.hidden_states[1:]))[:, batch["attention_mask"].bool()].double()
        else:  # one group: tokens × layers states
            points = token_points(out.hidden_states, batch["attention_mask"]).double()[None]
        count = points.shape[1]
        take = min(count, sample_size - total)
        if take < count:  # a random subset of the last batch, not its first layers or tokens
            pick = torch.randperm(count, generator=generator)[:take].to(points.device)
            points = points[:, pick]
        if sums is None:
            sums = torch.zeros(points.shape[0], points.shape[2], dtype=torch.float64, device=points.device)
            products = torch.zeros(points.shape[0], points.shape[2], points.shape[2], dtype=torch.float64, device=points.device)
        sums += points.sum(dim=1)
        products += points.transpose(1, 2) @ points
        total += take
        progress.update(take)
        if total >= sample_size:
            break
    progress.close()
    model.train(was_training)
    if total < 2:
        raise ValueError(f"Σ_S needs at least 2 token states, the training data gave {total}")
    if total < sample_size:
        log.warning("Σ_S estimated from %d token states: the training data has fewer than the %d asked for", total, sample_size)
    mean = sums / total
    covariance = ((products - total * mean[:, :, None] * mean[:, None, :]) / (total - 1)).float()
    return covariance if per_layer else covariance[0]


def _rng_state() -> dict[str, Any]:
    # Tensors and plain data only, so that the checkpoint loads with weights_only=True.
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    numpy_state = {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                   "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": numpy_state}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    numpy_state = state["numpy"]
    np.random.set_state((numpy_state["kind"], numpy_state["keys"].numpy().astype(np.uint32), numpy_state["pos"],
                         numpy_state["has_gauss"], numpy_state["cached_gaussian"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint's state, unpickling tensors and plain data only: a tampered file cannot run code."""
    import pickle

    try:
        # On the CPU: the RNG states must stay CPU tensors; load_state_dict moves the rest.
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        # torch's message is long; its "Unsupported global: GLOBAL io.open ..." part names the object.
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
        what = f"it asks to run {found.group(1)}" if found else "weights_only load failed"
        raise ValueError(
            f"{path} holds objects other than tensors and plain data ({what}), so it is not a checkpoint this "
            "workflow wrote and was not loaded; delete it to start this run afresh"
        ) from None


def _run_signature(model_spec: ModelSpec, task: str, regulariser: str, lam: float, seed: int, settings: TrainingSettings) -> dict:
    # What a checkpoint must match to be resumed (evaluation-only settings may change freely).
    training = dataclasses.asdict(settings)
    for name in ("eval_zeta", "eval_batch_size", "eval_subset", "n_best", "max_answer_length", "keep_checkpoint"):
        training.pop(name)
    return {"model": dataclasses.asdict(model_spec), "task": task, "regulariser": regulariser, "lam": float(lam), "seed": seed, "training": training}


def finetune(
    model_spec: ModelSpec,
    task: str,
    regulariser: str,
    lam: float,
    seed: int,
    out_dir: str | os.PathLike,
    settings: TrainingSettings | None = None,
    mirror: str | os.PathLike | None = None,
    device: str | torch.device = "auto",
    stop_after_epoch: int | None = None,
    data: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """Fine-tune one model on one task with one regulariser, λ and seed; return its metrics.

    Checkpoints go to ``out_dir/checkpoint.pt`` after every epoch; an existing checkpoint of the
    same run is resumed. ``stop_after_epoch`` (0-based) raises :class:`TrainingInterrupted` right
    after that epoch's checkpoint, as a kill would. ``data`` = (train, validation) tables replaces
    loading the task (tests, custom data). The result dict is what :func:`run_and_save` writes.
    """
    from isotropy.device import describe_device, resolve_device

    settings = settings or TrainingSettings()
    check_run(regulariser, lam)
    spec = task_spec(task)
    device = device if isinstance(device, torch.device) else resolve_device(device)
    mixed = settings.mixed_precision and device.type == "cuda"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    if data is None:
        train_table = load_task_split(task, "train", mirror, settings.train_subset, settings.subset_seed)
        eval_table = load_task_split(task, "validation", mirror, settings.eval_subset, settings.subset_seed)
    else:
        train_table, eval_table = data
    seed_everything(seed)  # seeds the task head's initialisation
    model, tokenizer = load_model_and_tokenizer(model_spec, spec)
    model.to(device)
    if spec.kind == "qa":
        train_features = qa_train_features(train_table, tokenizer, settings.max_length, settings.doc_stride)
        eval_features = qa_eval_features(eval_table, tokenizer, settings.max_length, settings.doc_stride)
    else:
        regression = spec.kind == "regression"
        train_features = classification_features(train_table, tokenizer, settings.max_length, regression)
        eval_features = classification_features(eval_table, tokenizer, settings.max_length, regression)

    steps_per_epoch = math.ceil(len(train_features) / settings.batch_size)
    total_steps = steps_per_epoch * settings.epochs
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps)
    epochs = math.ceil(total_steps / steps_per_epoch)

    from transformers import get_scheduler

    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    scheduler = get_scheduler(
        settings.scheduler, optimizer, num_warmup_steps=int(settings.warmup_ratio * total_steps), num_training_steps=total_steps
    )
    # Loss scaling only for float16; bfloat16 has float32's range.
    scaler = torch.amp.GradScaler("cuda", enabled=mixed and not torch.cuda.is_bf16_supported())

    signature = _run_signature(model_spec, task, regulariser, lam, seed, settings)
    checkpoint_path = out_dir / CHECKPOINT_NAME
    start_epoch, step, history = 0, 0, []
    if checkpoint_path.exists():
        state = load_checkpoint(checkpoint_path)
        if state["signature"] != signature:
            raise ValueError(
                f"{checkpoint_path} belongs to a different run or settings ({state['signature']}); "
                "delete it to start this run afresh"
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        _set_rng_state(state["rng"])
        start_epoch, step, history = state["epoch"] + 1, state["step"], state["history"]
        log.info("resumed %s from epoch %d (step %d)", checkpoint_path, state["epoch"] + 1, step)

    model.train()
    for epoch in range(start_epoch, epochs):
        reference = None
        if regulariser == "istar":
            reference = estimate_reference_covariance(
                model, train_features, tokenizer, settings.reference_sample_size, settings.eval_batch_size,
                device, seed=1_000_003 * (seed + 1) + 7919 * (epoch + 1), mixed_precision=mixed,
            )
        sums = collections.defaultdict(float)
        batches = 0
        order = epoch_order(len(train_features), seed, epoch).split(settings.batch_size)
        progress = tqdm(order, desc=f"{task} {regulariser} λ={format_lambda(lam)} epoch {epoch + 1}/{epochs}", leave=False)
        for indices in progress:
            if step >= total_steps:
                break
            batch = _to_device(collate(train_features, indices.tolist(), tokenizer), device)
            with _autocast(device, mixed):
                out = model(**batch, output_hidden_states=regulariser != "none")
            task_loss = out.loss.float()
            loss = task_loss
            if regulariser != "none":
                mask = batch["attention_mask"]
                if regulariser == "istar":
                    penalty = istar_penalty(token_points(out.hidden_states, mask), reference, settings.zeta)
                else:  # CosReg on the last layer's token states, as in the paper
                    penalty = cosine_penalty(out.hidden_states[-1][mask.bool()])
                loss = task_loss + lam * penalty
                sums["penalty"] += penalty.item()
            if not torch.isfinite(loss):
                raise FloatingPointError(f"non-finite loss at step {step} (task loss {task_loss.item()}); lower λ or the learning rate")
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            batches += 1
            sums["loss"] += loss.item()
            sums["task_loss"] += task_loss.item()
            progress.set_postfix(loss=f"{loss.item():.4f}")
        history.append({"epoch": epoch + 1, "step": step, **{k: v / max(batches, 1) for k, v in sums.items()}})
        log.info("epoch %d/%d: %s", epoch + 1, epochs, history[-1])
        state = {
            "signature": signature, "epoch": epoch, "step": step, "history": history,
            "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(), "rng": _rng_state(),
        }
        with atomic_path(checkpoint_path) as tmp:
            torch.save(state, tmp)
        if stop_after_epoch is not None and epoch == stop_after_epoch:
            raise TrainingInterrupted(f"stopped after epoch {epoch + 1} as asked; {checkpoint_path} holds the state")

    # Σ_S of the evaluation: up to reference_sample_size training token states per layer, as the
    # authors' code builds it (the validation-token reference is kept as an extra column)
    eval_reference = estimate_reference_covariance(
        model, train_features, tokenizer, settings.reference_sample_size, settings.eval_batch_size,
        device, seed=1_000_003 * (seed + 1) + 104_729, mixed_precision=mixed, per_layer=True,
    )
    evaluation = evaluate_model(model, tokenizer, spec, eval_table, eval_features, settings, device, mixed, references=eval_reference)
    return {
        "model": dataclasses.asdict(model_spec),
        "task": task,
        "regulariser": regulariser,
        "lambda": float(lam),
        "seed": seed,
        "metric_name": spec.primary_metric,
        "metric": evaluation["scores"][spec.primary_metric],
        **evaluation,
        "history": history,
        "settings": dataclasses.asdict(settings),
        "train_examples": len(train_table),
        "train_features": len(train_features),
        "steps": step,
        "device": describe_device(device),
        "wall_seconds": time.perf_counter() - started,
    }


def run_and_save(metrics_path: str | os.PathLike, **kwargs) -> dict[str, Any]:
    """Run :func:`finetune` into the folder of ``metrics_path``, write its metrics atomically, then
    drop the checkpoint unless ``settings.keep_checkpoint`` (it holds optimiser state: ~3× the model)."""
    metrics_path = Path(metrics_path)
    result = finetune(out_dir=metrics_path.parent, **kwargs)
    write_json(metrics_path, result)
    settings = kwargs.get("settings") or TrainingSettings()
    if not settings.keep_checkpoint:
        (metrics_path.parent / CHECKPOINT_NAME).unlink(missing_ok=True)
    return result


# ---------------------------------------------------------------------------------------------
# Evaluation


@torch.no_grad()
def evaluate_model(model, tokenizer, spec: TaskSpec, table: pd.DataFrame, features: Features, settings: TrainingSettings,
                   device: torch.device, mixed_precision: bool = False, references: torch.Tensor | None = None) -> dict[str, Any]:
    """Validation scores, IsoScore* per layer of the sentence embeddings and TwoNN of the last layer.

    Sentence embedding = the position-0 token ([CLS]) of each layer. IsoScore* shrinks each layer's
    covariance towards that layer's Σ_S (ζ = ``settings.eval_zeta``), which keeps it stable when
    there are fewer sentences than dims. ``references`` (layers × dim × dim) is Σ_S from up to
    ``reference_sample_size`` *training* token states, as the authors' code builds it
    (:func:`estimate_reference_covariance` with ``per_layer``): ``isoscore_star``. Σ_S over every
    non-padding *validation* token, our earlier choice, gives ``isoscore_star_validation_reference``.
    Without ``references``, ``isoscore_star`` is the validation-reference value.
    """
    was_training = model.training
    model.eval()
    outputs, sentence_chunks, sums, products, counts = [], [], None, None, 0
    for indices in tqdm(torch.arange(len(features)).split(settings.eval_batch_size), desc="validation", leave=False):
        batch = _to_device(collate(features, indices.tolist(), tokenizer), device)
        with _autocast(device, mixed_precision):
            out = model(**_model_inputs(batch), output_hidden_states=True)
        if spec.kind == "qa":
            outputs.append(torch.stack([out.start_logits, out.end_logits], dim=-1).float().cpu())
        else:
            outputs.append(out.logits.float().cpu())
        layers = torch.stack(tuple(out.hidden_states[1:])).float()  # layers × batch × tokens × dim
        sentence_chunks.append(layers[:, :, 0, :].cpu())
        tokens = layers[:, batch["attention_mask"].bool()].double()  # layers × tokens × dim
        if sums is None:
            sums = torch.zeros(tokens.shape[0], tokens.shape[2], dtype=torch.float64, device=tokens.device)
            products = torch.zeros(tokens.shape[0], tokens.shape[2], tokens.shape[2], dtype=torch.float64, device=tokens.device)
        sums += tokens.sum(dim=1)
        products += tokens.transpose(1, 2) @ tokens
        counts += tokens.shape[1]
    model.train(was_training)
    sentence = torch.cat(sentence_chunks, dim=1)  # layers × sentences × dim
    means = sums / counts
    validation_references = ((products - counts * means[:, :, None] * means[:, None, :]) / (counts - 1)).float().cpu()

    if spec.kind == "qa":
        logits = torch.cat(_pad_logits(outputs), dim=0).numpy()
        predictions = squad_predictions(table, features, logits[..., 0], logits[..., 1], settings.n_best, settings.max_answer_length)
        scores = squad_scores(predictions, table["answers"].tolist())
    else:
        logits = torch.cat(outputs, dim=0).numpy()
        scores = classification_scores(spec, logits, np.asarray(features.extra["labels"]))

    def per_layer(reference: torch.Tensor) -> list[float]:
        return [float(metrics.isoscore_star(sentence[layer], reference[layer], zeta=settings.eval_zeta)) for layer in range(sentence.shape[0])]

    on_validation = per_layer(validation_references)
    if references is not None and tuple(references.shape) != tuple(validation_references.shape):
        raise ValueError(f"training Σ_S has shape {tuple(references.shape)}; the model's layers need {tuple(validation_references.shape)}")
    isoscores = per_layer(references.float().cpu()) if references is not None else on_validation
    last = sentence[-1].numpy()
    return {
        "scores": scores,
        "isoscore_star_layers": isoscores,
        "isoscore_star": isoscores[-1],
        "isoscore_star_reference": "training tokens" if references is not None else "validation tokens",
        "isoscore_star_layers_validation_reference": on_validation,
        "isoscore_star_validation_reference": on_validation[-1],
        "twonn": float(metrics.twonn_dimension(torch.from_numpy(last))),
        "eval_sentences": int(sentence.shape[1]),
        "embedding_dim": int(sentence.shape[2]),
    }


def _pad_logits(chunks: list[torch.Tensor]) -> list[torch.Tensor]:
    # Dynamic padding gives each QA batch its own length; pad logits with -inf to the longest.
    width = max(c.shape[1] for c in chunks)
    return [torch.nn.functional.pad(c, (0, 0, 0, width - c.shape[1]), value=-float("inf")) for c in chunks]


def classification_scores(spec: TaskSpec, logits: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """GLUE-style scores, the definitions of the ``evaluate`` glue metric (scikit-learn, scipy)."""
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

    if spec.kind == "regression":
        predictions = logits.reshape(-1)
        return {"pearson": float(pearsonr(predictions, labels)[0]), "spearmanr": float(spearmanr(predictions, labels)[0])}
    predictions = logits.argmax(axis=-1)
    scores = {"accuracy": float(accuracy_score(labels, predictions))}
    if spec.name in ("mrpc", "qqp"):
        scores["f1"] = float(f1_score(labels, predictions))
    if spec.name == "cola":
        scores["matthews_correlation"] = float(matthews_corrcoef(labels, predictions))
    return scores


def squad_predictions(table: pd.DataFrame, features: Features, start_logits: np.ndarray, end_logits: np.ndarray,
                      n_best: int = 20, max_answer_length: int = 30) -> list[str]:
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
                    if offsets[s] is None or offsets[e] is None or e < s or e - s + 1 > max_answer_length:
                        continue
                    score = start_logits[feature][s] + end_logits[feature][e]
                    if score > best_score:
                        best_score, best_text = score, context[offsets[s][0]:offsets[e][1]]
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


def squad_scores(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Exact match and F1 as fractions in [0, 1] (the official script's percentages / 100, so runs.csv
    and Figure 6 average every task on one scale), each the best over an example's gold answers
    (SQuAD v1.1 official script; computed here because ``evaluate`` cannot fetch its metric script
    offline)."""
    if len(predictions) != len(references) or not predictions:
        raise ValueError(f"need one prediction per example, got {len(predictions)} predictions for {len(references)} examples")
    exact = [max(float(normalize_answer(p) == normalize_answer(g)) for g in gold) for p, gold in zip(predictions, references)]
    f1 = [max(squad_f1(p, g) for g in gold) for p, gold in zip(predictions, references)]
    return {"exact_match": float(np.mean(exact)), "f1": float(np.mean(f1))}


# ---------------------------------------------------------------------------------------------
# Study layout and collection


def run_grid(section: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the study (config ``istar``): the baseline at λ = 0 plus each regulariser × λ."""
    runs = []
    for model in run_models(section):
        for task in section["tasks"]:
            for regulariser in section["regularisers"]:
                lams = [0.0] if regulariser == "none" else section["lambdas"]
                for lam in lams:
                    for seed in section["seeds"]:
                        runs.append({"model": model, "task": task, "regulariser": regulariser, "lam": format_lambda(lam), "seed": seed})
    return runs


def run_models(section: dict[str, Any]) -> list[str]:
    """The models the study fine-tunes: ``run_models`` (null = every entry of ``models``)."""
    names = section.get("run_models") or list(section["models"])
    unknown = [n for n in names if n not in section["models"]]
    if unknown:
        raise ValueError(f"istar.run_models names {unknown}, which istar.models does not define (defined: {sorted(section['models'])})")
    return list(names)


def run_path(run: dict[str, Any], artefact: str = "metrics.json") -> str:
    return f"results/istar/{run['model']}/{run['task']}/{run['regulariser']}_{run['lam']}/seed{run['seed']}/{artefact}"


# isoscore_star: Σ_S from training token states (the authors' evaluation); the validation-token
# reference is kept as isoscore_star_validation_reference.
RUN_COLUMNS = ["model", "task", "regulariser", "lambda", "seed", "metric_name", "metric", "isoscore_star", "isoscore_star_validation_reference", "twonn"]


def _validation_reference(record: dict, path: str | os.PathLike) -> float:
    if "isoscore_star_validation_reference" not in record:
        raise ValueError(f"{path} predates IsoScore* with the training-token Σ_S (its isoscore_star used validation tokens); delete it so that rule finetune re-runs and re-evaluates")
    return record["isoscore_star_validation_reference"]


def collect_runs(metrics_files: Iterable[str | os.PathLike], model_names: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per run (runs.csv): the config name of the model, task, regulariser, λ, seed, the
    task's headline metric, IsoScore* (ζ = 0.75, last layer's sentence embeddings) and TwoNN.

    ``model_names`` gives each file's config model name (the metrics hold only its source).
    Per-layer IsoScore* goes to columns ``isoscore_star_layer<k>`` (k = 1 … layers).
    """
    import json

    rows = []
    files = list(metrics_files)
    if model_names is not None and len(model_names) != len(files):
        raise ValueError(f"{len(model_names)} model names for {len(files)} metrics files")
    for i, path in enumerate(files):
        record = json.loads(Path(path).read_text())
        model = model_names[i] if model_names is not None else (record["model"].get("path") or record["model"]["model"])
        row = {
            "model": model, "task": record["task"], "regulariser": record["regulariser"], "lambda": record["lambda"],
            "seed": record["seed"], "metric_name": record["metric_name"], "metric": record["metric"],
            "isoscore_star": record["isoscore_star"], "isoscore_star_validation_reference": _validation_reference(record, path),
            "twonn": record["twonn"],
        }
        for layer, value in enumerate(record["isoscore_star_layers"], start=1):
            row[f"isoscore_star_layer{layer}"] = value
        for name, value in record["scores"].items():
            row[f"score_{name}"] = value
        rows.append(row)
    if not rows:
        raise ValueError("no I-STAR runs to collect")
    table = pd.DataFrame(rows)
    if table[["metric", "isoscore_star", "twonn"]].isna().any().any():
        bad = table[table[["metric", "isoscore_star", "twonn"]].isna().any(axis=1)]
        raise ValueError(f"NaN metric, IsoScore* or TwoNN in runs:\n{bad[RUN_COLUMNS].to_string()}")
    return table.sort_values(["model", "task", "regulariser", "lambda", "seed"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# Workflow helpers (rules/istar.smk)


def model_spec(section: dict[str, Any], name: str) -> ModelSpec:
    """The :class:`ModelSpec` of config ``istar.models.<name>``."""
    try:
        entry = section["models"][name]
    except KeyError:
        raise ValueError(f"I-STAR model {name!r} is not defined under istar.models (defined: {sorted(section['models'])})") from None
    return ModelSpec(model=entry.get("model"), revision=entry.get("revision"), path=entry.get("path"))


def study_outputs(section: dict[str, Any] | None) -> list[str]:
    """The study's final files: runs.csv and Figures 5-7 (Figure 7 only when its task is run)."""
    if not section:
        return []
    outputs = ["results/istar/runs.csv"]
    figures = ["figure5", "figure6"] + (["figure7"] if section["figure7_task"] in section["tasks"] else [])
    for figure in figures:
        outputs += [f"results/istar/{figure}.pdf", f"results/istar/{figure}.png", f"results/istar/{figure}.csv"]
    return outputs
