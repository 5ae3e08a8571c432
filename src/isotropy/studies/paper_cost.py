"""What a job of the paper's optimisation studies and embeddings costs (config/costs.csv)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from isotropy import costs, paths
from isotropy.configuration import Config
from isotropy.configuration.optimisation import Optimisation
from isotropy.traces import evaluation_count
from isotropy.workflow.checks import vector_dim

GPU_SECONDS_PER_UPDATE_WITH_METRICS = costs.value("gpu_seconds_per_update_with_metrics")

# (hub name, data set): process-CPU s per unique text on one thread, whatever the encoder's name
EMBED_CPU_SECONDS_PER_TEXT = costs.by_model("embed_cpu_seconds_per_text")
EMBED_LOAD_CPU_SECONDS = max(costs.by_model("embed_load_cpu_seconds").values())
WORD_VECTOR_CPU_SECONDS = costs.value("word_vector_lookup_cpu_seconds")
# Unique texts of each data set prepared from the offline mirror, until a prepared table exists
MIRROR_UNIQUE_TEXTS = {
    dataset: int(count) for dataset, count in costs.by_dataset("mirror_unique_texts").items()
}


def unique_text_count(dataset: str, workdir: Path = Path(".")) -> int | None:
    """Unique texts of a data set: counted in its prepared table, else the mirror's count."""
    table = workdir / paths.dataset_table(dataset)
    if not table.is_file():
        return MIRROR_UNIQUE_TEXTS.get(dataset)
    # Here: the estimate (run before every `make run`) should not load the model stack.
    import pandas as pd

    from isotropy.embeddings.texts import unique_texts

    return len(unique_texts(pd.read_parquet(table)))


def embedding_seconds(
    config: Config, encoder: str, dataset: str, workdir: Path = Path(".")
) -> float | None:
    """Wall time to embed (or look up) one data set on 2 idle cores (None: no measured cost)."""
    if config.encoders[encoder].kind == "word-vectors":
        return WORD_VECTOR_CPU_SECONDS  # the rule runs on one thread
    texts = unique_text_count(dataset, workdir)
    model = str(_hub_name(config, encoder))
    measured = [v for (m, _), v in EMBED_CPU_SECONDS_PER_TEXT.items() if m == model]
    # else another data set of the same model: its dearest per text
    per_text = EMBED_CPU_SECONDS_PER_TEXT.get((model, dataset), max(measured, default=None))
    if texts is None or per_text is None:
        return None
    return (EMBED_LOAD_CPU_SECONDS + texts * per_text) / costs.JOB_THREADS


def _hub_name(config: Config, encoder: str) -> str | None:
    """What a sentence encoder's costs are keyed by: its hub name, else its model's name."""
    if (spec := config.encoders[encoder]).kind != "sentence-transformer":
        return None
    return config.models[spec.model].model or spec.model


def embedding_job_seconds(
    config: Config, wildcards: Mapping[str, Any], pace: costs.Pace
) -> float | None:
    """Wall seconds of one embedding or lookup job at ``pace`` (on a GPU an upper bound)."""
    encoder, dataset = wildcards["encoder"], wildcards["dataset"]
    work = embedding_seconds(config, encoder, dataset)
    threads = costs.JOB_THREADS  # the rule's: threads x the wall time is the CPU time
    return None if work is None else pace.share(threads * work, threads, config.device)


# (hub name, data set): process-CPU s per update, metrics after each on SAMPLED_AT items (GLUE's)
SAMPLED_UPDATE_CPU_SECONDS = costs.by_model("sampled_update_cpu_seconds")
SAMPLED_AT = 10_000


def run_seconds(
    dataset: str, settings: Optimisation, device: str, model: str | None = None
) -> float | None:
    """Wall time of one run on the rule's 2 threads (None: not measured); metrics on a sample:
    ``model`` on ``dataset`` as measured, at that sample size and stride only."""
    updates, stride = settings.updates, settings.metric_stride
    if device == "cuda":
        return updates * GPU_SECONDS_PER_UPDATE_WITH_METRICS
    if settings.metric_sample_size is not None:
        sampled = SAMPLED_UPDATE_CPU_SECONDS.get((model, dataset))
        if sampled is None or stride != 1 or settings.metric_sample_size != SAMPLED_AT:
            return None
        return updates * sampled / costs.JOB_THREADS
    per_update = costs.by_dataset("update_cpu_seconds").get(dataset)
    per_evaluation = costs.by_dataset("evaluation_cpu_seconds").get(dataset)
    if per_update is None or per_evaluation is None:
        return None
    return updates * per_update + evaluation_count(updates, stride) * per_evaluation


def optimisation_job_seconds(
    config: Config, wildcards: Mapping[str, Any], pace: costs.Pace
) -> float | None:
    """Wall seconds of one rule optimize_embeddings job at ``pace`` (None: no measured cost)."""
    settings, device = config.study_section(wildcards["study"]), config.device
    work = run_seconds(
        wildcards["dataset"], settings, device, _hub_name(config, wildcards["encoder"])
    )
    if work is None:
        return None
    if device == "cuda":  # measured on the GPU: not scaled by the CPU's speed, one at a time
        return work + pace.job_overhead
    return pace.share(costs.JOB_THREADS * work, costs.JOB_THREADS)


def sensitivity_job_seconds(
    config: Config, wildcards: Mapping[str, Any], pace: costs.Pace
) -> float | None:
    """Wall seconds of one optimize_sensitivity job (None: no dimension known): on a CPU, a fit
    growing as items² and dimension^power, one job a core (not scaled by the speed probe); on a
    GPU, main's per-update cost at 384-d scaled by dimension. Uncounted label sets cost as all."""
    section, setup, label_set = config.sensitivity, wildcards["dataset"], wildcards["label_set"]
    dim = vector_dim(config, wildcards["encoder"])
    base_items = costs.by_dataset("sensitivity_items")
    if section is None or dim is None or setup not in base_items:
        return None
    items = section.paper_size if label_set == "paper_size" else base_items[setup]
    if label_set == "single":
        items = costs.by_dataset("sensitivity_single_items").get(setup, items)
    scale_items = items / base_items["supersense"]
    updates, stride = section.updates, section.metric_stride
    if config.device == "cuda":  # measured at 384-d, every update
        return updates * GPU_SECONDS_PER_UPDATE_WITH_METRICS * max(1.0, dim / 384)
    evaluations = evaluation_count(updates, stride)
    if section.metric_sample_size:
        scale_items = min(scale_items, section.metric_sample_size / base_items["supersense"])
    share = costs.value("sensitivity_evaluation_share")
    work = (1 - share) * updates / 1000 + share * evaluations / 21
    width = (dim / costs.value("sensitivity_base_dim")) ** costs.value("sensitivity_dim_power")
    part = costs.value("sensitivity_run_cpu_part") * work * scale_items**2 * width
    return (costs.value("sensitivity_run_cpu_startup") + part) / max(1, pace.cores)
