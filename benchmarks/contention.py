"""Contention mode shared by benchmarks/optimize.py and benchmarks/embedding_cost.py.

The same piece of work (a benchmark's ``--contention-worker``) runs in a fresh process for each
thread policy, first on the machine as it is ("idle") and then beside ``k`` busy processes that
this module starts and stops (one spinning Python interpreter each: a CPU-bound neighbour such as
another job). A fresh process per measurement, because OpenMP reads its wait policy once, when
the library loads. For each policy and state it prints wall time and process CPU time per unit
of work, and the loaded/idle ratios against the issue's targets: CPU per unit within 1.3x of idle,
wall within (1 + k / cores)x of idle. Figures only: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import psutil

from isotropy.compute import WAIT_VARIABLES

# The candidates measured: environment overrides and a thread count (None: the job's own); the
# workflow's jobs wait as isotropy.compute.CHOSEN_POLICY, the one measured best.
THREAD_POLICIES: dict[str, tuple[dict[str, str], int | None]] = {
    "default": ({}, None),
    "passive": ({"OMP_WAIT_POLICY": "PASSIVE"}, None),
    "spin-10k": ({"GOMP_SPINCOUNT": "10000"}, None),
    "spin-100k": ({"GOMP_SPINCOUNT": "100000"}, None),
    "1-thread": ({}, 1),
}


@dataclass(frozen=True)
class Measurement:
    policy: str
    state: str
    units: int
    wall_s: float
    cpu_s: float
    load: float

    @property
    def wall_per_unit(self) -> float:
        return self.wall_s / self.units

    @property
    def cpu_per_unit(self) -> float:
        return self.cpu_s / self.units


# How the busy neighbours share sessions (Linux gives each session, an autogroup, its share of
# the cores however many processes it runs): all in this one; all in one other (one user's job);
# two to a session (users' 2-thread jobs); each in its own (users' one-thread jobs).
ARRANGEMENTS = ("this-session", "one-session", "pairs", "own-sessions")


@contextlib.contextmanager
def busy_processes(count: int, arrangement: str = "this-session") -> Iterator[None]:
    """``count`` CPU-bound neighbours for the duration of the block, in sessions as
    ``arrangement`` (:data:`ARRANGEMENTS`) says, stopped however the block ends."""
    spin = [sys.executable, "-c", "while True: pass"]
    if arrangement == "this-session":
        started = [subprocess.Popen(spin) for _ in range(count)]
    elif arrangement in ARRANGEMENTS:
        # A shell leads each other session and starts its spinners; killing its process group
        # (the session's) stops them all.
        size = {"one-session": count, "pairs": 2, "own-sessions": 1}[arrangement]
        command = " & ".join([shlex.join(spin)] * size) + " & wait"
        started = [
            subprocess.Popen(["bash", "-c", command], start_new_session=True)
            for _ in range(count // size)
        ]
    else:
        raise ValueError(f"unknown arrangement {arrangement!r}: one of {ARRANGEMENTS}")
    try:
        time.sleep(1.0)  # let them reach the run queue before the measurement starts
        yield
    finally:
        spinners = [child for p in started for child in psutil.Process(p.pid).children(True)]
        for process in started:
            if arrangement == "this-session":
                process.kill()
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        for process in started:
            process.wait()
        psutil.wait_procs(spinners, timeout=10)  # the shells' spinners, reaped by init


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The contention mode's options, the same in every benchmark that has it."""
    parser.add_argument(
        "--contention",
        type=int,
        metavar="K",
        help="compare thread policies idle and beside K busy processes (CPU), then stop",
    )
    parser.add_argument(
        "--policies",
        default=",".join(THREAD_POLICIES),
        help="thread policies for --contention (THREAD_POLICIES)",
    )
    parser.add_argument(
        "--contention-repeats", type=int, default=1, help="with --contention: best of this many"
    )
    parser.add_argument("--contention-worker", action="store_true", help=argparse.SUPPRESS)


def compare_from_args(
    args: argparse.Namespace, script: str, worker_options: Sequence[str], unit: str
) -> list[Measurement]:
    """:func:`compare` as the options ask, the worker being ``script`` run with
    ``--contention-worker`` and ``worker_options``."""
    worker = [sys.executable, script, "--contention-worker", *worker_options]
    return compare(
        worker,
        policy_names(args.policies),
        args.contention,
        args.threads,
        repeats=args.contention_repeats,
        unit=unit,
    )


