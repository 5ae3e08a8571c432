"""What one job of target geometry_study (config ``geometry``) costs, for the estimate ``python -m
isotropy.estimate --target geometry_study`` prints before the run. Plain Python: no torch.

Costs: process-CPU seconds on one thread of all-MiniLM-L6-v2 on the mirror's polarity sentences,
measured with ``benchmarks/geometry_cost.py`` and kept in config/costs.csv (``geometry_*``, with
the date, machine and load), normalised by the speed probe. Other models are not measured: a
forward pass is scaled by :func:`isotropy.costs.size_factor` (a BERT-size model, 12
layers and 768-d, as 4x MiniLM per sentence, as isotropy.costs.finetune_seconds does), the per-layer
statistics by the model's layers and width (:data:`isotropy.configuration.data.MODEL_SHAPE`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from isotropy import costs, paths
from isotropy.configuration import Config
from isotropy.configuration.geometry import Classification, Geometry
from isotropy.readers.tasks import TASKS

# Lines of the corpora (the mirror's rt-polarity.pos; WikiText-2's training split, online).
CORPUS_SENTENCES = {"polarity": 5331, "wikitext2": 23767}
# Sentences of the STS splits (two per scored pair: an upper bound on the unique ones).
STS_SENTENCES = {"stsb": 11498, "sickr": 9854, "sts12": 6216, "sts13": 3000}
STS_SENTENCES |= {"sts14": 7500, "sts15": 6000, "sts16": 2372}
# SST-2's tokens per sentence: 48,564 MiniLM tokens of 2,872 sentences.
SST2_TOKENS = 16.9


def _q(name: str) -> float:
    return costs.value(name)


def _forward(model: str, per_sentence: float, sentences: float) -> float:
    """Load plus ``sentences`` forward passes. Batches pad to their longest sentence, so the
    cost follows the sentences' own lengths (polarity, STS and SST-2 sentences: mostly under
    64 tokens), not max length: no scaling by it."""
    factor = costs.size_factor(model)
    return costs.by_model("geometry_load_cpu_seconds")["miniLM"] + factor * per_sentence * sentences


def jobs(section: Geometry) -> list[tuple[str, str, float | None]]:
    """(label, output file, CPU-s on one thread or None: no measured cost) of every costed job
    (a model, corpus or data set without a measured cost or a known size: None), for every
    configured STS data set (the dry run has no job for one the mirror lacks)."""
    clusters, corpus = section.clusters, section.clusters.corpus
    name = corpus.name
    found: list[tuple[str, str, float | None]] = []
    rates = costs.by_model("geometry_token_sentence_cpu_seconds")
    per_sentence = rates.get(("miniLM", "polarity"), 0.0)
    kept = costs.by_dataset("geometry_tokens_per_sentence").get("polarity", 0.0)
    lines = corpus.max_sentences or CORPUS_SENTENCES.get(name, 0)
    for model in clusters.models:
        known = model in costs.MODEL_SHAPE and lines > 0 and per_sentence > 0 and kept > 0
        label = f"token embeddings {model}/{name}"
        # extraction stops once max_tokens are kept: the sentences read to keep them (more
        # where max_per_type turns tokens away than the measured rate says)
        read = min(lines, (clusters.max_tokens or lines * kept) / kept) if known else 0
        seconds = _forward(model, per_sentence, read) if known else None
        found.append((label, paths.token_embeddings(model, name), seconds))
        if not known:
            continue
        layers, dim = costs.MODEL_SHAPE[model][0] + 1, costs.MODEL_SHAPE[model][1]
        tokens = min(clusters.max_tokens or lines * kept, lines * kept)
        lid = min(tokens, clusters.lid_sample_size or tokens)
        width = dim / 384
        lid_cost = _q("geometry_lid_cpu_seconds_per_layer_token") * width * lid / tokens
        stats = {
            "cosine_by_layer.csv": _q("geometry_cosine_cpu_seconds_per_layer_token") * width,
            "isotropy_by_layer.csv": _q("geometry_isotropy_cpu_seconds_per_layer_token") * width**2,
            "lid.csv": lid_cost * lid / _q("geometry_benchmark_tokens"),
        }
        for seed in section.seeds:
            for artefact, cost in stats.items():
                out = paths.geometry_run_file(artefact, model, name, seed)
                found.append((f"{artefact} {model}/{seed}", out, layers * tokens * cost))
    sts = section.sts
    pooled = costs.by_model("geometry_sentence_cpu_seconds").get("miniLM", 0.0)
    for model in sts.models:
        for data in sts.datasets:
            sentences = STS_SENTENCES.get(data, 0)
            known = model in costs.MODEL_SHAPE and sentences > 0 and pooled > 0
            out = paths.sentence_embeddings(model, data)
            seconds = _forward(model, pooled, sentences) if known else None
            found.append((f"sentence embeddings {model}/{data}", out, seconds))
            if known:
                table = sentences * _q("geometry_sts_cpu_seconds_per_sentence")
                table *= costs.MODEL_SHAPE[model][1] / 384 * len(sts.methods) / 6  # 6 measured
                for seed in section.seeds:
                    out = paths.geometry_run_file("sts.csv", model, data, seed)
                    found.append((f"sts {model}/{data}/{seed}", out, table))
    found += _classification_jobs(section.classification, pooled)
    return found


def _classification_jobs(section: Classification, pooled: float) -> list:
    found = []
    for model in section.models:
        task = section.task
        train, validation = TASKS[task].rows  # the validation split beside the training subset
        sentences = min(train, section.train_subset or train) + validation
        known = model in costs.MODEL_SHAPE and pooled > 0
        features = _forward(model, pooled, sentences) if known else None
        out = paths.classification_features(model, task)
        found.append((f"classification features {model}/{task}", out, features))
        seeds, methods = len(section.seeds), section.methods
        weight = seeds * (sum(m != "none" for m in methods) + 0.2 * ("none" in methods))
        table = sentences * SST2_TOKENS * weight
        table *= _q("geometry_classification_cpu_seconds_per_token_seed")
        out = paths.classification_run_file(model=model, task=task)
        found.append((f"classification {model}/{task}", out, table))
    return found


# The costed rules' outputs, to find a job (its wildcards) among :func:`jobs`.
RULE_OUTPUTS = {
    "geometry_token_embeddings": paths.token_embeddings(),
    "geometry_cosine": paths.geometry_run_file("cosine_by_layer.csv"),
    "geometry_isotropy": paths.geometry_run_file("isotropy_by_layer.csv"),
    "geometry_lid": paths.geometry_run_file("lid.csv"),
    "geometry_sentence_embeddings": paths.sentence_embeddings(),
    "geometry_sts": paths.geometry_run_file("sts.csv", data="{sts}"),
    "geometry_classification_features": paths.classification_features(),
    "geometry_classification": paths.classification_run_file(),
}


def job_seconds(
    rule: str, config: Config, wildcards: Mapping[str, Any], pace: costs.Pace
) -> float | None:
    """Wall seconds one job of a costed ``rule`` adds to the study's total: its entry of
    :func:`jobs`, found by its output (:meth:`isotropy.costs.Pace.share`; None: no cost)."""
    output = RULE_OUTPUTS[rule].format(**wildcards)
    cpu = next((c for _, out, c in jobs(config.geometry) if out == output), None)
    return None if cpu is None else pace.share(cpu, costs.JOB_THREADS)


def expected(rule: str, config: Mapping[str, Any], wildcards: Mapping[str, Any]) -> float:
    """Wall seconds one job of ``rule`` takes on the measured host's idle cores, for its script
    to log before it starts (``config``: the job's, validated here): :func:`job_seconds` at
    :class:`isotropy.costs.Pace`'s defaults (NaN: no measured cost)."""
    seconds = job_seconds(rule, Config.model_validate(dict(config)), wildcards, costs.Pace())
    return math.nan if seconds is None else seconds


# rule -> the wall seconds one of its jobs adds (isotropy.estimate.JOB_COSTS).
JOB_COSTS = {rule: functools.partial(job_seconds, rule) for rule in RULE_OUTPUTS}
