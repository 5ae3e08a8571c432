"""Run one workflow step outside Snakemake, in this process: for a debugger, a profiler or a REPL.

    python -m isotropy.debug RULE [WILDCARD=VALUE ...] [--configfile FILE ...] [--directory DIR]

builds the ``snakemake`` object that the rule's script gets under Snakemake (inputs, outputs,
params, wildcards, threads, log and config, resolved by Snakemake itself from the Snakefile)
and runs the script with it. Its inputs must exist already (make them with ``snakemake``).
Under pdb: ``python -m pdb -m isotropy.debug optimize_embeddings study=main encoder=miniLM
dataset=polarity seed=0``. In a REPL, :func:`mock_snakemake` gives the object itself, to call a
script's ``main`` or the package functions it wraps (pypsa-eur's ``mock_snakemake``, same idea).
"""

from __future__ import annotations

import argparse
import os
import runpy
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAKEFILE = ROOT / "Snakefile"


def mock_snakemake(
    rule: str,
    configfiles: Sequence[str | os.PathLike] = (),
    workdir: str | os.PathLike = ".",
    **wildcards: str,
):
    """The ``snakemake`` object of one job of ``rule`` with ``wildcards``, and its script's path.

    ``configfiles`` are laid over the repository's config.yaml.

    Paths in it are relative to ``workdir``, where the script must then run (the workflow's
    working directory; :func:`main` changes into it).
    """
    from snakemake.api import SnakemakeApi
    from snakemake.dag import DAG
    from snakemake.iocontainers import Wildcards
    from snakemake.jobs import Job
    from snakemake.script import Snakemake
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )

    workdir = Path(workdir).resolve()
    # The Snakefile's own config.yaml first, then the overlays, as `make` passes them.
    configs = list(dict.fromkeys([ROOT / "config.yaml", *(Path(c).resolve() for c in configfiles)]))
    with SnakemakeApi(OutputSettings()) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=configs),
            snakefile=SNAKEFILE,
            workdir=workdir,
        )
        workflow = workflow_api.dag(DAGSettings()).workflow_api._workflow
        job_rule = _scripted_rule(workflow, rule, wildcards)
        job = Job(job_rule, DAG(workflow, rules=[job_rule]), Wildcards(fromdict=dict(wildcards)))
        script = (
            Path(job_rule.basedir.get_path_or_uri(secret_free=True)) / job_rule.script
        ).resolve()
        snakemake = Snakemake(
            job.input,
            job.output,
            job.params,
            job.wildcards,
            job.threads,
            job.resources,
            job.log,
            workflow.config,
            job_rule.name,
            None,
            scriptdir=str(script.parent),
        )
    return snakemake, script


def _scripted_rule(workflow, rule: str, wildcards: dict[str, str]):
    """The rule named ``rule``, which must run a script and be given all its wildcards; else
    exit naming what is wrong (and the known rules)."""
    try:
        job_rule = workflow.get_rule(rule)
    except Exception as error:
        known = sorted(r.name for r in workflow.rules)
        raise SystemExit(f"unknown rule {rule!r} ({error}); rules: {', '.join(known)}") from None
    if job_rule.script is None:
        raise SystemExit(f"rule {rule!r} runs no script; nothing to debug outside Snakemake")
    missing = sorted(set(job_rule.wildcard_names) - set(wildcards))
    if missing:
        raise SystemExit(f"rule {rule!r} needs the wildcards {missing}: pass them as NAME=VALUE")
    return job_rule


def main(argv: Sequence[str] | None = None) -> None:
    """Run the script of one job of a rule in this process, in the workflow's directory."""
    parser = argparse.ArgumentParser(
        prog="python -m isotropy.debug", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("rule")
    parser.add_argument("wildcards", nargs="*", metavar="NAME=VALUE", type=_wildcard)
    parser.add_argument("--configfile", nargs="*", default=[], help="overlays on config.yaml")
    parser.add_argument("--directory", "-d", default=".", help="the workflow's working directory")
    args = parser.parse_args(argv)
    snakemake, script = mock_snakemake(
        args.rule, args.configfile, args.directory, **dict(args.wildcards)
    )
    os.chdir(args.directory)
    for path in list(snakemake.output) + list(snakemake.log):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    runpy.run_path(str(script), init_globals={"snakemake": snakemake}, run_name="__main__")


def _wildcard(word: str) -> tuple[str, str]:
    name, equals, value = word.partition("=")
    if not equals:
        raise argparse.ArgumentTypeError(f"wildcards are NAME=VALUE, got {word!r}")
    return name, value


if __name__ == "__main__":
    main()
