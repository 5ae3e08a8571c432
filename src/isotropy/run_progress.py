"""The whole run's progress: one line per finished job with the run's done share and time left.

Each job's own log tells how far that job is (:class:`isotropy.logs.ProgressLog`); this says how
far the run is. When a run starts (``onstart`` in rules/common.smk) every job Snakemake will run
gets an expected cost from the same measured costs as the estimate (:mod:`isotropy.estimate`:
an optimisation run from its updates and metric evaluations, an embedding from its texts, every
job a fixed start-up cost). A :class:`RunProgress` handler on Snakemake's logger then prints, for
every finished job::

    run: 9/22 jobs done (embed_sentences miniLM/snli), 31% of the expected work, 11 min elapsed, about 24 min left

The done share weighs each job by its expected cost, not by its count (22 jobs of which two
embeddings and four runs are nine tenths of the work). The time left is the expected work left
times the rate observed so far (elapsed wall time per second of expected work), which carries the
machine's load and any other slowdown; until a minute of expected work is done the load-based
factor of the estimate (:func:`isotropy.estimate.busy_factor`, times the speed probe's
factor) weighs in, as a prior worth 60 s of observed work.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from isotropy import estimate, threads
from isotropy.logs import duration
from isotropy.workflow import targets

# Seconds of expected work the load-based prior counts for against the observed rate.
PRIOR_WEIGHT_SECONDS = 60.0


@dataclass(frozen=True)
class PlannedJob:
    rule: str
    label: str  # the rule and its wildcards' values, e.g. "optimize_embeddings miniLM/polarity/0"
    seconds: float  # expected wall time on 2 idle cores


def job_seconds(
    config: Mapping[str, Any], rule: str, wildcards: Mapping[str, str], workdir: Path
) -> float:
    """A job's expected wall time on 2 idle cores: its modelled work (optimisation runs,
    embeddings and lookups; nothing for the short jobs) plus the start-up cost every job pays."""
    work = 0.0
    if rule in ("optimize_embeddings", "optimize_sensitivity") and "seed" in wildcards:
        seed = int(wildcards["seed"])
        if rule == "optimize_embeddings":
            settings = targets.optimisation_settings(
                dict(config), wildcards["study"], wildcards["dataset"], seed
            )
        else:
            settings = targets.sensitivity_settings(config, seed, wildcards.get("lr", "1"))
        device = estimate.device_kind(config["device"])
        work = estimate.run_seconds(wildcards["dataset"], settings, device) or 0.0
    elif rule in ("embed_sentences", "lookup_word_vectors") and "encoder" in wildcards:
        encoder, dataset = wildcards["encoder"], wildcards["dataset"]
        if encoder in config.get("encoders", {}):
            # The vectors are not written yet (the job is to run): cost them as if absent.
            work = estimate.embedding_seconds(config, encoder, dataset, workdir / "-") or 0.0
    return work + estimate.JOB_OVERHEAD_SECONDS


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
        job = self.jobs.get(jobid)
        if job is None or jobid in self.done:
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
    cores = estimate.available_cores() or 2
    device = estimate.device_kind(config["device"])
    factor = (
        estimate.busy_factor(estimate.recent_load(), cores, sessions=threads.busy_sessions())
        * estimate.host_speed_factor()
        if device == "cpu"
        else 1.0
    )
    parallel = 1 if device == "cuda" else max(1, cores // estimate.JOB_THREADS)
    handler = RunProgress(plan(config, jobs), prior_factor=factor / parallel)
    logging.getLogger("snakemake.logging").addHandler(handler)
    return handler
