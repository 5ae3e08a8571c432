"""What a long target will do and how long it will take: said before it starts (`make run`,
`make preview`), and after every finished job while it runs.

    python -m isotropy.estimate --configfile config.yaml config/offline.yaml my.yaml \
        --target main_study

Lays the files over each other as Snakemake does (later files win key by key) and validates the
result against the schema, then asks Snakemake's dry run which jobs the target needs now (what
is written with the same settings, code and inputs is not run again) and sums what each costs
(:func:`job_seconds`). It writes nothing: the run itself records its effective configuration
in ``logs/effective-config/<target>.yaml`` when it starts, so an estimate for other settings
never changes what ``make report`` describes.

While the run goes, :class:`RunProgress` prints one line per finished job::

    run: 9/22 jobs done (embed_sentences miniLM/snli), 31% of the expected work, 11 min elapsed,
    about 24 min left

The done share weighs each job by its expected cost (from the same :func:`job_seconds`, on 2
idle cores); the time left is the expected work left times the rate observed so far, with the
estimate's load and speed factor as a prior worth :data:`PRIOR_WEIGHT_SECONDS` of observed work.
"""

from __future__ import annotations

import argparse
import logging
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from isotropy import compute, costs, paths, studies
from isotropy.logs import duration
from isotropy.workflow import config as workflow_config

SNAKEFILE = Path(__file__).resolve().parents[2] / "Snakefile"


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
    study = next((s for s in studies.REGISTRY if s.target == args.target), None)
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
    try:
        jobs = dry_run_jobs(args.configfile, args.target)
    except RuntimeError as error:
        print(f"{args.target}: no time estimate: {error}", file=sys.stderr)
        return 1
    lines, _ = describe(config, jobs, costs.device_kind(config["device"]), args.target)
    print("\n".join(lines))
    return 0


JOB_HEADER = re.compile(r"^(?:local)?rule (\w+):$")


