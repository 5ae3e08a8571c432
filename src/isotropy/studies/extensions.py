"""The extension study's record, runs, final files and estimate: other cluster criteria,
deeper heads, a triplet objective and held-out fine-tuning (science: isotropy.extensions)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy import costs, paths
from isotropy.extensions import design, results
from isotropy.logs import duration
from isotropy.studies.paper_cost import embedding_seconds
from isotropy.studies.record import ClaimFamily, StudySpec
from isotropy.verdicts.claims import check_seed_claims, mark_undecided
from isotropy.verdicts.learning import guard_heldout_claims
from isotropy.workflow import targets


def runs(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every (setup, head, seed) direct-optimisation run, heads in run order."""
    if design.SECTION not in config:
        return []
    section = config[design.SECTION]
    return [
        {"dataset": d, "head": h, "seed": s}
        for h in design.heads(section)
        for d in section["setups"]
        for s in section["seeds"]
    ]


def run_files(config: Mapping[str, Any], artefact: str) -> list[str]:
    """One file of every direct-optimisation run of the extension study."""
    return [
        paths.extensions_run_file(artefact, r["dataset"], r["head"], r["seed"])
        for r in runs(config)
    ]


def heldout_files(config: Mapping[str, Any], artefact: str) -> list[str]:
    """One file of every held-out fine-tuning run of the extension study."""
    if design.SECTION not in config:
        return []
    section = config[design.SECTION]
    return [
        paths.extensions_heldout_file(artefact, d, s)
        for d in section["heldout"]["setups"]
        for s in section["seeds"]
    ]


def outputs() -> list[str]:
    """The study's final files: per question a table (csv, md) and a figure (pdf, png); the
    per-seed values; the claims."""
    names = [f"{q}.{ext}" for q in design.QUESTIONS for ext in ("csv", "md", "pdf", "png")]
    return [paths.extensions_file(n) for n in [*names, "seeds.csv", "claims.csv", "claims.md"]]


def estimate(
    config: Mapping[str, Any], device: str, pace: costs.Pace, workdir: Path = Path(".")
) -> tuple[list[str], float]:
    """(lines, wall seconds left) of the extension study at ``pace``: its one-thread runs and
    2-thread fine-tuning runs from their measured CPU costs (config/costs.csv, rows extensions_*;
    isotropy.extensions.design), the MiniLM embeddings not yet written and a start-up per job."""
    section, planned = config["extensions"], runs(config)
    held = heldout_files(config, "epochs.csv")
    lines = [
        f"extensions: {len(planned)} optimisation runs ({len(section['setups'])} setups x "
        f"{len(design.heads(section))} heads x {len(section['seeds'])} seeds) of "
        f"{section['updates']} updates on {section['items'] or 'all'} items, metrics after "
        f"{targets.every_nth_update(section['metric_stride'])}; {len(held)} fine-tuning runs of "
        f"at most {section['heldout']['max_epochs']} epochs on {section['heldout']['train_size']} "
        f"sentences; device {device}"
    ]
    todo = [r for r in planned if not run_done(config, r, workdir)]
    tuning = {k: v for k, v in section["heldout"].items() if k != "setups"}
    tuned = {"settings": tuning, "device": config["device"]}
    held_todo = [f for f in held if not costs.made_with(workdir / f, tuned)]
    run_costs = [design.optimize_job_seconds(config, r, pace) for r in todo]
    unknown = sorted({f"{r['dataset']}/{r['head']}" for r, c in zip(todo, run_costs) if c is None})
    optimise = sum(c for c in run_costs if c is not None)  # one thread each
    finetune = len(held_todo) * design.heldout_job_seconds(config, {}, pace)
    encoders = {(config["main"]["setups"][d]["encoder"], d) for d in section["setups"]}
    encoders |= {(config["main"]["setups"][d]["encoder"], d) for d in section["heldout"]["setups"]}
    embed = pace.speed * sum(embedding_seconds(config, e, d, workdir) or 0.0 for e, d in encoders)
    total = optimise + finetune + embed
    lines.append(
        f"{len(planned) - len(todo)} of {len(planned)} runs and {len(held) - len(held_todo)} of "
        f"{len(held)} fine-tuning runs done; time left: about {duration(total)} on this CPU "
        f"(runs {duration(optimise)}, {pace.cores} at a time; fine-tuning {duration(finetune)}; "
        f"embeddings {duration(embed)}; for idle cores, start-ups included; costs measured "
        "with benchmarks/extensions_cost.py, isotropy.extensions.design)"
    )
    lines.append(pace.speed_line())
    if device == "cuda":
        lines.append(
            "on a GPU: no cost measured for these heads; the CPU estimate is an upper bound"
        )
    return lines + costs.caveats("cpu", unknown), total


def run_done(config: Mapping[str, Any], run: Mapping[str, Any], workdir: Path) -> bool:
    """Whether an extension run's trace was made with these settings (its provenance record)."""
    dataset, head, seed = run["dataset"], run["head"], run["seed"]
    trace = workdir / paths.extensions_run_file("trace.parquet", dataset, head, seed)
    settings = design.run_settings(config, dataset, head, seed)
    return costs.made_with(trace, {"run": settings, "device": config["device"]})


def claims_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The per-seed values: the study's claims join the claims page as their own Holm family
    (isotropy.verdicts.families)."""
    return (
        {"extensions_seeds": paths.extensions_file("seeds.csv")} if config.get("extensions") else {}
    )


def check_claims(seeds: pd.DataFrame) -> pd.DataFrame:
    """The study's claims on a page of their own (rule extensions_tables), from its per-seed
    values, guarded (:func:`claim_family`'s guard); on the claims page they form the same
    family."""
    values = results.claim_values(seeds)
    table = check_seed_claims(values, results.CLAIMS, "extensions")
    return guard_heldout_claims(mark_undecided(table, values), seeds)


def claim_family(tables: Mapping[str, Any]) -> ClaimFamily | None:
    """The study's claims from its per-seed values (``extensions_seeds``), guarded: a
    same-optimum row whose seeds cannot tell is not decided, and a held-out setup whose model
    did not learn is not judged."""
    seeds = tables.get("extensions_seeds")
    if seeds is None:
        return None
    values = results.claim_values(seeds)
    return ClaimFamily(
        values,
        results.CLAIMS,
        "extensions",
        lambda table: guard_heldout_claims(mark_undecided(table, values), seeds),
    )


STUDIES = (
    StudySpec(
        name="extensions",
        section=design.SECTION,
        target="extensions_study",
        outputs=lambda config: outputs(),
        rules="rules/extensions.smk",
        job_costs=design.JOB_COSTS,
        estimate=estimate,
        claims_inputs=claims_inputs,
        claim_family=claim_family,
    ),
)