def run_mode(
    args: argparse.Namespace,
    script: str,
    worker: Callable[[], None],
    worker_options: Sequence[str],
    unit: str,
) -> bool:
    """The contention mode the options ask for, if any: as the worker (``worker()`` on the
    rule's ``--threads``), or the comparison of policies (:func:`compare_from_args`). False when
    neither is asked, so the benchmark goes on."""
    if args.contention_worker:
        import torch

        torch.set_num_threads(args.threads)
        worker()
        return True
    if args.contention is not None:
        compare_from_args(args, script, worker_options, unit)
        return True
    return False


def policy_names(text: str) -> list[str]:
    """The comma-separated policy names of a --policies option, each checked."""
    names = [name for name in text.split(",") if name]
    if unknown := [name for name in names if name not in THREAD_POLICIES]:
        raise SystemExit(
            f"unknown thread policies {unknown}; choose from {', '.join(THREAD_POLICIES)}"
        )
    return names


def worker_report(units: int, wall_s: float, cpu_s: float) -> None:
    """What a ``--contention-worker`` prints last: one JSON line the parent reads."""
    print(json.dumps({"units": units, "wall_s": wall_s, "cpu_s": cpu_s}), flush=True)


def measure(
    worker: Sequence[str], policy: str, state: str, threads: int, timeout: float
) -> Measurement:
    """Run ``worker`` (a command line) in a fresh process under ``policy``."""
    overrides, policy_threads = THREAD_POLICIES[policy]
    env = {k: v for k, v in os.environ.items() if k not in WAIT_VARIABLES}
    env.update(overrides)
    count = str(policy_threads or threads)
    env.update({"OMP_NUM_THREADS": count, "MKL_NUM_THREADS": count})
    done = subprocess.run(
        [*worker, "--threads", count],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(
            f"worker failed under policy {policy} ({state}), exit "
            f"{done.returncode}:\n{done.stderr[-2000:]}"
        )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return Measurement(policy, state, load=os.getloadavg()[0], **report)


def best(measurements: Sequence[Measurement]) -> Measurement:
    """The repeat least disturbed by the rest of the machine: the least wall time per unit (its
    CPU time and load are that repeat's)."""
    return min(measurements, key=lambda m: m.wall_per_unit)


def compare(
    worker: Sequence[str],
    policies: Sequence[str],
    busy: int,
    threads: int,
    unit: str,
    repeats: int = 1,
    timeout: float = 1200.0,
) -> list[Measurement]:
    """Each policy idle, then beside ``busy`` busy processes, ``repeats`` times in turn (the
    policies interleaved, so a disturbance of the machine falls on all of them alike); prints
    the best repeat of each."""
    cores = os.cpu_count() or 1
    bound = 1 + busy / cores
    print(
        f"[contention] {len(policies)} policies x (idle, beside {busy} busy processes) on {cores} "
        "cores, "
        f"{threads} threads unless the policy says, best of {repeats} repeat(s); "
        f"load average before: {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    header = (
        f"{'policy':<10} {'state':<7} {'load':>5} {'wall ms/' + unit:>14} {'CPU ms/' + unit:>13} "
        f"{'wall x idle':>11} {'CPU x idle':>10}"
    )
    print(header, flush=True)
    runs: dict[tuple[str, str], list[Measurement]] = {}
    for _ in range(repeats):
        for policy in policies:
            runs.setdefault((policy, "idle"), []).append(
                measure(worker, policy, "idle", threads, timeout)
            )
            with busy_processes(busy):
                runs.setdefault((policy, "loaded"), []).append(
                    measure(worker, policy, "loaded", threads, timeout)
                )
    results: list[Measurement] = []
    for policy in policies:
        idle, loaded = best(runs[policy, "idle"]), best(runs[policy, "loaded"])
        for m in (idle, loaded):
            wall_x = m.wall_per_unit / idle.wall_per_unit
            cpu_x = m.cpu_per_unit / idle.cpu_per_unit
            print(
                f"{policy:<10} {m.state:<7} {m.load:>5.1f} {m.wall_per_unit * 1e3:>14.2f} "
                f"{m.cpu_per_unit * 1e3:>13.2f} {wall_x:>11.2f} {cpu_x:>10.2f}"
                + (
                    f"   targets: wall <= {bound:.2f}x {'met' if wall_x <= bound else 'MISSED'}, "
                    f"CPU <= 1.30x {'met' if cpu_x <= 1.3 else 'MISSED'}"
                    if m.state == "loaded"
                    else ""
                ),
                flush=True,
            )
        results.extend((idle, loaded))
    return results