def dry_run_jobs(
    configfiles: Sequence[str], target: str, workdir: Path = Path("."), snakefile: Path = SNAKEFILE
) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job Snakemake's dry run of ``target`` in ``workdir`` plans: what
    the run would do now. A dry run that fails, or a job list that does not add up to the dry
    run's own count, raises RuntimeError with the reason."""
    command = [sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1", target]
    command += ["--snakefile", str(snakefile), "--directory", str(workdir), "--configfile"]
    command += [str(Path(file).resolve()) for file in configfiles]
    done = subprocess.run(command, capture_output=True, text=True)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        said = [line.strip() for line in output.splitlines() if line.strip()]
        end = max(len(said) - 3, 0)
        first = next((i for i, x in enumerate(said) if re.search(r"Error|Exception", x)), end)
        raise RuntimeError("Snakemake's dry run failed: " + " ".join(said[first : first + 3]))
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in output.splitlines():
        if header := JOB_HEADER.match(line):
            jobs.append((header.group(1), {}))
        elif jobs and line.startswith("    wildcards: "):
            pairs = (pair.partition("=") for pair in line[15:].split(", "))
            jobs[-1][1].update((name, value) for name, _, value in pairs)
    total = re.search(r"^total\s+(\d+)$", output, re.M)
    counted = int(total.group(1)) if total else 0  # none: "Nothing to be done"
    if len(jobs) != counted:
        raise RuntimeError(f"read {len(jobs)} jobs of the {counted} Snakemake's dry run counts")
    return jobs


def describe(
    config: Mapping[str, Any],
    jobs: Sequence[tuple[str, Mapping[str, str]]],
    device: str,
    target: str,
    pace: costs.Pace | None = None,
) -> tuple[list[str], float]:
    """The one way an estimate is paced: the lines and wall seconds of ``jobs`` (rule,
    wildcards) at ``pace`` (default: :meth:`isotropy.costs.Pace.here`, this machine now), each
    costed by :func:`job_seconds`; then, on a busy CPU, the wall time to expect while it stays
    so (:func:`isotropy.costs.busy_lines`)."""
    pace = pace or costs.Pace.here()
    by_rule: dict[str, list[float]] = {}
    unknown = []
    for rule, wildcards in jobs:
        seconds = job_seconds(config, rule, wildcards, pace, device)
        if seconds is None:
            unknown.append(label(rule, wildcards))
        by_rule.setdefault(rule, []).append(seconds or 0.0)
    total = sum(map(sum, by_rule.values()))
    costed = sorted((r for r in by_rule if r in JOB_COSTS), key=lambda r: -sum(by_rule[r]))
    short = [seconds for rule, all_ in by_rule.items() if rule not in JOB_COSTS for seconds in all_]
    clamped = " (clamped)" if pace.speed in costs.SPEED_FACTOR_BOUNDS else ""
    lines = [
        f"{target}: {len(jobs)} jobs to run (Snakemake's dry run), device {device}; time left: "
        f"about {duration(total)} for {pace.cores} idle cores, start-ups included",
        *(f"  {r}: {len(by_rule[r])} jobs, {duration(sum(by_rule[r]))}" for r in costed),
        f"  {len(short)} short jobs (downloads, preparation, tables, figures): start-ups only, "
        f"{duration(sum(short))}",
        f"CPU costs x {pace.speed:.2f}{clamped}: a fixed one-thread workload took "
        f"{pace.probe:.3f} CPU-s here against {costs.PROBE_CPU_SECONDS:.3f} where the costs were "
        "measured (isotropy.costs.speed_probe; docs/measurements.md)",
    ]
    if device == "cuda":
        lines.append(
            "on a GPU: only the direct-optimisation runs have a measured GPU cost; the other "
            "jobs are costed as on this CPU, an upper bound"
        )
    elif total > 86400:
        lines.append(
            f"a GPU-scale run: about {total / 86400:.0f} days on this CPU; its long rules ask for "
            "a GPU (resources gpu=1), where no cost is measured"
        )
    if unknown:
        lines.append(f"no measured cost for {', '.join(unknown)}: not included above")
    return lines + costs.busy_lines(device, total, pace.cores), total


# Seconds of expected work the load-based prior counts for against the observed rate.
PRIOR_WEIGHT_SECONDS = 60.0


@dataclass(frozen=True)
class PlannedJob:
    rule: str
    label: str  # the rule and its wildcards' values, e.g. "optimize_embeddings miniLM/polarity/0"
    seconds: float  # expected wall time on 2 idle cores


# rule -> the wall seconds one of its jobs adds at a pace (each study's record:
# isotropy.studies); a rule without one counts its start-up.
JOB_COSTS: dict[str, costs.JobCost] = studies.job_costs()


def label(rule: str, wildcards: Mapping[str, str]) -> str:
    """A job as the lines name it: its rule and its wildcards' values, e.g.
    "optimize_embeddings main/miniLM/polarity/0"."""
    return " ".join([rule, "/".join(str(v) for v in wildcards.values())]).strip()


def job_seconds(
    config: Mapping[str, Any],
    rule: str,
    wildcards: Mapping[str, str],
    pace: costs.Pace,
    device: str = "cpu",
) -> float | None:
    """The wall seconds one job adds to the total at ``pace``: for a rule of :data:`JOB_COSTS`
    its measured cost (None: none measured for these wildcards), for any other rule (the short
    ones: tables, figures, downloads) its start-up, as many side by side as the cores allow
    (one at a time on one GPU)."""
    if rule in JOB_COSTS:
        return JOB_COSTS[rule](config, wildcards, pace)
    return pace.share(0.0, costs.JOB_THREADS, device)


def plan(
    config: Mapping[str, Any], jobs: Iterable[tuple[int, str, Mapping[str, str]]]
) -> dict[int, PlannedJob]:
    """Every job to run (Snakemake's job id, rule name, wildcards) with its expected cost."""
    idle = costs.Pace(speed=1.0, cores=costs.JOB_THREADS, job_overhead=costs.JOB_OVERHEAD_SECONDS)
    planned = {}
    for jobid, rule, wildcards in jobs:
        seconds = job_seconds(config, rule, wildcards, idle)
        planned[jobid] = PlannedJob(rule, label(rule, wildcards), seconds or idle.job_overhead)
    return planned


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
    busy = costs.busy_factor(costs.recent_load(), pace.cores, compute.busy_sessions())
    factor = busy * pace.speed if device == "cpu" else 1.0
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
