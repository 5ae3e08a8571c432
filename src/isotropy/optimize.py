"""Direct optimisation of an embedding table with a linear classifier (paper section 3, appendix A).

The trainable parameters are the embeddings themselves, one row per unique text, initialised
from a pretrained encoder's vectors, plus a linear classifier. Training is full batch with Adam
at PyTorch's defaults. After every ``metric_stride``-th update we record the per-update metrics
of :mod:`isotropy.metrics.registry`: IsoScore of the table and the silhouette of the classified
representations with respect to the labels.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import pandas as pd
import pydantic
import torch
from pydantic import ConfigDict, NonNegativeInt, PositiveFloat, PositiveInt, field_validator
from torch import nn

from isotropy import metrics
from isotropy.configuration.base import Seed
from isotropy.configuration.optimisation import Optimisation
from isotropy.io import atomic_path, write_json
from isotropy.logs import duration
from isotropy.metrics import registry
from isotropy.traces import evaluates, evaluation_count

log = logging.getLogger(__name__)


@dataclass
class Problem:
    """A classification task over rows of an embedding table: ``left``/``right`` index each item's
    text(s) (``right`` None for single texts); ``targets`` are class ids or a 0/1 (multi-label)."""

    vectors: np.ndarray
    left: np.ndarray
    right: np.ndarray | None
    targets: np.ndarray
    label_names: list[str]
    multilabel: bool
    dropped_items: int = 0

    @property
    def items(self) -> int:
        return len(self.left)

    @property
    def rows(self) -> int:
        return self.vectors.shape[0]

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]


def build_problem(table: pd.DataFrame, index: pd.Series, vectors: np.ndarray) -> Problem:
    """Join a prepared table to its embeddings: items with a text lacking a vector are dropped and
    counted; only rows some item uses are kept (exactly the data set's unique texts)."""
    pair = "text_pair" in table.columns
    multilabel = "labels" in table.columns
    if not multilabel and "label" not in table.columns:
        raise ValueError(
            f"prepared table needs a 'label' or 'labels' column; found {list(table.columns)}"
        )
    position = pd.Series(np.arange(len(index)), index=pd.Index(index.astype(str)))
    if position.index.has_duplicates:
        raise ValueError("the embedding index lists a text twice; re-run the embedding step")
    left = table["text"].astype(str).map(position)
    right = table["text_pair"].astype(str).map(position) if pair else None
    keep = left.notna() & right.notna() if right is not None else left.notna()
    dropped = int((~keep).sum())
    if dropped:
        log.warning(
            "%d of %d items have a text without a vector and are dropped", dropped, len(table)
        )
    table = table[keep]
    if len(table) < 2:
        raise ValueError(f"only {len(table)} items have vectors; need at least 2")
    left_rows = left[keep].to_numpy(dtype=np.int64)
    right_rows = right[keep].to_numpy(dtype=np.int64) if right is not None else None

    # Keep only used rows and renumber, so `rows` counts the data set's own unique texts.
    used = np.unique(np.concatenate([left_rows, right_rows]) if pair else left_rows)
    renumber = np.full(len(index), -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    table_vectors = np.ascontiguousarray(np.asarray(vectors)[used], dtype=np.float32)

    if multilabel:
        label_names = sorted({label for labels in table["labels"] for label in labels})
        column = {name: i for i, name in enumerate(label_names)}
        targets = np.zeros((len(table), len(label_names)), dtype=np.float32)
        for i, labels in enumerate(table["labels"]):
            if len(labels) == 0:
                raise ValueError(f"item {table.index[i]} has an empty label set")
            targets[i, [column[label] for label in labels]] = 1.0
    else:
        label_names = sorted(table["label"].astype(str).unique())
        if len(label_names) < 2:
            raise ValueError(f"a classification task needs at least 2 labels; found {label_names}")
        targets = np.array(
            table["label"].astype(str).map({name: i for i, name in enumerate(label_names)}),
            dtype=np.int64,
        )
    return Problem(
        vectors=table_vectors,
        left=renumber[left_rows],
        right=renumber[right_rows] if pair else None,
        targets=targets,
        label_names=label_names,
        multilabel=multilabel,
        dropped_items=dropped,
    )


def problem_from_files(
    table: pd.DataFrame, vectors_path: str | os.PathLike, index_path: str | os.PathLike
) -> Problem:
    """:func:`build_problem` for a prepared table and its embeddings' files (checked as they
    load: :func:`isotropy.embeddings.texts.load_embeddings`)."""
    from isotropy.embeddings.texts import load_embeddings

    vectors, index = load_embeddings(vectors_path, index_path)
    return build_problem(table, index, vectors)


def save_run(trace: pd.DataFrame, summary: dict, trace_path, summary_path) -> None:
    """A run's trace (parquet) and summary (JSON), each written whole or not at all."""
    with atomic_path(trace_path) as tmp:
        trace.to_parquet(tmp, index=False)
    write_json(summary_path, summary)


@pydantic.dataclasses.dataclass(frozen=True)
class Head:
    """What sits on the table (the extension study, docs/extensions.md): ``hidden_layers`` layers
    of ``width`` units (None: the representation's width) with ``activation`` before the linear
    classifier, or no classifier at all (``objective`` "triplet": a triplet margin loss over the
    labels, ``margin`` and one positive and one negative per anchor drawn each update). The
    default is the paper's linear classifier with cross-entropy (or per-label BCE)."""

    hidden_layers: NonNegativeInt = 0
    width: PositiveInt | None = None
    activation: Literal["tanh", "relu", "gelu"] = "tanh"  # the keys of ACTIVATIONS
    objective: Literal["classifier", "triplet"] = "classifier"
    margin: PositiveFloat = 1.0

    def __post_init__(self) -> None:
        if self.objective == "triplet" and self.hidden_layers:
            raise ValueError("the triplet objective has no classifier, hence no hidden layers")


LINEAR = Head()  # the paper's head

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "gelu": nn.GELU}


class EmbeddingClassifier(nn.Module):
    """A trainable embedding table and a classifier over rows (or ``[u; v]`` for pairs): linear,
    or after the hidden layers of a :class:`Head`; none for the triplet objective."""

    def __init__(
        self, vectors: np.ndarray, n_outputs: int, pair: bool, bias: bool, head: Head = LINEAR
    ):
        super().__init__()
        self.embeddings = nn.Embedding.from_pretrained(
            torch.as_tensor(vectors).clone(), freeze=False
        )
        self.pair = pair
        width_in = vectors.shape[1] * (2 if pair else 1)
        width = head.width or width_in
        self.hidden = nn.ModuleList(
            nn.Sequential(
                nn.Linear(width_in if i == 0 else width, width), ACTIVATIONS[head.activation]()
            )
            for i in range(head.hidden_layers)
        )
        top = width if head.hidden_layers else width_in
        self.classifier = (
            nn.Linear(top, n_outputs, bias=bias) if head.objective == "classifier" else None
        )

    def representations(self, left: torch.Tensor, right: torch.Tensor | None) -> torch.Tensor:
        u = self.embeddings(left)
        return torch.cat([u, self.embeddings(right)], dim=1) if self.pair else u

    def hidden_states(self, points: torch.Tensor) -> list[torch.Tensor]:
        """Every hidden layer's output for representations ``points``, bottom first."""
        states = []
        for layer in self.hidden:
            points = layer(points)
            states.append(points)
        return states

    def forward(self, left: torch.Tensor, right: torch.Tensor | None) -> torch.Tensor:
        if self.classifier is None:
            raise ValueError(
                "this model has no classifier (triplet objective): use representations"
            )
        points = self.representations(left, right)
        return self.classifier([points, *self.hidden_states(points)][-1])


# The settings a run's summary records, in its order.
RECORDED = (
    *("updates", "learning_rate", "bias", "metric_stride", "metric_sample_size", "seed"),
    *("extra", "extra_metrics"),
)


class OptimisationSettings(Optimisation):
    """Everything that decides a run: its study's keys (:class:`Optimisation`, whose defaults
    and bounds it takes), less the seeds, plus the run's own; recorded in its summary."""

    model_config = ConfigDict(strict=False)
    bias: bool = True
    seed: Seed = 0
    progress: bool = True
    extra: dict = {}
    # Optional metrics of the registry (registry.OPTIONAL_METRICS) recorded after the default ones.
    extra_metrics: tuple[str, ...] = ()  # type: ignore[assignment]

    @field_validator("extra_metrics")
    @classmethod
    def _registered(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        registry.optional_metrics(names)  # refuses an unknown name now
        return names

    def records(self, step: int) -> bool:
        """Whether the state after ``step`` updates is evaluated and recorded."""
        return evaluates(step, self.updates, self.metric_stride)

    @property
    def evaluations(self) -> int:
        """How many states a run evaluates, step 0 included."""
        return evaluation_count(self.updates, self.metric_stride)


def _sample(n: int, size: int | None, generator: torch.Generator) -> np.ndarray | None:
    """A fresh random subset of ``size`` of ``n`` indices (host array), or None for all."""
    if size is None or size >= n:
        return None
    return torch.randperm(n, generator=generator)[:size].numpy()


# Recorded values and training losses reach the host once per this many updates: one device sync
# per batch instead of several per update. A diverged run is caught at the next batch.
_FLUSH_EVERY = 100
_PROGRESS = "update %d/%d (%.0f%%): %s elapsed, about %s left"


class _TraceBuffer:
    """Per-step records (the registry's trace columns, by name) kept on the device and copied to
    the host in batches, with every update's training loss: a non-finite loss is reported with
    the update where it first appeared without a per-update ``isfinite`` check on the host."""

    def __init__(self, updates: int, device: torch.device, extra_columns: tuple[str, ...] = ()):
        self.columns = registry.trace_columns() + tuple(extra_columns)
        self.train_losses = torch.empty(updates, dtype=torch.float64, device=device)
        self.checked = 0  # updates whose training loss has been checked
        self.pending_steps: list[int] = []
        self.pending: list[torch.Tensor] = []
        self.records: list[dict] = []

    def add(self, step: int, values: dict[str, torch.Tensor]) -> None:
        self.pending_steps.append(step)
        self.pending.append(
            torch.stack([values[name].detach().to(torch.float64) for name in self.columns])
        )

    def flush(self, updates_done: int) -> None:
        """Copy what is pending to the host (one sync) and check it; raise on a non-finite value."""
        losses = self.train_losses[self.checked : updates_done].cpu().numpy()
        bad = np.flatnonzero(~np.isfinite(losses))
        if len(bad):
            update = self.checked + int(bad[0]) + 1
            raise FloatingPointError(
                f"loss became {losses[bad[0]]} at update {update}; lower the learning rate"
            )
        self.checked = updates_done
        if not self.pending:
            return
        values = torch.stack(self.pending).cpu().numpy()
        for step, row in zip(self.pending_steps, values):
            record = {"step": step, **dict(zip(self.columns, row.tolist()))}
            bad_columns = [name for name in self.columns if not np.isfinite(record[name])]
            if bad_columns:
                raise FloatingPointError(
                    f"{', '.join(bad_columns)} is not finite at step {step} (overflowing values or "
                    "identical points); lower the learning rate or check the input vectors"
                )
            self.records.append(record)
        self.pending_steps, self.pending = [], []

    def frame(self, seed: int) -> pd.DataFrame:
        """The recorded steps as the run's trace table, tagged with its seed."""
        trace = pd.DataFrame.from_records(self.records)
        trace.insert(0, "seed", seed)
        return trace


@dataclass
class _Batch:
    """The whole training set on the device: item rows of the table, and their targets."""

    left: torch.Tensor
    right: torch.Tensor | None
    targets: torch.Tensor
    multilabel: bool

    @classmethod
    def of(cls, problem: Problem, device: torch.device) -> _Batch:
        tensor = functools.partial(torch.as_tensor, device=device)
        right = None if problem.right is None else tensor(problem.right)
        return cls(tensor(problem.left), right, tensor(problem.targets), problem.multilabel)

    def accuracy(self, logits: torch.Tensor) -> torch.Tensor:
        logits = logits.detach()
        if self.multilabel:
            return ((logits > 0) == (self.targets > 0.5)).all(dim=1).float().mean()
        return (logits.argmax(dim=1) == self.targets).float().mean()


class ClassifiedItems:
    """The classified items on the device with their label clusters (class ids, or one cluster per
    distinct label vector): every item, the clusters' layout prepared once, or with
    ``sample_size`` a fresh sample per call drawn from ``sampler``."""

    def __init__(self, problem: Problem, device, sample_size, sampler, batch: _Batch | None = None):
        self.batch, self.device = batch or _Batch.of(problem, device), torch.device(device)
        self.clusters = metrics.cluster_ids(problem.targets)
        self.sample_size, self.sampler = sample_size, sampler
        sampled = sample_size is not None and sample_size < problem.items
        self.layout = None if sampled else metrics.cluster_layout(self.clusters, self.device)

    def representations(self, model: EmbeddingClassifier):
        """The items' representations (a sample where asked) and their cluster layout."""
        left, right = self.batch.left, self.batch.right
        items = _sample(len(self.clusters), self.sample_size, self.sampler)
        if items is None:
            return model.representations(left, right), self.layout
        picked = metrics.to_device(items, self.device)
        points = model.representations(left[picked], right[picked] if right is not None else None)
        return points, metrics.cluster_layout(self.clusters[items], self.device)


class _PerUpdateMetrics:
    """The registered per-update metrics (:mod:`isotropy.metrics.registry`) of one run.

    Label structures are prepared once; with ``metric_sample_size`` every evaluation draws a fresh
    sample per metric, in registry order, from a generator apart from training's randomness.
    """

    def __init__(self, problem: Problem, settings: OptimisationSettings, device, batch: _Batch):
        chosen = registry.trace_metrics()
        if settings.extra_metrics:
            chosen += registry.optional_metrics(settings.extra_metrics)
        self.entries = [(metric, metric.tensor_function()) for metric in chosen]
        self.extra_columns = tuple(settings.extra_metrics)
        self.device, self.sample_size = device, settings.metric_sample_size
        self.sampler = torch.Generator().manual_seed(10_000 + settings.seed)
        self.items = ClassifiedItems(problem, device, self.sample_size, self.sampler, batch)
        # A fresh sample per evaluation reads the host's generator: not replayable as a graph.
        sampled = self.items.layout is None
        self.graph = _GraphedEvaluation() if device.type == "cuda" and not sampled else None

    def evaluate_state(self, model: EmbeddingClassifier) -> dict[str, torch.Tensor]:
        """:meth:`evaluate`, as a CUDA graph where it can be (:class:`_GraphedEvaluation`)."""
        if self.graph is None:
            return self.evaluate(model)
        values = self.graph(lambda: self.evaluate(model))
        if values is None:  # not capturable here: evaluate as launched, from now on
            self.graph = None
            return self.evaluate(model)
        return values

    def evaluate(self, model: EmbeddingClassifier) -> dict[str, torch.Tensor]:
        """Every metric of the model's current state, as 0-d device tensors (no host sync)."""
        with torch.no_grad():
            values = {}
            for metric, function in self.entries:
                if metric.points == "table":
                    values[metric.name] = function(self._table(model))
                else:
                    points, layout = self.items.representations(model)
                    values[metric.name] = (
                        function(points, layout) if metric.labels else function(points)
                    )
            return values

    def _table(self, model: EmbeddingClassifier) -> torch.Tensor:
        table = model.embeddings.weight.detach()
        rows = _sample(table.shape[0], self.sample_size, self.sampler)
        return table if rows is None else table[metrics.to_device(rows, self.device)]


class _GraphedEvaluation:
    """One state's metrics captured once as a CUDA graph and replayed at every recorded step.

    Evaluated as launched, the silhouette and IsoScore are a few hundred small kernels, and on an
    H100 their launch from Python, not the GPU's work, set the update's wall time (benchmarks/
    optimize.py: 3.1 ms of GPU work in a 9.1 ms update, 350 launches). The graph replays the same
    kernels on the same storage: the model's parameters, which Adam updates in place, and the
    item rows. Values are copied out of the graph's outputs, which the next replay overwrites.
    """

    def __init__(self) -> None:
        self.graph: torch.cuda.CUDAGraph | None = None
        self.outputs: dict[str, torch.Tensor] = {}

    def __call__(self, evaluate) -> dict[str, torch.Tensor] | None:
        """The metrics of the current state; None when the evaluation cannot be captured."""
        if self.graph is None and not self._capture(evaluate):
            return None
        assert self.graph is not None
        self.graph.replay()
        return {name: value.clone() for name, value in self.outputs.items()}

    def _capture(self, evaluate) -> bool:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the default stream: caches, cuBLAS handles
            for _ in range(2):
                evaluate()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                self.outputs = evaluate()
        except RuntimeError as error:  # a host sync in a metric: say so, and launch as before
            log.warning("metrics not captured as a CUDA graph (%s); evaluating as launched", error)
            return False
        self.graph = graph
        return True


class Probe(Protocol):
    """Extra per-step measurements of the model's state, recorded beside the registry's metrics.

    ``columns`` names them; a call returns one 0-d tensor per column (no host sync), under
    ``torch.no_grad``. Called at exactly the recorded steps.
    """

    columns: tuple[str, ...]

    def __call__(self, model: EmbeddingClassifier) -> dict[str, torch.Tensor]: ...


class Section2Probe:
    """The main paper's section 2 quantities after each recorded update (a :class:`Probe`): Eq. (1)
    (mean inter- minus intra-cluster distance), Eq. (3) per item, the intra-class spread and the
    distance of each item to its class's weight vector, on every classified item
    (:func:`isotropy.metrics.objectives.section2_state`). Quadratic in the items like the exact
    silhouette: a study records them when it sets ``section2_metrics``."""

    def __init__(self, problem: Problem, device: torch.device):
        from isotropy.metrics import objectives

        self.columns = objectives.SECTION2_COLUMNS
        self._state = objectives.section2_state
        self.batch = _Batch.of(problem, device)
        targets = np.asarray(problem.targets)
        eye = np.eye(len(problem.label_names), dtype=np.float32)  # class ids to indicator rows
        indicator = targets.astype(np.float32) if problem.multilabel else eye[targets]
        self.indicator = torch.as_tensor(indicator, device=device)
        self.clusters = torch.as_tensor(metrics.cluster_ids(problem.targets), device=device)

    def __call__(self, model: EmbeddingClassifier) -> dict[str, torch.Tensor]:
        with torch.no_grad():
            points = model.representations(self.batch.left, self.batch.right)
            if model.classifier is None:
                raise ValueError("the section 2 quantities need a classifier's weights")
            return self._state(points, self.indicator, self.clusters, model.classifier.weight)


class _ClassifierObjective:
    """The paper's loss: cross-entropy or per-label BCE of the classifier's logits."""

    def __init__(self, problem: Problem, batch: _Batch):
        self.batch = batch
        self.loss_fn = nn.BCEWithLogitsLoss() if problem.multilabel else nn.CrossEntropyLoss()

    def __call__(self, model: EmbeddingClassifier):
        logits = model(self.batch.left, self.batch.right)
        return self.loss_fn(logits, self.batch.targets), lambda: self.batch.accuracy(logits)


class _TripletObjective:
    """A triplet margin loss over the labels (Head.objective "triplet"): every item is an anchor
    each update, with one positive (an item of its cluster, drawn with itself) and one negative
    (an item of another cluster) drawn uniformly from a generator seeded by the run's seed. Its
    "accuracy" is the share of the update's triplets the margin already separates (zero loss)."""

    def __init__(self, problem: Problem, batch: _Batch, margin: float, seed: int):
        self.batch, self.margin = batch, margin
        ids = metrics.cluster_ids(problem.targets)  # 0..K-1
        order = np.argsort(ids, kind="stable")
        counts = np.bincount(ids)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.order, self.n = torch.as_tensor(order), len(ids)
        self.start, self.count = torch.as_tensor(starts[ids]), torch.as_tensor(counts[ids])
        self.generator = torch.Generator().manual_seed(20_000 + seed)
        self.device = batch.left.device

    def triplets(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(positive, negative) item indices for every anchor item, on the run's device."""
        u = torch.rand(2, self.n, generator=self.generator, dtype=torch.float64)
        positive = self.start + (u[0] * self.count).long().clamp(max=self.count - 1)
        others = (u[1] * (self.n - self.count)).long().clamp(max=self.n - self.count - 1)
        negative = torch.where(others < self.start, others, others + self.count)  # skip own block
        picked = self.order[torch.stack([positive, negative])]
        return picked[0].to(self.device), picked[1].to(self.device)

    def __call__(self, model: EmbeddingClassifier):
        points = model.representations(self.batch.left, self.batch.right)
        positive, negative = self.triplets()
        near = torch.linalg.vector_norm(points - points[positive], dim=1)
        far = torch.linalg.vector_norm(points - points[negative], dim=1)
        gaps = near - far + self.margin
        loss = gaps.clamp(min=0).mean()  # torch's triplet_margin_loss, without its eps
        return loss, lambda: (gaps.detach() <= 0).float().mean()


def _train(
    model, settings: OptimisationSettings, objective, per_update, probe=None
) -> _TraceBuffer:
    """Full-batch Adam for ``settings.updates`` updates, recording the states asked for."""
    from tqdm.auto import tqdm

    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)  # else defaults

    def state(loss: torch.Tensor, accuracy) -> dict[str, torch.Tensor]:
        extra = probe(model) if probe is not None else {}
        return {"loss": loss, "accuracy": accuracy(), **per_update.evaluate_state(model), **extra}

    updates, columns = settings.updates, per_update.extra_columns + (probe.columns if probe else ())
    trace = _TraceBuffer(updates, per_update.device, columns)
    started = time.perf_counter()
    plan = "%d updates, metrics after every %d (%d evaluations with step 0) on %s"
    log.info(plan, updates, settings.metric_stride, settings.evaluations, per_update.device)
    report_every = max(1, updates // 20)  # progress in the rule's log too: `tail -f` it
    for step in tqdm(range(1, updates + 1), desc="updates", disable=not settings.progress):
        optimiser.zero_grad(set_to_none=True)
        loss, accuracy = objective(model)  # the state after step - 1 updates
        if settings.records(step - 1):  # full batch, no dropout: these logits are that state's
            trace.add(step - 1, state(loss, accuracy))
        trace.train_losses[step - 1] = loss.detach()
        loss.backward()
        optimiser.step()
        if step % _FLUSH_EVERY == 0:
            trace.flush(step)
        if step % report_every == 0 or step == updates:
            elapsed = time.perf_counter() - started
            left, share = duration(elapsed / step * (updates - step)), 100 * step / updates
            log.info(_PROGRESS, step, updates, share, duration(elapsed), left)
    with torch.no_grad():
        trace.add(updates, state(*objective(model)))
    trace.flush(updates)
    return trace


def _summary(
    problem: Problem, settings: OptimisationSettings, model, clusters, final, wall
) -> dict:
    """The run's counts (from the real model objects), settings, wall time and final record."""
    return {
        "items": problem.items,
        "rows": problem.rows,
        "dim": problem.dim,
        "labels": len(problem.label_names),
        "clusters": int(len(np.unique(clusters))),  # silhouette's clusters (label vectors)
        "multilabel": problem.multilabel,
        "pair": problem.right is not None,
        "dropped_items": problem.dropped_items,
        "params": sum(p.numel() for p in model.parameters()),
        "embedding_params": model.embeddings.weight.numel(),
        "classifier_params": sum(
            p.numel() for name, p in model.named_parameters() if not name.startswith("embeddings")
        ),
        "wall_seconds": wall,
        "settings": {
            k: list(v) if isinstance(v, tuple) else v
            for k in RECORDED
            if (v := getattr(settings, k)) or k != "extra_metrics"  # as before when unused
        },
        "final": final,
    }


def run_optimisation(
    problem: Problem,
    settings: OptimisationSettings,
    device: torch.device,
    probe: Probe | None = None,
    head: Head = LINEAR,
) -> tuple[pd.DataFrame, dict]:
    """Train, recording metrics; return the per-step trace and a summary of the run.

    Step 0 is the pretrained starting point; step k is the state after k updates. The trace has
    ``seed``, ``step`` and the registry's columns, then a ``probe``'s (:class:`Probe`; they change
    nothing in the training). Values reach the host in batches, checked there.
    """
    metrics.checked_points(problem.vectors, name="the embedding table")
    torch.manual_seed(settings.seed)  # the classifier's initialisation: the run's only randomness
    model = EmbeddingClassifier(
        problem.vectors, len(problem.label_names), problem.right is not None, settings.bias, head
    ).to(device)
    batch = _Batch.of(problem, device)
    per_update = _PerUpdateMetrics(problem, settings, device, batch)
    objective: _TripletObjective | _ClassifierObjective
    if head.objective == "triplet":
        objective = _TripletObjective(problem, batch, head.margin, settings.seed)
    else:
        objective = _ClassifierObjective(problem, batch)
    started = time.perf_counter()
    trace = _train(model, settings, objective, per_update, probe)
    wall = time.perf_counter() - started
    clusters = per_update.items.clusters
    summary = _summary(problem, settings, model, clusters, trace.records[-1], wall)
    return trace.frame(settings.seed), summary
