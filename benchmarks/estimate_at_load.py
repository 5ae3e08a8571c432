"""Check the estimate's time at load against real runs (issue 83, point 5; docs/measurements.md).

For each state of the machine asked for (idle; K busy one-thread processes in one other session;
K busy processes each in a session of its own), this script starts the neighbours, asks the
estimate for the target (its idle time, the probes' slowdowns and its time at load), deletes the
target's outputs and everything they are made from, runs the target with Snakemake and times it,
then stops the neighbours. It prints one row per state: the probes, the two estimates, the wall
time the run took, the run's CPU time and the estimate's error. Figures only: nothing here
asserts a timing.

    PYTHONPATH=src ISOTROPY_MIRROR=../shared/mirror python benchmarks/estimate_at_load.py \
        --states idle,one-session:8,own-sessions:8

The default target is the preview's word2vec/supersense run (6 jobs, about a minute idle): small
enough to repeat, with a costed optimisation, a costed lookup and four short jobs.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import subprocess
import sys
import time
from collections.abc import Iterator

import contention

from isotropy import costs, estimate
from isotropy.workflow import config as workflow_config

TARGET = "results/preview/word2vec/supersense/seed0/summary.json"


@contextlib.contextmanager
def neighbours(state: str) -> Iterator[None]:
    """The busy processes of ``state``: ``idle`` none; ``ARRANGEMENT:K`` K spinners arranged in
    sessions as :data:`contention.ARRANGEMENTS` says (one-session:8: one other user's job of 8
    processes; pairs:8: four users' 2-thread jobs; own-sessions:8: eight users' one-thread
    jobs). Stopped however the block ends."""
    if state == "idle":
        yield
        return
    arrangement, _, count = state.partition(":")
    with contention.busy_processes(int(count or 1), arrangement):
        time.sleep(1.0)  # and a second more, so the estimate's probes meet a settled queue
        yield


def measure(state: str, configfiles: list[str], target: str, cores: int) -> dict[str, float]:
    """The estimate's figures and the real run's wall and CPU seconds in ``state``."""
    config = workflow_config.load_config(configfiles).settings  # the estimate reads the model
    snakemake = [sys.executable, "-m", "snakemake", "--cores", str(cores), target]
    snakemake += ["--configfile", *configfiles]
    with neighbours(state):
        pace = costs.Pace.here()
        jobs = estimate.dry_run_jobs(configfiles, target)
        lines, idle = estimate.describe(config, jobs, "cpu", target, pace)
        print(f"[{state}] " + "\n  ".join(lines), flush=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(snakemake, check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {
        "jobs": len(jobs),
        "serial": pace.contention_serial,
        "parallel": pace.contention,
        "idle_s": idle,
        **dict(zip(("at_load_s", "up_to_s"), pace.at_load(idle), strict=True)),
        "wall_s": wall,
        "cpu_s": cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--states", default="idle,one-session:8,own-sessions:8")
    parser.add_argument("--target", default=TARGET)
    parser.add_argument("--configfile", nargs="+", default=["config.yaml", "config/offline.yaml"])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    rows = []
    for state in args.states.split(","):
        # Everything the target is made from goes, so each state runs all of its jobs again.
        subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", "1", "--delete-all-output"]
            + [args.target, "--configfile", *args.configfile],
            check=True,
            capture_output=True,
        )
        rows.append((state, measure(state, args.configfile, args.target, args.cores)))
    print(
        "state | jobs | slowdown 1 process | slowdown per core | estimate idle | "
        "estimate at load | up to | run wall | run CPU | error | error of the upper bound"
    )
    for state, row in rows:
        error = 100 * (row["at_load_s"] / row["wall_s"] - 1)
        print(
            f"{state} | {row['jobs']:.0f} | {row['serial']:.2f} | {row['parallel']:.2f} | "
            f"{row['idle_s']:.0f} s | {row['at_load_s']:.0f} s | {row['up_to_s']:.0f} s | "
            f"{row['wall_s']:.0f} s | {row['cpu_s']:.0f} s | {error:+.0f}% | "
            f"{100 * (row['up_to_s'] / row['wall_s'] - 1):+.0f}%"
        )


if __name__ == "__main__":
    main()
