"""What the paper's optimisation studies cost (the main study, its preview, GLUE, the sensitivity
grid): one run from its updates and metric evaluations, an embedding from its texts (for every
study that reads sentence embeddings or word vectors), and the estimate's lines for their
targets (python -m isotropy.estimate). The numbers are rows of config/costs.csv
(:mod:`isotropy.costs`). Plain Python (no torch): the estimate imports it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from isotropy import costs, paths
from isotropy.logs import duration
from isotropy.models import ModelSpec
from isotropy.sources import resolve_mirror
from isotropy.traces import evaluation_count
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

# The measured costs are data: config/costs.csv, each number with the date, the machine and the
# command that measured it (isotropy.costs). CPU costs are relative to the speed probe's time
# there (costs.PROBE_CPU_SECONDS); the estimate scales them by the probe's time now.
# dataset: (CPU-s per update, per evaluation of IsoScore + silhouette) on the rule's 2 threads.
CPU_SECONDS = {
    dataset: (per_update, costs.by_dataset("evaluation_cpu_seconds")[dataset])
    for dataset, per_update in costs.by_dataset("update_cpu_seconds").items()
}

GPU_SECONDS_PER_UPDATE_WITH_METRICS = costs.value("gpu_seconds_per_update_with_metrics")


# (hub name, data set): process-CPU s per unique text on one thread; keyed by the model measured
# (models.<name>.model), whatever the encoder is called.
EMBED_CPU_SECONDS_PER_TEXT = costs.by_model("embed_cpu_seconds_per_text")

EMBED_LOAD_CPU_SECONDS = max(costs.by_model("embed_load_cpu_seconds").values())

WORD_VECTOR_CPU_SECONDS = costs.value("word_vector_lookup_cpu_seconds")

# Unique texts of each data set as prepared from the offline mirror, used before the data are
# prepared; a prepared table is counted instead.
MIRROR_UNIQUE_TEXTS = {
    dataset: int(count) for dataset, count in costs.by_dataset("mirror_unique_texts").items()
}


def unique_text_count(dataset: str, workdir: Path = Path(".")) -> int | None:
    """Unique texts of a data set: counted in its prepared table, else the mirror's count."""
    table = workdir / paths.dataset_table(dataset)
    if not table.is_file():
        return MIRROR_UNIQUE_TEXTS.get(dataset)
    # Here, not at the top: isotropy.embeddings belongs to the model stack, which the estimate
    # (run before every `make run`) should not load for a count.
    import pandas as pd

    from isotropy.embeddings.texts import unique_texts

    return len(unique_texts(pd.read_parquet(table)))


def embedding_seconds(
    config: Mapping[str, Any], encoder: str, dataset: str, workdir: Path = Path(".")
) -> float | None:
    """Estimated wall time to embed (or look up) one data set on 2 idle cores (None: no cost
    measured); 0 where its vectors are written already."""
    if (workdir / paths.embedding_file("vectors.npy", encoder, dataset)).is_file():
        return 0.0
    if config["encoders"][encoder]["kind"] == "word-vectors":
        return WORD_VECTOR_CPU_SECONDS  # the rule runs on one thread
    texts = unique_text_count(dataset, workdir)
    spec = workflow_config.model_spec(config, config["encoders"][encoder]["model"])
    model = spec.model or config["encoders"][encoder]["model"]  # a folder-only model: its name
    measured = [v for (m, _), v in EMBED_CPU_SECONDS_PER_TEXT.items() if m == model]
    per_text: float | None = EMBED_CPU_SECONDS_PER_TEXT.get((model, dataset))
    if per_text is None and measured:
        per_text = max(measured)  # another data set of the same model: its dearest per text
    if texts is None or per_text is None:
        return None
    return (EMBED_LOAD_CPU_SECONDS + texts * per_text) / 2  # the rule's 2 threads


def embedding_job_seconds(
    config: Mapping[str, Any], wildcards: Mapping[str, Any], pace: costs.Pace
) -> float:
    """Wall seconds of one embedding or word-vector lookup job: :func:`embedding_seconds` as if
    its vectors were absent (the job is to run; 0 where no cost is measured), and its start-up."""
    encoder, dataset = wildcards.get("encoder", ""), wildcards.get("dataset", "")
    if encoder not in config.get("encoders", {}) or not dataset:
        return pace.job_overhead
    work = embedding_seconds(config, encoder, dataset, Path("-"))  # "-": no vectors there
    return (work or 0.0) + pace.job_overhead


