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
job a fixed start-up cost; every study's costed rules from its record, through
:data:`JOB_COSTS`: :mod:`isotropy.studies`). A :class:`RunProgress` handler on Snakemake's
logger then prints, for every finished job::

    run: 9/22 jobs done (embed_sentences miniLM/snli), 31% of the expected work, 11 min elapsed,
    about 24 min left

The done share weighs each job by its expected cost, not by its count (22 jobs of which two
embeddings and four runs are nine tenths of the work). The time left is the expected work left
times the rate observed so far (elapsed wall time per second of expected work), which carries the
machine's load and any other slowdown; until a minute of expected work is done the load-based
factor of the estimate (:func:`isotropy.costs.busy_factor`, times the speed probe's
factor) weighs in, as a prior worth 60 s of observed work.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from isotropy import compute, costs, paths, studies
from isotropy.logs import duration
from isotropy.studies.record import Estimator
from isotropy.workflow import config as workflow_config


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
    study = next((s for s in studies.registry() if s.target == args.target), None)
    try:
        config = workflow_config.load_config(args.configfile)
        problem = compute.cuda_problem(config["device"])
        if study is not None and study.check is not None:
            problem = problem or study.check(config)
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
    if study is None or study.estimate is None or not study.configured(config):
        modelled = [s.target for s in studies.registry() if s.estimate and s.target]
        print(
            f"{args.target}: no time estimate: the measured costs cover {', '.join(modelled)}; "
            "docs/measurements.md gives the wall times measured for the other studies' runs"
        )
        return 0
    for line in describe(study.estimate, config, costs.device_kind(config["device"])):
        print(line)
    return 0


def describe(
    estimate: Estimator, config: Mapping[str, Any], device: str, workdir: Path = Path(".")
) -> list[str]:
    """The one way a study's ``estimate`` is paced: its lines and wall seconds left at this
    machine's pace (:meth:`isotropy.costs.Pace.here`: the speed probe, the cores, the start-up
    of a job), then, on a busy CPU, the wall time to expect while it stays so
    (:func:`isotropy.costs.busy_lines`)."""
    pace = costs.Pace.here()
    lines, seconds = estimate(config, device, pace, workdir)
    return lines + costs.busy_lines(device, seconds, pace.cores)


# Seconds of expected work the load-based prior counts for against the observed rate.
PRIOR_WEIGHT_SECONDS = 60.0


@dataclass(frozen=True)
class PlannedJob:
    rule: str
    label: str  # the rule and its wildcards' values, e.g. "optimize_embeddings miniLM/polarity/0"
    seconds: float  # expected wall time on 2 idle cores


# rule -> the wall seconds one of its jobs adds to its study's total, from the same cost code
# as the study's printed estimate (each study's record: isotropy.studies); None where no cost is
# measured.
JOB_COSTS: dict[str, costs.JobCost] = studies.job_costs()


def job_seconds(config: Mapping[str, Any], rule: str, wildcards: Mapping[str, str]) -> float:
    """A job's expected wall time on 2 idle cores: for a rule of :data:`JOB_COSTS`, what it adds
    to its study's estimate at speed 1 on 2 cores (its start-up included); any other job (the
    short ones: tables, figures, downloads) its start-up alone."""
    if rule not in JOB_COSTS:
        return costs.JOB_OVERHEAD_SECONDS
    pace = costs.Pace(speed=1.0, cores=costs.JOB_THREADS, job_overhead=costs.JOB_OVERHEAD_SECONDS)
    seconds = JOB_COSTS[rule](config, wildcards, pace)
    return costs.JOB_OVERHEAD_SECONDS if seconds is None else seconds


def plan(
    config: Mapping[str, Any], jobs: Iterable[tuple[int, str, Mapping[str, str]]]
) -> dict[int, PlannedJob]:
    """Every job to run (Snakemake's job id, rule name, wildcards) with its expected cost."""
    return {
        jobid: PlannedJob(
            rule,
            " ".join([rule, "/".join(str(v) for v in wildcards.values())]).strip(),
            job_seconds(config, rule, wildcards),
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
    pace, device = costs.Pace.here(), costs.device_kind(config["device"])
    factor = (
        costs.busy_factor(costs.recent_load(), pace.cores, sessions=compute.busy_sessions())
        * pace.speed
        if device == "cpu"
        else 1.0
    )
    parallel = 1 if device == "cuda" else pace.parallel(costs.JOB_THREADS)
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
