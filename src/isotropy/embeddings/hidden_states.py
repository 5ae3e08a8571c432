"""Hidden states of a pretrained transformer: every layer for token instances (Cai et al.),
or one layer per sentence (Rajaee & Pilehvar's token-level STS)."""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Self

import numpy as np

from isotropy.io import open_npz, save_npz
from isotropy.logs import ProgressLog
from isotropy.models import ModelSpec, load_pretrained

log = logging.getLogger(__name__)


def load_tokenizer(spec: ModelSpec):
    """The model's tokenizer, ready to batch: one without a padding token pads with its
    end-of-text (GPT-2) or unknown token (OpenAI GPT), which the attention mask keeps out."""
    from transformers import AutoTokenizer

    tokenizer = load_pretrained(spec, AutoTokenizer.from_pretrained)
    if tokenizer.pad_token is None:
        filler = tokenizer.eos_token or tokenizer.unk_token
        if filler is None:
            raise ValueError(
                f"tokenizer of model {spec.name!r} has no padding, end-of-text or unknown token; "
                "cannot batch"
            )
        tokenizer.pad_token = filler
    return tokenizer


def load_hidden_state_model(spec: ModelSpec, device: Any = "cpu"):
    """``(tokenizer, model)``, the model in eval mode on ``device``, returning all hidden states."""
    from transformers import AutoModel

    tokenizer = load_tokenizer(spec)  # first: a missing local folder is named here
    model = load_pretrained(spec, AutoModel.from_pretrained, output_hidden_states=True)
    model.to(device)
    model.eval()
    return tokenizer, model


def tokenize_batch(tokenizer, sentences: Sequence[str], max_length: int):
    encoded = tokenizer(
        list(sentences),
        padding=True,
        truncation=True,
        max_length=max_length,
        return_tensors="pt",
        return_special_tokens_mask=True,
    )
    special = encoded.pop("special_tokens_mask")
    # Only the inputs the model declares (DistilBERT rejects token_type_ids).
    inputs = {key: value for key, value in encoded.items() if key in tokenizer.model_input_names}
    return inputs, special


@dataclass
class ArrayRecord:
    """A dataclass of arrays as one ``.npz`` file, an array per field (defaulted ones optional)."""

    def save(self, path: str | os.PathLike) -> None:
        save_npz(path, **{f.name: np.asarray(getattr(self, f.name)) for f in fields(self)})

    @classmethod
    def load(cls, path: str | os.PathLike) -> Self:
        with open_npz(path) as data:  # default is default_factory: both MISSING, a required field
            kept = [f.name for f in fields(cls) if f.name in data or f.default is f.default_factory]
            return cls(**{name: data[name] for name in kept})


@dataclass
class TokenEmbeddings(ArrayRecord):
    """Contextual embeddings of token instances at every layer: ``layers[l, i]`` is instance
    ``i`` at layer ``l`` (0 = the embedding layer), with its vocabulary id, string and sentence."""

    layers: np.ndarray
    token_ids: np.ndarray
    tokens: np.ndarray
    sentence_index: np.ndarray

    @property
    def n_layers(self) -> int:
        return self.layers.shape[0]


def extract_token_embeddings(
    sentences: Sequence[str],
    tokenizer,
    model,
    *,
    device: Any = "cpu",
    batch_size: int = 32,
    max_length: int = 128,
    max_per_type: int | None = None,
    max_tokens: int | None = None,
) -> TokenEmbeddings:
    """Hidden states of every layer for the token instances of ``sentences``, special tokens
    skipped: the first ``max_per_type`` instances of a type (frequent function words must not
    swamp the sample), until ``max_tokens`` are kept."""
    import torch

    counts: Counter[int] = Counter()
    chunks: list[np.ndarray] = []
    kept_ids: list[int] = []
    kept_sentences: list[int] = []
    logged = ProgressLog(len(sentences), "token embeddings, sentences read")  # time left
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start : start + batch_size]
        inputs, special = tokenize_batch(tokenizer, batch, max_length)
        room = None if max_tokens is None else max_tokens - len(kept_ids)
        rows, cols = _pick_tokens(inputs, special, counts, max_per_type, room)
        if rows:
            kept_ids.extend(int(inputs["input_ids"][b, t]) for b, t in zip(rows, cols))
            kept_sentences.extend(start + b for b in rows)
            hidden = torch.stack(_hidden_states(model, inputs, device))  # (layers, batch, time, d)
            chunks.append(hidden[:, rows, cols].float().cpu().numpy())
        # Extraction stops at max_tokens: the work done is whichever limit is nearer.
        read = (start + len(batch)) / len(sentences)
        share = min(1.0, max(read, len(kept_ids) / max_tokens) if max_tokens else read)
        logged.update(len(batch), share=share if max_tokens else None)
        if max_tokens is not None and len(kept_ids) >= max_tokens:
            break
    read = max(kept_sentences, default=-1) + 1
    kept = f"{len(counts)} types, from the first {read} of {len(sentences)} sentences"
    return _token_embeddings(chunks, kept_ids, kept_sentences, tokenizer, kept)


def _pick_tokens(
    inputs, special, counts: Counter[int], max_per_type: int | None, room: int | None
) -> tuple[list[int], list[int]]:
    """(batch rows, positions) of a batch's tokens kept, in corpus order, within ``max_per_type``
    per type (``counts`` updated) and ``room`` in all."""
    keep = inputs["attention_mask"].bool() & ~special.bool()
    input_ids = inputs["input_ids"]
    rows: list[int] = []
    cols: list[int] = []
    for b, t in keep.nonzero().tolist():  # row-major: corpus order
        token_id = int(input_ids[b, t])
        if max_per_type is not None and counts[token_id] >= max_per_type:
            continue
        if room is not None and len(rows) >= room:
            break
        counts[token_id] += 1
        rows.append(b)
        cols.append(t)
    return rows, cols