def run_seconds(dataset: str, settings: Mapping[str, Any], device: str) -> float | None:
    """Estimated wall time of one run (None: no cost measured for this data set)."""
    updates, stride = settings["updates"], settings["metric_stride"]
    if device == "cuda":
        return updates * GPU_SECONDS_PER_UPDATE_WITH_METRICS
    if dataset not in CPU_SECONDS or settings.get("metric_sample_size") is not None:
        return None
    per_update, per_evaluation = CPU_SECONDS[dataset]
    return updates * per_update + evaluation_count(updates, stride) * per_evaluation


def estimate(
    config: Mapping[str, Any], study: str, device: str, pace: costs.Pace, workdir: Path
) -> tuple[list[str], float]:
    """(lines, wall seconds left) of the study's runs, embeddings and jobs at ``pace``."""
    section = targets.study_section(dict(config), study)
    runs = targets.study_runs(dict(config), study)
    setups, seeds = len({r["dataset"] for r in runs}), len(section["seeds"])
    lines = [
        f"{study}: {len(runs)} runs ({setups} setups x {seeds} "
        f"seed{'s' if seeds > 1 else ''}) of {section['updates']} updates, metrics "
        f"after {targets.every_nth_update(section['metric_stride'])}, device {device}"
    ]
    left, unknown, done = _runs_left(config, study, runs, device, workdir)
    embed = _embeddings_left(config, runs, unknown, workdir)
    jobs = _jobs_left(runs, len(runs) - done, workdir)
    # The rule takes 2 threads: a CPU runs cores // 2 jobs side by side; one GPU runs one at a time.
    parallel = 1 if device == "cuda" else pace.parallel(costs.JOB_THREADS)
    # The CPU costs were measured on one machine; this one may be faster or slower.
    left *= 1.0 if device == "cuda" else pace.speed
    embed = {kind: seconds * pace.speed for kind, seconds in embed.items()}
    # Not scaled: starting a job is the interpreter and the disk, not the arithmetic the probe
    # times (where it read 5.2x, the preview's short jobs took 0.6-1.5 s each; measurements.md).
    overhead = jobs * pace.job_overhead
    total = (left + sum(embed.values()) + overhead) / parallel
    basis = (
        "runs as measured on one H100 (polarity), embeddings as on 2 CPU cores"
        if device == "cuda"
        else "for 2 idle cores"
    )
    lines.append(
        f"{done} of {len(runs)} runs done; time left: about {duration(total)} in all "
        f"(runs {duration(left / parallel)}, sentence embeddings "
        f"{duration(embed['sentence-transformer'] / parallel)}, word-vector lookups "
        f"{duration(embed['word-vectors'] / parallel)}, starting {jobs} jobs "
        f"{duration(overhead / parallel)}; {basis}; {parallel} job{'s' if parallel > 1 else ''} "
        "at a time)"
    )
    return [*lines, pace.speed_line(), *costs.caveats("cpu", sorted(unknown))], total


def _jobs_left(runs: list[dict], runs_left: int, workdir: Path) -> int:
    """Jobs the run will start: each run not done, each embedding or lookup not written, a
    download and a preparation per data set not prepared, and the study's tables and figures
    (table 1, correlations, figures 2 and 3) when a run is left."""
    pairs = dict.fromkeys((r["encoder"], r["dataset"]) for r in runs)
    embeddings = sum(
        not (workdir / paths.embedding_file("vectors.npy", e, d)).is_file() for e, d in pairs
    )
    datasets = {d for _, d in pairs}
    unprepared = sum(not (workdir / paths.dataset_table(d)).is_file() for d in datasets)
    return runs_left + embeddings + 2 * unprepared + (4 if runs_left else 0)


def _runs_left(
    config: Mapping[str, Any], study: str, runs: list[dict], device: str, workdir: Path
) -> tuple[float, set[str], int]:
    """Seconds the runs not done with these settings will take, the data sets with no measured
    cost, and how many runs are done."""
    left, unknown, done = 0.0, set(), 0
    for run in runs:
        trace = workdir / paths.optimisation_run_file(
            "trace.parquet", study, run["encoder"], run["dataset"], run["seed"]
        )
        settings = targets.optimisation_settings(dict(config), study, run["dataset"], run["seed"])
        if costs.run_is_done(trace, settings, config["device"]):
            done += 1
            continue
        seconds = run_seconds(run["dataset"], settings, device)
        if seconds is None:
            unknown.add(run["dataset"])
        else:
            left += seconds
    return left, unknown, done


