"""What a long target will do and how long it will take: said before it starts (`make run`,
`make preview`), and after every finished job while it runs.

    python -m isotropy.estimate --configfile config.yaml config/offline.yaml my.yaml \
        --target main_study

Lays the files over each other as Snakemake does (later files win key by key), validates the
result against the schema (defaults filled), prints the settings that decide the cost and
estimates the time left, as one total: every run of the target not done yet with these settings
(a trace whose provenance record holds other settings counts as not done), times the measured
cost of an update and of one evaluation of the metrics on the device the run will use, plus the
sentence embeddings and word-vector lookups those runs read that are not written yet (measured
cost per text per encoder; benchmarks/embedding_cost.py), plus a fixed start-up cost per job.

It writes nothing: the run itself records its effective configuration in
``logs/effective-config/<target>.yaml`` when it starts (``onstart`` in rules/common.smk), so an
estimate for other settings never changes what ``make report`` describes. Each result's
``.provenance.json`` records the configuration that made it, too.

While it runs, one line per finished job gives the whole run's done share and time left. Each
job's own log tells how far that job is (:class:`isotropy.logs.ProgressLog`); this says how
far the run is. When a run starts (``onstart`` in rules/common.smk) every job Snakemake will run
gets an expected cost from the same cost code as the estimate (this module's: an
optimisation run from its updates and metric evaluations, an embedding from its texts, every
job a fixed start-up cost; the other studies' runs from their own cost modules, through
:data:`JOB_COSTS`). A :class:`RunProgress` handler on Snakemake's logger then prints, for
every finished job::

    run: 9/22 jobs done (embed_sentences miniLM/snli), 31% of the expected work, 11 min elapsed,
    about 24 min left

The done share weighs each job by its expected cost, not by its count (22 jobs of which two
embeddings and four runs are nine tenths of the work). The time left is the expected work left
times the rate observed so far (elapsed wall time per second of expected work), which carries the
machine's load and any other slowdown; until a minute of expected work is done the load-based
factor of the estimate (:func:`busy_factor`, times the speed probe's
factor) weighs in, as a prior worth 60 s of observed work.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from isotropy import compute, costs, paths
from isotropy.extensions import design as extensions_design
from isotropy.geometry import cost as geometry_cost
from isotropy.istar import cls_cost, grid_cost
from isotropy.logs import duration
from isotropy.provenance import record_path
from isotropy.traces import evaluation_count
from isotropy.workflow import config as workflow_config
from isotropy.workflow import inputs as workflow_inputs
from isotropy.workflow import targets

TARGET_STUDIES = {"main_study": "main", "preview_study": "preview", "glue_study": "glue"}


# The measured costs are data: config/costs.csv, each number with the date, the machine and the
# command that measured it (isotropy.costs). CPU costs are relative to the speed probe's time
# there (PROBE_CPU_SECONDS); the estimate scales them by the probe's time now.
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
# By how idle OpenMP threads wait (isotropy.compute.THREAD_POLICIES).
CONTENTION_EXCESS = {
    policy: costs.value(f"contention_excess_{policy}") for policy in ("passive", "default")
}
JOB_OVERHEAD_SECONDS = costs.value("job_overhead_seconds")
# The optimisation and embedding jobs take 2 threads each (rules/optimize.smk, rules/embed.smk)
# but keep JOB_CORES_USED of the cores busy on an idle machine.
JOB_THREADS = 2
JOB_CORES_USED = costs.value("job_cores_used")
PROBE_CPU_SECONDS = costs.value("probe_cpu_seconds")
# Bounds on that factor: beyond them a probe says more about a burst on the machine than its CPU.
SPEED_FACTOR_BOUNDS = (0.25, 4.0)
# Unique texts of each data set as prepared from the offline mirror, used before the data are
# prepared; a prepared table is counted instead.
MIRROR_UNIQUE_TEXTS = {
    dataset: int(count) for dataset, count in costs.by_dataset("mirror_unique_texts").items()
}


def run_seconds(dataset: str, settings: Mapping[str, Any], device: str) -> float | None:
    """Estimated wall time of one run (None: no cost measured for this data set)."""
    updates, stride = settings["updates"], settings["metric_stride"]
    if device == "cuda":
        return updates * GPU_SECONDS_PER_UPDATE_WITH_METRICS
    if dataset not in CPU_SECONDS or settings.get("metric_sample_size") is not None:
        return None
    per_update, per_evaluation = CPU_SECONDS[dataset]
    return updates * per_update + evaluation_count(updates, stride) * per_evaluation


def unique_text_count(dataset: str, workdir: Path = Path(".")) -> int | None:
    """Unique texts of a data set: counted in its prepared table, else the mirror's count."""
    table = workdir / paths.dataset_table(dataset)
    if not table.is_file():
        return MIRROR_UNIQUE_TEXTS.get(dataset)
    # Here, not at the top: isotropy.embeddings belongs to the model stack, which the estimate
    # (run before every `make run`) should not load for a count.
    import pandas as pd

    from isotropy.embeddings import unique_texts

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