def _hidden_states(model, inputs, device: Any):
    """The model's hidden states of one batch (a (batch, time, dim) tensor a layer)."""
    import torch

    with torch.inference_mode():
        return model(**{key: value.to(device) for key, value in inputs.items()}).hidden_states


def _token_embeddings(
    chunks: list[np.ndarray], ids: list[int], index: list[int], tokenizer, kept: str
) -> TokenEmbeddings:
    """The kept instances' states, token ids and sentence (or window) index, checked."""
    if not chunks:
        raise ValueError(f"no token left after skipping special tokens: {kept}")
    layers = np.concatenate(chunks, axis=1).astype(np.float32, copy=False)
    if not np.isfinite(layers).all():
        raise ValueError("the model produced non-finite hidden states")
    n_layers, n_kept, dim = layers.shape
    log.info("kept %d token instances (%s), %d layers (dim %d)", n_kept, kept, n_layers, dim)
    token_ids = np.asarray(ids, dtype=np.int64)
    tokens = np.asarray(tokenizer.convert_ids_to_tokens(token_ids.tolist()), dtype=str)
    return TokenEmbeddings(layers, token_ids, tokens, np.asarray(index, dtype=np.int64))


def token_states_by_sentence(
    sentences: Sequence[str],
    tokenizer,
    model,
    *,
    drop_special: bool = True,
    desc: str = "STS token states",
    device: Any = "cpu",
    batch_size: int = 32,
    max_length: int = 128,
    layer: int = -1,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """One layer's hidden states of every sentence's tokens, padding (and with ``drop_special``
    the special tokens, as Rajaee & Pilehvar) removed, batched by length: ``(tokens, offsets)``,
    float32 (T, d), sentence i's tokens at ``offsets[i]:offsets[i+1]``."""
    per_sentence: dict[int, np.ndarray] = {}
    order = np.argsort([len(s) for s in sentences], kind="stable")
    logged = ProgressLog(len(sentences), desc, every=30.0 if progress else float("inf"))
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        inputs, special = tokenize_batch(tokenizer, [sentences[i] for i in rows], max_length)
        hidden = _hidden_states(model, inputs, device)
        keep = inputs["attention_mask"].bool()
        if drop_special:
            keep &= ~special.bool()
        keep = keep.numpy()
        states = hidden[layer].float().cpu().numpy()
        for b, i in enumerate(rows):
            per_sentence[i] = states[b][keep[b]]
        logged.update(len(rows))
    filled = [per_sentence[i] for i in range(len(sentences))]  # the batches cover every row
    lengths = np.array([len(t) for t in filled], dtype=np.int64)
    tokens = np.concatenate(filled).astype(np.float32, copy=False)
    if not np.isfinite(tokens).all():
        raise ValueError("the model produced non-finite hidden states")
    return tokens, np.concatenate([[0], np.cumsum(lengths)])


def text_windows(
    text: str, tokenizer, window: int = 512, max_windows: int | None = None
) -> list[list[int]]:
    """Cai et al.'s input: the running text tokenized once and cut into contiguous blocks of
    ``window`` tokens, the model's special tokens included; an incomplete last block is dropped,
    as their code does. At most ``max_windows`` blocks (None: all)."""
    # The special tokens around one sequence ([CLS] / [SEP] for BERT, none for GPT-2), read off a
    # one-word encoding.
    bare = tokenizer("a", add_special_tokens=False)["input_ids"]
    framed = tokenizer("a", add_special_tokens=True)["input_ids"]
    at = next((i for i in range(len(framed)) if framed[i : i + len(bare)] == bare), None)
    if at is None:
        name = type(tokenizer).__name__
        raise ValueError(f"cannot find where {name} puts the text among its special tokens")
    prefix, suffix = framed[:at], framed[at + len(bare) :]
    block = window - len(prefix) - len(suffix)
    if block < 1:
        raise ValueError(f"a window of {window} tokens leaves no room beside the special tokens")
    ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
    starts = range(0, len(ids) - block + 1, block)
    if not starts:
        raise ValueError(
            f"the corpus has {len(ids)} tokens: fewer than one window of {block} "
            "(geometry.clusters.corpus.windows)"
        )
    chosen = list(starts)[:max_windows] if max_windows else list(starts)
    return [prefix + ids[s : s + block] + suffix for s in chosen]


def extract_window_embeddings(
    text: str,
    tokenizer,
    model,
    *,
    window: int = 512,
    max_windows: int | None = None,
    device: Any = "cpu",
    batch_size: int = 8,
) -> TokenEmbeddings:
    """Hidden states of every layer at every position of :func:`text_windows` (special tokens
    included, no cap per type: Cai et al.'s protocol); ``sentence_index`` is the window."""
    import torch

    windows = text_windows(text, tokenizer, window, max_windows)
    logged = ProgressLog(len(windows), "token embeddings, windows")
    chunks, ids, index = [], [], []
    for start in range(0, len(windows), batch_size):
        batch = torch.tensor(windows[start : start + batch_size])
        inputs = {"input_ids": batch, "attention_mask": torch.ones_like(batch)}
        hidden = torch.stack(_hidden_states(model, inputs, device))  # (layers, batch, window, dim)
        chunks.append(hidden.flatten(1, 2).float().cpu().numpy())
        ids += batch.flatten().tolist()
        index += [start + b for b in range(len(batch)) for _ in range(batch.shape[1])]
        logged.update(len(batch))
    kept = f"every position of {len(windows)} windows of {len(windows[0])} tokens"
    return _token_embeddings(chunks, ids, index, tokenizer, kept)