def _embeddings_left(
    config: Mapping[str, Any], runs: list[dict], unknown: set[str], workdir: Path
) -> dict[str, float]:
    """Seconds per encoder kind for what the runs read first: sentence embeddings and
    word-vector lookups not yet written (adds what has no measured cost to ``unknown``).
    Costs measured on the CPU; a GPU embeds faster, so there they are an upper bound."""
    embed = {"sentence-transformer": 0.0, "word-vectors": 0.0}
    for encoder, dataset in dict.fromkeys((r["encoder"], r["dataset"]) for r in runs):
        seconds = embedding_seconds(config, encoder, dataset, workdir)
        if seconds is None:
            unknown.add(f"{encoder} embeddings of {dataset}")
        else:
            embed[config["encoders"][encoder]["kind"]] += seconds
    return embed


def vector_dim(config: Mapping[str, Any], name: str) -> int | None:
    """The width of a vector set: an existing vectors.npy's, else its record's (a derived set's
    ``dim`` or its origin's; a sentence encoder's model, ``models.<name>.dimension``; a
    word-vector source's ``sources.<name>.dimension``, for the files of the origin in use: the
    mirror's or the URL's). None: no record gives it."""
    derived = dict(config["sensitivity"].get("derived") or {})
    if name in derived:
        spec = derived[name]
        return spec.get("dim") or vector_dim(config, spec["of"])
    for setup in ("supersense", "pos"):
        path = paths.embedding_file("vectors.npy", name, setup)
        if os.path.isfile(path):
            return int(np.load(path, mmap_mode="r").shape[1])
    spec = config["encoders"][name]
    if spec["kind"] == "sentence-transformer":
        return ModelSpec.from_config(config, spec["model"]).dimension
    widths = config["sources"][spec["source"]].get("dimension") or {}
    return widths.get("mirror" if resolve_mirror(config.get("mirror")) else "url")


def sensitivity_run_seconds(
    config: Mapping[str, Any],
    run: Mapping[str, Any],
    device: str,
    cpu_seconds: Mapping[str, Any] = CPU_SECONDS,
    gpu_per_update: float = GPU_SECONDS_PER_UPDATE_WITH_METRICS,
) -> float | None:
    """Estimated wall time of one sensitivity run: on a CPU, a fixed start-up plus a part that
    grows as items² and as dimension^power (the ``sensitivity_*`` rows of config/costs.csv);
    on a GPU, the main study's per-update cost at 384-d, scaled by dimension beyond it.

    The items of a label set are ``sensitivity_single_items`` (counted on the mirror); one not
    counted is costed as ``all`` (an upper bound: it keeps a subset)."""
    section = config["sensitivity"]
    dim = vector_dim(config, run["vectors"])
    if dim is None or run["setup"] not in cpu_seconds:
        return None
    base_items = costs.by_dataset("sensitivity_items")
    single = costs.by_dataset("sensitivity_single_items")
    items = section["paper_size"] if run["label_set"] == "paper_size" else base_items[run["setup"]]
    if run["label_set"] == "single":
        items = single.get(run["setup"], items)
    scale_items = items / base_items["supersense"]
    updates, stride = section["updates"], section["metric_stride"]
    if device == "cuda":  # measured at 384-d, every update; larger tables scale with dimension
        return updates * gpu_per_update * max(1.0, dim / 384)
    evaluations = evaluation_count(updates, stride)
    if section["metric_sample_size"]:
        scale_items = min(scale_items, section["metric_sample_size"] / base_items["supersense"])
    share = costs.value("sensitivity_evaluation_share")
    work = (1 - share) * updates / 1000 + share * evaluations / 21
    width = (dim / costs.value("sensitivity_base_dim")) ** costs.value("sensitivity_dim_power")
    part = costs.value("sensitivity_run_cpu_part") * work * scale_items**2 * width
    return costs.value("sensitivity_run_cpu_startup") + part


def run_settings(config: Mapping[str, Any], wildcards: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of the run a job of rule optimize_embeddings (wildcards study) or
    optimize_sensitivity (wildcards lr) makes."""
    seed = int(wildcards["seed"])
    if "study" in wildcards:
        return targets.optimisation_settings(
            dict(config), wildcards["study"], wildcards["dataset"], seed
        )
    return targets.sensitivity_settings(config, seed, wildcards.get("lr", "1"))


def optimisation_job_seconds(
    config: Mapping[str, Any], wildcards: Mapping[str, Any], pace: costs.Pace
) -> float:
    """Wall seconds of one run of rule optimize_embeddings or optimize_sensitivity at ``pace``:
    :func:`run_seconds` of its data set and settings (0 where no cost is measured) and its
    start-up."""
    if "seed" not in wildcards:
        return pace.job_overhead
    device = costs.device_kind(config["device"])
    work = run_seconds(wildcards["dataset"], run_settings(config, wildcards), device)
    return (work or 0.0) + pace.job_overhead