def speed_probe(repeats: int = 3, products: int = 100) -> float:
    """Process-CPU seconds of a fixed one-thread workload: ``products`` float32 384 x 384
    matrix products (the operation the optimisation and the encoders spend their time in), the
    best of ``repeats`` after a warm-up. Process time, not wall time: other processes on the
    machine do not count, only how fast this CPU does the work (about 0.05 s each here)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    matrix = np.random.default_rng(0).standard_normal((384, 384), dtype=np.float32) / 384**0.5
    times = []
    with threadpool_limits(1):
        for attempt in range(repeats + 1):
            product, start = matrix.copy(), time.process_time()
            for _ in range(products):
                product = np.tanh(matrix @ product)
            if attempt:  # the first warms caches and clocks
                times.append(time.process_time() - start)
    return min(times)


def host_speed_factor(probe: float | None = None) -> float:
    """How much longer the measured CPU costs take on this machine now: the probe's time here
    over :data:`PROBE_CPU_SECONDS`, within :data:`SPEED_FACTOR_BOUNDS`."""
    low, high = SPEED_FACTOR_BOUNDS
    return min(high, max(low, (speed_probe() if probe is None else probe) / PROBE_CPU_SECONDS))


def speed_line(probe: float, speed: float) -> str:
    """The line that says how the measured CPU costs were scaled to this machine."""
    clamped = " (clamped)" if speed in SPEED_FACTOR_BOUNDS else ""
    return (
        f"CPU costs x {speed:.2f}{clamped}: a fixed one-thread workload took {probe:.3f} CPU-s "
        f"here against {PROBE_CPU_SECONDS:.3f} where the costs were measured "
        "(isotropy.estimate.speed_probe; docs/measurements.md)"
    )


def device_kind(configured: str) -> str:
    """The kind of device (cuda, cpu) a run configured with ``configured`` (auto, cpu, cuda)
    will use, by name, for the cost estimate; isotropy.compute.resolve_device gives the
    torch.device itself."""
    if configured != "auto":
        return configured
    import torch  # only here: the estimate for an explicit device needs no torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def describe(
    config: Mapping[str, Any], study: str, device: str, workdir: Path = Path(".")
) -> list[str]:
    """Lines saying what the study will run and how long what is left will take."""
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
    parallel = 1 if device == "cuda" else max(1, (available_cores() or 2) // JOB_THREADS)
    # The CPU costs were measured on one machine; this one may be faster or slower.
    probe = speed_probe()
    speed = host_speed_factor(probe)
    left *= 1.0 if device == "cuda" else speed
    embed = {kind: seconds * speed for kind, seconds in embed.items()}
    # Not scaled: starting a job is the interpreter and the disk, not the arithmetic the probe
    # times (where it read 5.2x, the preview's short jobs took 0.6-1.5 s each; measurements.md).
    overhead = jobs * JOB_OVERHEAD_SECONDS
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
    lines.append(speed_line(probe, speed))
    if unknown:
        lines.append(f"no measured cost for {', '.join(sorted(unknown))}: not included above")
    cores, load = available_cores() or 2, recent_load()
    sessions = compute.busy_sessions() if device == "cpu" and total else None
    factor = busy_factor(load, cores, sessions=sessions)
    if device == "cpu" and total and factor >= 1.25:
        lines.append(
            f"this machine is busy (load average {load:.1f} on {cores} cores, before this run "
            f"starts): expect about {duration(total * factor)} while it stays so"
            + (f", longer at niceness {os.nice(0)}" if os.nice(0) > 0 else "")
            + "; the run prints its done share and time left after every job"
        )
        lines.append(contention_model(sessions=sessions))
    return lines


def recent_load() -> float:
    """The load to expect over a run of many minutes: the larger of the 1- and 5-minute load
    averages (the 1-minute one alone dips between other people's jobs: a preview started at
    3.4 ran at 5.5-7)."""
    one, five, _ = os.getloadavg()
    return max(one, five)


def run_is_done(trace: Path, settings: Mapping[str, Any], device: str) -> bool:
    """Whether a run's trace exists and was made with these settings and this device setting:
    its provenance record (written by the rule beside the trace) holds the rule's params. A trace
    without a readable record, or with other params, is a run still to do (Snakemake re-makes it
    when the params changed)."""
    if not trace.is_file():
        return False
    try:
        params = json.loads(record_path(trace).read_text()).get("params", {})
    except (OSError, ValueError, AttributeError):
        return False
    return params == {"settings": dict(settings), "device": device}


def made_with(result: Path, params: Mapping[str, Any]) -> bool:
    """Whether a result exists and its provenance record holds these rule params (others in the
    record are not compared); a result without a readable record is still to make."""
    if not result.is_file():
        return False
    try:
        recorded = json.loads(record_path(result).read_text()).get("params", {})
    except (OSError, ValueError, AttributeError):
        return False
    return all(recorded.get(key) == value for key, value in params.items())


def busy_factor(
    load: float,
    cores: int,
    threads: int = JOB_THREADS,
    policy: str | None = None,
    sessions: compute.Sessions | None = None,
) -> float:
    """How much longer a job of ``threads`` threads takes on ``cores`` cores shared with other
    work, times what its threads waste waiting under the wait ``policy``
    (:data:`CONTENTION_EXCESS`; default: the policy jobs of this process would run under). 1
    when the cores are free enough.

    The job needs the cores it keeps busy when the machine is idle (``used``:
    :data:`JOB_CORES_USED` for the rules' 2 threads), and is slowed by what it gets against
    that. Where the kernel shares the CPU between sessions (``sessions``, from
    :func:`isotropy.compute.busy_sessions`), this run's session gets ``cores / (others + 1)``
    of it, and the job its part of that among the session's runnable threads. Otherwise the
    scheduler shares the cores among all ``load`` runnable threads (the load average before
    the run starts) and the job's: ``(load + used) / cores``."""
    used = min(float(threads), JOB_CORES_USED * threads / JOB_THREADS)
    if sessions is not None:
        part = cores / (sessions.others + 1) * used / (used + sessions.own_threads)
        share = used / min(used, part)
    else:
        share = max(1.0, (load + used) / max(cores, used))
    if share <= 1.0:
        return 1.0
    return share * CONTENTION_EXCESS[policy or compute.policy_in_effect()]


def contention_model(policy: str | None = None, sessions: compute.Sessions | None = None) -> str:
    """The one line that says which contention model the busy-machine estimate used."""
    policy = policy or compute.policy_in_effect()
    sharing = (
        f"the kernel shares the cores between sessions (autogroup): {sessions.others:.1f} other "
        f"busy session(s), {sessions.own_threads:.1f} other runnable thread(s) in this one, so "
        f"a {JOB_THREADS}-thread job, {JOB_CORES_USED} cores busy when idle, gets cores / "
        "(sessions + 1) x its part"
        if sessions is not None
        else f"threads share the cores: (load + {JOB_CORES_USED}) / cores, {JOB_CORES_USED} "
        f"being what a {JOB_THREADS}-thread job keeps busy when idle"
    )
    return (
        f"contention model: {sharing}; jobs' threads wait as policy '{policy}' "
        + (
            "(OMP_WAIT_POLICY=PASSIVE)"
            if policy == "passive"
            else "(spinning, the library default)"
        )
        + f", x {CONTENTION_EXCESS[policy]:.1f} measured beside busy processes "
        "(benchmarks/optimize.py --contention; docs/measurements.md)"
    )


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
        if run_is_done(trace, settings, config["device"]):
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


def describe_sensitivity(
    config: Mapping[str, Any], device: str, workdir: Path = Path(".")
) -> list[str]:
    """What the sensitivity grid will run and how long what is left will take, here and on a GPU."""
    section, runs = config["sensitivity"], targets.sensitivity_runs(config)
    cells = targets.sensitivity_cells(config)
    factors = ", ".join(dict.fromkeys(c["lr_factor"] for c in cells))
    lines = [
        f"sensitivity: {len(runs)} runs ({len(cells)} cells x {len(section['seeds'])} seeds; "
        f"learning-rate factors {factors}) "
        f"of {section['updates']} updates, metrics after "
        f"{targets.every_nth_update(section['metric_stride'])}, device {device}"
    ]
    left = {"cpu": 0.0, "cuda": 0.0}
    unknown, done = set(), 0
    for run in runs:
        trace = workdir / paths.sensitivity_run_file(
            "trace.parquet",
            run["vectors"],
            run["setup"],
            run["label_set"],
            run["seed"],
            run["lr_factor"],
        )
        settings = targets.sensitivity_settings(config, run["seed"], run["lr_factor"])
        if run_is_done(trace, settings, config["device"]):
            done += 1
            continue
        for kind in left:
            seconds = costs.sensitivity_run_seconds(
                config, run, kind, CPU_SECONDS, GPU_SECONDS_PER_UPDATE_WITH_METRICS
            )
            if seconds is None:
                unknown.add(run["vectors"])
            else:
                left[kind] += seconds
    parallel = max(1, available_cores() or 2)  # one-thread runs (rule optimize_sensitivity)
    here, gpu = duration(left["cpu"] / parallel), duration(left["cuda"])
    lines.append(
        f"{done} of {len(runs)} runs done; time left: about {here} on this "
        f"CPU ({parallel} run{'s' if parallel > 1 else ''} at a time), about {gpu} on "
        "one GPU (estimates: CPU-seconds of this grid's one-thread runs measured on a loaded "
        "2-core machine, scaled by items squared, dimension and evaluations "
        "(isotropy.costs.sensitivity_run_seconds); "
        "the GPU's by dimension from one H100 run at 384-d; embeddings come on top)"
    )
    if unknown:
        lines.append(f"no dimension known for {', '.join(sorted(unknown))}: not included above")
    return lines


def describe_extensions(
    config: Mapping[str, Any], device: str, workdir: Path = Path(".")
) -> list[str]:
    """What the extension study will run and how long what is left will take on this CPU: its
    one-thread runs and 2-thread fine-tuning runs from their measured CPU costs (config/costs.csv,
    rows extensions_*; isotropy.extensions.design), the speed probe's factor, the MiniLM
    embeddings not yet written and a start-up per job."""
    section, runs = config["extensions"], targets.extensions_runs(config)
    held = targets.extensions_heldout_files(config, "epochs.csv")
    lines = [
        f"extensions: {len(runs)} optimisation runs ({len(section['setups'])} setups x "
        f"{len(extensions_design.heads(section))} heads x {len(section['seeds'])} seeds) of "
        f"{section['updates']} updates on {section['items'] or 'all'} items, metrics after "
        f"{targets.every_nth_update(section['metric_stride'])}; {len(held)} fine-tuning runs of "
        f"at most {section['heldout']['max_epochs']} epochs on {section['heldout']['train_size']} "
        f"sentences; device {device}"
    ]
    todo = [r for r in runs if not _extensions_run_done(config, r, workdir)]
    tuning = {k: v for k, v in section["heldout"].items() if k != "setups"}
    tuned = {"settings": tuning, "device": config["device"]}
    held_todo = [f for f in held if not made_with(workdir / f, tuned)]
    probe = speed_probe()
    speed = host_speed_factor(probe)
    cores = max(1, available_cores() or 2)
    pace = costs.Pace(speed=speed, cores=cores)
    run_costs = [extensions_design.optimize_job_seconds(config, r, pace) for r in todo]
    unknown = sorted({f"{r['dataset']}/{r['head']}" for r, c in zip(todo, run_costs) if c is None})
    optimise = sum(c for c in run_costs if c is not None)  # one thread each
    held_run = extensions_design.heldout_job_seconds(config, {}, pace)
    finetune = len(held_todo) * held_run
    encoders = {(config["main"]["setups"][d]["encoder"], d) for d in section["setups"]}
    encoders |= {(config["main"]["setups"][d]["encoder"], d) for d in section["heldout"]["setups"]}
    embed = speed * sum(embedding_seconds(config, e, d, workdir) or 0.0 for e, d in encoders)
    total = optimise + finetune + embed
    lines.append(
        f"{len(runs) - len(todo)} of {len(runs)} runs and {len(held) - len(held_todo)} of "
        f"{len(held)} fine-tuning runs done; time left: about {duration(total)} on this CPU "
        f"(runs {duration(optimise)}, {cores} at a time; fine-tuning {duration(finetune)}; "
        f"embeddings {duration(embed)}; for idle cores, start-ups included; costs measured "
        "with benchmarks/extensions_cost.py, isotropy.extensions.design)"
    )
    lines.append(speed_line(probe, speed))
    if device == "cuda":
        lines.append(
            "on a GPU: no cost measured for these heads; the CPU estimate is an upper bound"
        )
    if unknown:
        lines.append(f"no measured cost for {', '.join(unknown)}: not included above")
    load = recent_load()
    factor = busy_factor(load, cores)
    if device == "cpu" and total and factor >= 1.25:
        lines.append(
            f"this machine is busy (load average {load:.1f} on {cores} cores): expect about "
            f"{duration(total * factor)} while it stays so"
        )
    return lines


def _extensions_run_done(config: Mapping[str, Any], run: Mapping[str, Any], workdir: Path) -> bool:
    """Whether an extension run's trace was made with these settings (its provenance record)."""
    dataset, head, seed = run["dataset"], run["head"], run["seed"]
    trace = workdir / paths.extensions_run_file("trace.parquet", dataset, head, seed)
    settings = extensions_design.run_settings(config, dataset, head, seed)
    return made_with(trace, {"run": settings, "device": config["device"]})


def describe_rajaee(config: Mapping[str, Any], device: str, workdir: Path = Path(".")) -> list[str]:
    """Target rajaee_cls_study: the lines of isotropy.istar.cls_cost (its costs and estimate),
    scaled to this machine by the speed probe, with the load-based factor when it is busy."""
    threads = config["rajaee_cls"]["resources"]["threads"]
    return _scaled(cls_cost.describe, config, device, threads, workdir=workdir)


def describe_geometry(
    config: Mapping[str, Any], device: str, workdir: Path = Path(".")
) -> list[str]:
    """Target geometry_study: the lines of isotropy.geometry.cost, scaled as describe_rajaee."""
    final = targets.geometry_targets(dict(config))
    # the STS data sets the run plans: one the data mirror lacks gets no job
    sts = workflow_inputs.geometry_sts_datasets(config)
    kwargs = {"final_files": final, "sts_datasets": sts, "workdir": workdir}
    return _scaled(geometry_cost.describe, config, device, JOB_THREADS, **kwargs)


def describe_istar(config: Mapping[str, Any], device: str, workdir: Path = Path(".")) -> list[str]:
    """Target istar_study: the lines of isotropy.istar.grid_cost, scaled as describe_rajaee."""
    threads = config["istar"]["resources"]["threads"]
    return _scaled(grid_cost.describe, config, device, threads, workdir=workdir)


def _scaled(
    describer: Any, config: Mapping[str, Any], device: str, threads: int, **kwargs: Any
) -> list[str]:
    """A study's lines and total from ``describer`` at this machine's speed probe and cores,
    with the speed line and, when the machine is busy, the load-based expectation."""
    probe = speed_probe()
    speed, cores = host_speed_factor(probe), available_cores() or 2
    pace = costs.Pace(speed=speed, cores=cores, job_overhead=JOB_OVERHEAD_SECONDS)
    lines, total = describer(config, device, pace, **kwargs)
    lines.append(speed_line(probe, speed))
    load = recent_load()
    factor = busy_factor(load, cores, threads=threads)
    if device == "cpu" and total and factor >= 1.25:
        lines.append(
            f"this machine is busy (load average {load:.1f} on {cores} cores): expect about "
            f"{duration(total * factor)} while it stays so"
        )
    return lines


def available_cores() -> int | None:
    """The cores this process may run on (its CPU affinity: a SLURM job's allocation)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--configfile", nargs="+", required=True, help="config.yaml, then overlays (later wins)"
    )
    parser.add_argument(
        "--target", required=True, help="the Snakemake target: main_study, preview_study, ..."
    )
    args = parser.parse_args(argv)
    try:
        config = workflow_config.load_config(args.configfile)
        problem = workflow_config.cuda_problem(config)
        if args.target == "preview_study" and "main" in config:
            problem = problem or workflow_config.preview_stride_problem(config)
        if problem:
            raise workflow_config.ConfigError(problem)
    except (workflow_config.ConfigError, OSError, yaml.YAMLError) as error:
        print(f"Configuration error: {error}", file=sys.stderr)
        return 1
    recorded = Path(paths.EFFECTIVE_CONFIG) / f"{args.target}.yaml"
    print(
        f"Configuration: {' + '.join(args.configfile)} (later files win); the run records its "
        f"effective configuration in {recorded} when it starts"
    )
    if args.target == "sensitivity_study" and "sensitivity" in config:
        for line in describe_sensitivity(config, device_kind(config["device"])):
            print(line)
        return 0
    if args.target == "extensions_study" and "extensions" in config:
        for line in describe_extensions(config, device_kind(config["device"])):
            print(line)
        return 0
    studies = {
        "rajaee_cls_study": ("rajaee_cls", describe_rajaee),
        "geometry_study": ("geometry", describe_geometry),
        "istar_study": ("istar", describe_istar),
    }
    section, describer = studies.get(args.target, ("", None))
    if describer is not None and section in config:
        for line in describer(config, device_kind(config["device"])):
            print(line)
        return 0
    study = TARGET_STUDIES.get(args.target)
    if study is None or (study != "preview" and study not in config):
        others = ["sensitivity_study", "extensions_study", *studies]
        modelled = ", ".join([*TARGET_STUDIES, *others])
        print(
            f"{args.target}: no time estimate: the measured costs cover {modelled}; "
            "docs/measurements.md gives the wall times measured for the other studies' runs"
        )
        return 0
    for line in describe(config, study, device_kind(config["device"])):
        print(line)
    return 0


# Seconds of expected work the load-based prior counts for against the observed rate.
PRIOR_WEIGHT_SECONDS = 60.0


@dataclass(frozen=True)
class PlannedJob:
    rule: str
    label: str  # the rule and its wildcards' values, e.g. "optimize_embeddings miniLM/polarity/0"
    seconds: float  # expected wall time on 2 idle cores


# rule -> the wall seconds one of its jobs adds to its study's total, from the same cost code
# as the study's printed estimate (each beside it); None where no cost is measured.
JOB_COSTS: dict[str, costs.JobCost] = {
    **extensions_design.JOB_COSTS,
    **geometry_cost.JOB_COSTS,
    **cls_cost.JOB_COSTS,
    **grid_cost.JOB_COSTS,
}


def job_seconds(
    config: Mapping[str, Any], rule: str, wildcards: Mapping[str, str], workdir: Path
) -> float:
    """A job's expected wall time on 2 idle cores: its modelled work (optimisation runs,
    embeddings and lookups; nothing for the short jobs) plus the start-up cost every job pays;
    for a rule of :data:`JOB_COSTS`, what it adds to its study's estimate at speed 1 on 2 cores
    (its start-up included)."""
    if rule in JOB_COSTS:
        pace = costs.Pace(speed=1.0, cores=JOB_THREADS, job_overhead=JOB_OVERHEAD_SECONDS)
        seconds = JOB_COSTS[rule](config, wildcards, pace)
        return JOB_OVERHEAD_SECONDS if seconds is None else seconds
    work = 0.0
    if rule in ("optimize_embeddings", "optimize_sensitivity") and "seed" in wildcards:
        seed = int(wildcards["seed"])
        if rule == "optimize_embeddings":
            settings = targets.optimisation_settings(
                dict(config), wildcards["study"], wildcards["dataset"], seed
            )
        else:
            settings = targets.sensitivity_settings(config, seed, wildcards.get("lr", "1"))
        device = device_kind(config["device"])
        work = run_seconds(wildcards["dataset"], settings, device) or 0.0
    elif rule in ("embed_sentences", "lookup_word_vectors") and "encoder" in wildcards:
        encoder, dataset = wildcards["encoder"], wildcards["dataset"]
        if encoder in config.get("encoders", {}):
            # The vectors are not written yet (the job is to run): cost them as if absent.
            work = embedding_seconds(config, encoder, dataset, workdir / "-") or 0.0
    return work + JOB_OVERHEAD_SECONDS


def plan(
    config: Mapping[str, Any],
    jobs: Iterable[tuple[int, str, Mapping[str, str]]],
    workdir: Path = Path("."),
) -> dict[int, PlannedJob]:
    """Every job to run (Snakemake's job id, rule name, wildcards) with its expected cost."""
    return {
        jobid: PlannedJob(
            rule,
            " ".join([rule, "/".join(str(v) for v in wildcards.values())]).strip(),
            job_seconds(config, rule, wildcards, workdir),
        )
        for jobid, rule, wildcards in jobs
    }


class RunProgress(logging.Handler):
    """Prints one line per finished job of the plan: done share and time left of the whole run."""

    def __init__(
        self,
        jobs: Mapping[int, PlannedJob],
        prior_factor: float = 1.0,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(level=logging.INFO)
        self.jobs, self.prior_factor, self.clock = dict(jobs), prior_factor, clock
        self.out = out
        self.start = clock()
        self.total = sum(job.seconds for job in self.jobs.values())
        self.done: dict[int, PlannedJob] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if str(getattr(record, "event", "")) != "job_finished":
            return
        jobid = getattr(record, "job_id", None)
        if (
            not isinstance(jobid, int)
            or jobid in self.done
            or (job := self.jobs.get(jobid)) is None
        ):
            return
        self.done[jobid] = job
        print(self.line(job), file=self.out or sys.stderr, flush=True)

    def line(self, job: PlannedJob) -> str:
        elapsed = self.clock() - self.start
        done_work = sum(j.seconds for j in self.done.values())
        share = done_work / self.total if self.total else 1.0
        return (
            f"run: {len(self.done)}/{len(self.jobs)} jobs done ({job.label}), "
            f"{share:.0%} of the expected work, {duration(elapsed)} elapsed, "
            f"about {duration(self.seconds_left(elapsed, done_work))} left"
        )

    def seconds_left(self, elapsed: float, done_work: float) -> float:
        """Expected work left times the observed wall seconds per second of expected work,
        with the load-based factor as a prior worth PRIOR_WEIGHT_SECONDS of observed work."""
        rate = (elapsed + self.prior_factor * PRIOR_WEIGHT_SECONDS) / (
            done_work + PRIOR_WEIGHT_SECONDS
        )
        return max(self.total - done_work, 0.0) * rate


def attach(workflow: Any, config: Mapping[str, Any]) -> RunProgress | None:
    """Called from ``onstart``: plan the jobs Snakemake is about to run and print a progress line
    after each. Jobs run elsewhere (a cluster) are counted the same way, from the main process."""
    dag = workflow.dag
    jobs = [(dag.jobid(job), job.rule.name, dict(job.wildcards_dict)) for job in dag.needrun_jobs()]
    if not jobs:
        return None
    cores = available_cores() or 2
    device = device_kind(config["device"])
    factor = (
        busy_factor(recent_load(), cores, sessions=compute.busy_sessions()) * host_speed_factor()
        if device == "cpu"
        else 1.0
    )
    parallel = 1 if device == "cuda" else max(1, cores // JOB_THREADS)
    handler = RunProgress(plan(config, jobs), prior_factor=factor / parallel)
    logging.getLogger("snakemake.logging").addHandler(handler)
    return handler


def record_effective_config(
    config: Mapping[str, Any], requested: Iterable[str], workdir: str | Path = "."
) -> list[Path]:
    """Write the run's effective configuration to ``logs/effective-config/<target>.yaml`` for
    every requested target named by a plain word (main_study, preview_study, ...; a file target
    has no such record). Only a run that starts writes it, never an estimate, so ``make report``
    describes the results the last real run made with the settings that made them."""
    written = []
    for target in sorted(requested):
        if not re.fullmatch(r"\w+", target):
            continue
        path = Path(workdir) / paths.EFFECTIVE_CONFIG / f"{target}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(dict(config), sort_keys=False))
        written.append(path)
    return written


def started(workflow: Any, config: Mapping[str, Any]) -> None:
    """What a run does when it starts (``onstart`` in rules/common.smk; never in a dry run or a
    report): the jobs' thread wait policy set in the environment they inherit (here, as no job
    has started yet), its configuration recorded, then the progress lines attached."""
    if added := compute.apply_job_environment():
        print(
            "jobs' idle threads sleep instead of spinning: "
            + ", ".join(f"{k}={v}" for k, v in added.items())
            + " (isotropy.compute; set OMP_WAIT_POLICY yourself to choose otherwise)",
            file=sys.stderr,
        )
    record_effective_config(config, workflow.dag_settings.targets)
    try:
        attach(workflow, config)
    except Exception as error:  # the progress lines are a help: never the reason a run stops
        print(f"run progress lines off: {type(error).__name__}: {error}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
