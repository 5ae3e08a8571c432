"""`make resume`, `make report` and `make audit` refuse while Snakemake still runs in the folder:
unlocking would run its jobs twice, and a report or audit would read files being re-made.
``python -m isotropy.resume [--before resume|report|audit]``: exit 1 naming the running process.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import psutil


def running_snakemake(directory: str | os.PathLike) -> list[tuple[int, str]]:
    """(pid, command line) of every readable Snakemake process working in ``directory``."""
    folder = Path(directory).resolve()
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        argv, cwd = process.info["cmdline"], process.info["cwd"]
        if process.pid == os.getpid() or not argv or cwd is None:
            continue
        # `snakemake ...`, `python .../snakemake ...` or `python -m snakemake ...`
        names = [Path(word).name for word in argv[:2]]
        snakemake = "snakemake" in names or argv[1:3] == ["-m", "snakemake"]
        if snakemake and Path(cwd).resolve() == folder:
            found.append((process.pid, " ".join(argv)))
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before",
        choices=("resume", "report", "audit"),
        default="resume",
        help="what waits for the run: make resume (unlocks), make report or make audit (read "
        "its results)",
    )
    args = parser.parse_args(argv)
    running = running_snakemake(".")
    if running:
        pid, command = running[0]
        more = f" and {len(running) - 1} more" if len(running) > 1 else ""
        why = f"a run is in progress and may be re-making the files the {args.before} reads"
        if args.before == "resume":
            why = "unlocking would run its jobs a second time"
        print(
            f"{args.before}: Snakemake still runs in {Path.cwd()} (pid {pid}: "
            f"{command[:200]}{more}); {why}: wait for it, or stop it "
            f"(kill {pid}) and then make {args.before}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
