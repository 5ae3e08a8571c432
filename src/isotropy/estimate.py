"""What a long target will do and how long it will take, said before it starts (`make run`,
`make preview`): the jobs of Snakemake's dry run, each costed (:func:`describe`). It writes
nothing; the run records its effective configuration when it starts (:func:`started`)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from isotropy import compute, costs, intake, paths, studies
from isotropy.configuration import Config
from isotropy.logs import TimeLeft, duration
from isotropy.workflow import config as workflow_config

SNAKEFILE = Path(__file__).resolve().parents[2] / "Snakefile"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--configfile", nargs="+", required=True, help="config.yaml, then overlays (later wins)"
    )
    parser.add_argument("--target", nargs="+", required=True, help="main_study, preview_study, ...")
    parser.add_argument(
        "--finished",
        choices=("refuse", "replace", "plan"),
        default="refuse",
        help="over a finished run with other settings: refuse, replace it, or a dry run's plan",
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="instead: are the target's results all there? (make report; one line if not)",
    )
    args = parser.parse_args(argv)
    args.target = " ".join(args.target)
    if args.whole:
        return report_ready(args.target, args.configfile)
    study = next((s for s in studies.REGISTRY if s.target == args.target), None)
    try:
        loaded = workflow_config.load_config(args.configfile)  # the one validation
        settings = loaded.settings
        problem = compute.cuda_problem(settings.device)
        if study is not None and study.check is not None:
            problem = problem or study.check(settings)
        if problem:
            raise workflow_config.ConfigError(problem)
    except (workflow_config.ConfigError, OSError, yaml.YAMLError) as error:
        print(f"Configuration error: {error}", file=sys.stderr)
        return 1
    if not over_finished_run(args.target, loaded, args.finished):
        return 1
    recorded = ", ".join(f"{paths.EFFECTIVE_CONFIG}/{word}.yaml" for word in args.target.split())
    print(
        f"Configuration: {' + '.join(args.configfile)} (later files win); the run records its "
        f"effective configuration in {recorded} when it starts"
    )
    try:
        jobs = dry_run_jobs(args.configfile, args.target)
    except RuntimeError as error:
        print(f"{args.target}: no time estimate: {error}", file=sys.stderr)
        return 1
    device = compute.resolve_device().type if settings.device == "auto" else settings.device
    lines, _ = describe(settings, jobs, device, args.target)
    print("\n".join(lines))
    return 0


def over_finished_run(target: str, loaded: workflow_config.Loaded, finished: str) -> bool:
    """Whether a run of ``target`` may start over a finished run with other settings: refused,
    replaced (its report's own files removed) or named in a dry run's ``plan``."""
    other, clash = finished_run(target, loaded)
    if clash and finished == "refuse":
        keep = f"make report REPORT_TARGET={other} REPORT=<name>.html"
        print(
            f"{target}: refused before it starts: {clash}; to keep it, make its report first "
            f"({keep}) or run in a copy of this folder; to replace it, the same with REPLACE=1",
            file=sys.stderr,
        )
        return False
    if clash and finished == "plan":
        print(f"{target}: {clash}: a run, not this dry run, is refused (REPLACE=1)")
    elif clash:
        folder = Path(paths.PREVIEW_CLAIMS if other == "preview_study" else paths.CLAIMS).parent
        stale = [*folder.glob("claims.*"), *folder.glob("paper_comparison.*")]
        for path in [*stale, *folder.glob("report/*")]:
            path.unlink()
        print(f"REPLACE=1: {clash}: replaced; its report's files removed")
    return True


def differences(old: Any, new: Any, key: str = "") -> list[str]:
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return [] if old == new else [key]
    keys = dict.fromkeys([*old, *new])
    return [d for k in keys for d in differences(old.get(k), new.get(k), f"{key}.{k}".lstrip("."))]


def results_of(target: str, config: Config) -> list[str]:
    """The final files of ``target`` (a study target, else ``rule all``'s) under ``config``."""
    return studies.target_rules(config).get(target) or studies.rule_all_targets(config)


UNREADABLE = (workflow_config.ConfigError, intake.FolderError, OSError)  # a record's refusals


def recorded_run(record: Path) -> tuple[str, dict[str, Any], Config]:
    """A run's effective configuration (:func:`started`) through the intake's door, a linked, huge
    or damaged record refused: the files it was made with, its settings and their model."""
    files, settings = intake.read_effective_config(record.parent, record.name)
    model = workflow_config.check_loaded_config(workflow_config.with_sources(settings))
    return files, settings, model


def finished_run(target: str, loaded: workflow_config.Loaded) -> tuple[str, str]:
    """(its target, what it is) of the finished run with other settings whose results a run of
    ``target`` would overwrite; ("", "") if none."""
    config, typed = loaded
    mine, targets = set(results_of(target, typed)), (target, "all", *studies.target_rules(typed))
    for recorded in sorted(Path(paths.EFFECTIVE_CONFIG).glob("*.yaml")):
        if recorded.stem not in targets:
            continue
        before = typed
        try:
            files, settings, checked = recorded_run(recorded)
            before, changed = checked, differences(settings, config)  # only once it validates
        except UNREADABLE as error:
            files, changed = "", [f"its settings cannot be read ({error})"]
        made = [path for path in results_of(recorded.stem, before) if Path(path).exists()]
        if not changed or not (mine & set(made) or recorded.stem == target and made):
            continue
        folder = os.path.commonpath([os.path.dirname(path) for path in made]) + "/"
        files = files or "unrecorded files"
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return recorded.stem, (
            f"{folder} holds the {recorded.stem} run made with {files} ({recorded}), and these "
            f"settings differ ({', '.join(changed[:3])}{more})"
        )
    return "", ""


# The targets `make run` and `make preview` make, offered when the reported one is missing.
REPORTABLE = ("preview_study", "main_study")


def missing_results(target: str, settings: Config) -> list[str]:
    return [path for path in results_of(target, settings) if not Path(path).exists()]


def report_ready(target: str, configfiles: list[str]) -> int:
    """0 when ``target``'s results are all there; else 1, and one line naming the first missing."""
    try:
        settings = workflow_config.load_config(configfiles).settings
    except (workflow_config.ConfigError, OSError) as error:
        print(f"make report: configuration error: {error}", file=sys.stderr)
        return 1
    if not (missing := missing_results(target, settings)):
        return 0
    whole = []
    for other in (t for t in REPORTABLE if t != target):  # by the configuration that ran it
        record = Path(paths.EFFECTIVE_CONFIG) / f"{other}.yaml"
        with contextlib.suppress(*UNREADABLE):  # a record refused names no whole run
            ran = recorded_run(record)[2] if record.is_file() else settings
            whole += [other] if not missing_results(other, ran) else []
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


JOB_HEADER = re.compile(r"^(?:local)?rule (\w+):$")


def dry_run_jobs(
    configfiles: Sequence[str], target: str, workdir: Path = Path("."), snakefile: Path = SNAKEFILE
) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job of Snakemake's dry run of ``target``; RuntimeError if it
    fails or its jobs do not add up to its own count."""
    command = [sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1", *target.split()]
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


LONG_SECONDS = 15 * 60  # a run said to be long before it starts
LONG_RUN = "a long run: more than {} on {} idle cores (Ctrl-C stops it; make resume goes on)"

# rule -> the wall seconds one of its jobs adds at a pace; a rule without one counts its start-up.
JOB_COSTS: dict[str, studies.JobCost] = studies.job_costs()


def job_seconds(config: Config, rule: str, wildcards: Mapping, pace: costs.Pace) -> float | None:
    """One job's wall seconds: its rule's cost in :data:`JOB_COSTS`, else its start-up."""
    if rule in JOB_COSTS:
        return JOB_COSTS[rule](config, wildcards, pace)
    return pace.share(0.0, costs.JOB_THREADS, config.device)


def describe(
    config: Config,
    jobs: Sequence[tuple[str, Mapping[str, str]]],
    device: str,
    target: str,
    pace: costs.Pace | None = None,
) -> tuple[list[str], float]:
    """The lines and wall seconds of ``jobs`` (rule, wildcards) on ``device`` at ``pace``."""
    pace, config = pace or costs.Pace.here(), config.model_copy(update={"device": device})
    by_rule: dict[str, list[float]] = {}
    unknown = []
    for rule, wildcards in jobs:
        if (seconds := job_seconds(config, rule, wildcards, pace)) is None:
            unknown.append(" ".join([rule, "/".join(wildcards.values())]).strip())
        by_rule.setdefault(rule, []).append(seconds or 0.0)
    total = sum(map(sum, by_rule.values()))
    costed = sorted((r for r in by_rule if r in JOB_COSTS), key=lambda r: -sum(by_rule[r]))
    short = [seconds for rule, all_ in by_rule.items() if rule not in JOB_COSTS for seconds in all_]
    clamped = " (clamped)" if pace.speed in costs.SPEED_FACTOR_BOUNDS else ""
    expected, at_most = pace.at_load(total, device)
    at_load_words = (
        f"; at this machine's present load about {duration(expected)} (a process alone runs "
        f"{pace.contention_serial:.1f}x slower), up to {duration(at_most)} if its jobs keep all "
        f"{pace.cores} cores busy ({pace.contention:.1f}x: isotropy.costs.contention_probe)"
        if at_most >= 1.25 * total and total
        else ""
    )
    lines = [
        f"{target}: {len(jobs)} jobs to run (Snakemake's dry run), device {device}; time left: "
        f"about {duration(total)} for {pace.cores} idle cores, start-ups included{at_load_words}",
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
    if total > LONG_SECONDS:
        lines.append(LONG_RUN.format(duration(LONG_SECONDS), pace.cores))
    return lines, total


def started(workflow: Any, settings: Config) -> None:
    """``onstart``: the jobs' thread wait policy, the time left said after each job and each
    target's effective configuration, ``workflow.config`` (logs/effective-config/<target>.yaml)."""
    # Each planned job's estimate as `describe` makes it (at one speed: only ratios are used).
    pace = costs.Pace(cores=costs.available_cores() or 2, job_overhead=costs.JOB_OVERHEAD_SECONDS)
    dag: Any = getattr(workflow, "dag", None)
    on = settings.model_copy(update={"device": compute.planned_device(settings.device)})
    planned = {
        dag.jobid(job): job_seconds(on, job.rule.name, job.wildcards_dict, pace) or 0.0
        for job in (dag.needrun_jobs() if dag else ())
    }
    logging.getLogger("snakemake.logging").addHandler(TimeLeft(costs=planned))
    if added := compute.apply_job_environment():
        print(
            "jobs' idle threads sleep instead of spinning: "
            + ", ".join(f"{k}={v}" for k, v in added.items())
            + " (isotropy.compute; set OMP_WAIT_POLICY yourself to choose otherwise)",
            file=sys.stderr,
        )
    here = Path.cwd()
    files = [
        str(Path(f).relative_to(here) if Path(f).is_relative_to(here) else f)
        for f in getattr(workflow, "overwrite_configfiles", None) or ()
    ]
    header = paths.MADE_WITH + (" + ".join(dict.fromkeys(files)) or "the defaults (config.yaml)")
    text = header.replace("\n", " ") + "\n" + yaml.safe_dump(dict(workflow.config), sort_keys=False)
    for target in sorted(workflow.dag_settings.targets):
        if re.fullmatch(r"\w+", target):
            path = Path(paths.EFFECTIVE_CONFIG) / f"{target}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
