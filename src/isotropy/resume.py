"""`make resume` refuses while Snakemake still runs in the folder: unlocking a live run would let
a second one make the same files at the same time. `make report` refuses too: the run may be
re-making the files the report reads (it would fail with "does not exist", or mix old and new).
With ``--target``, `make report` also stops in one line when that target's results are missing
(say, the last run was killed), naming a target whose results are whole and how to report it.

    python -m isotropy.resume [--before resume|report] [--target T --configfile F ...]

Exit 1 naming the running processes (pid and command), or the missing results; 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import psutil

from isotropy import paths


def running_snakemake(directory: str | os.PathLike) -> list[tuple[int, str]]:
    """(pid, command line) of every Snakemake process whose working directory is ``directory``
    (another user's process, whose folder cannot be read, is not one)."""
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
        choices=("resume", "report"),
        default="resume",
        help="what waits for the run: make resume (unlocks) or make report (reads its results)",
    )
    parser.add_argument("--target", help="the target make report reports: are its results there?")
    parser.add_argument(
        "--configfile", nargs="+", default=["config.yaml"], help="its configuration"
    )
    args = parser.parse_args(argv)
    if args.target:
        return report_ready(args.target, args.configfile)
    running = running_snakemake(".")
    if running:
        pid, command = running[0]
        more = f" and {len(running) - 1} more" if len(running) > 1 else ""
        why = {
            "resume": "unlocking would run its jobs a second time",
            "report": "a run is in progress and may be re-making the files the report reads",
        }[args.before]
        print(
            f"{args.before}: Snakemake still runs in {Path.cwd()} (pid {pid}: "
            f"{command[:200]}{more}); {why}: wait for it, or stop it "
            f"(kill {pid}) and then make {args.before}",
            file=sys.stderr,
        )
        return 1
    return 0


# The targets a newcomer makes (make run, make preview), offered when the reported one is missing.
REPORTABLE = ("preview_study", "main_study")


def missing_results(target: str, configfiles: list[str]) -> list[str]:
    """The final files of ``target`` (rule all's for ``all``) under ``configfiles`` that the
    folder lacks."""
    from isotropy import studies  # the registry: only for this check, not for a resume
    from isotropy.workflow import config as workflow_config

    config = workflow_config.load_config(configfiles)
    wanted = studies.target_rules(config).get(target) or studies.rule_all_targets(config)
    return [path for path in wanted if not Path(path).exists()]


def report_ready(target: str, configfiles: list[str]) -> int:
    """0 when ``target``'s results are all there; else 1, and one line naming the first missing
    file and a target whose results are whole (with the command that reports it)."""
    from isotropy.workflow.config import ConfigError

    try:
        missing = missing_results(target, configfiles)
    except (ConfigError, OSError) as error:
        print(f"make report: configuration error: {error}", file=sys.stderr)
        return 1
    if not missing:
        return 0
    # Each other target with the configuration its last run recorded, if it ran.
    recorded = {t: Path(paths.EFFECTIVE_CONFIG) / f"{t}.yaml" for t in REPORTABLE}
    whole = [
        other
        for other in REPORTABLE
        if other != target
        and not missing_results(
            other, [str(recorded[other])] if recorded[other].is_file() else configfiles
        )
    ]
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    hint = (
        f"{whole[0]}'s results are whole: make report REPORT_TARGET={whole[0]}"
        if whole
        else f"make it first (make {'preview' if target == 'preview_study' else 'run'})"
    )
    print(
        f"make report: {target} has no results yet ({missing[0]}{more} missing); {hint}",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
