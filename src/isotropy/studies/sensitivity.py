"""The sensitivity grid's record: cells, runs, inputs, settings (science: isotropy.sensitivity)."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import product
from typing import Any

from isotropy import paths, sensitivity
from isotropy.configuration import Config
from isotropy.studies import paper_cost as cost
from isotropy.studies.record import StudySpec

LABEL_SETS = tuple(sensitivity.LABEL_SETS)
CELL_KEYS = ("setup", "vectors", "label_set", "lr_factor")


def cells(config: Config) -> list[dict[str, Any]]:
    """Every cell, in run order: per learning-rate factor, block by block, setups x vectors x
    label sets; a cell listed twice keeps its first place. A block with its own ``lr_factors``
    runs all of them in its place in the first pass, and no other."""
    if (section := config.sensitivity) is None:
        return []
    cells: dict[tuple[str, ...], dict[str, Any]] = {}
    for first, factor in enumerate(section.lr_factors):
        for block in section.blocks:
            factors = block.lr_factors
            if factors is not None and first:
                continue  # a block with its own factors ran them all in the first pass
            for block_factor in [factor] if factors is None else factors:
                for names in product(block.setups, block.vectors, block.label_sets):
                    key = (*names, f"{block_factor:g}")
                    cells.setdefault(key, dict(zip(CELL_KEYS, key)))
    return list(cells.values())


def runs(config: Config) -> list[dict[str, Any]]:
    seeds = config.sensitivity.seeds if config.sensitivity else []
    return [{**cell, "seed": seed} for cell in cells(config) for seed in seeds]


def cell_of(wildcards: Any) -> dict[str, str]:
    names = ("dataset", "encoder", "label_set", "lr")
    return dict(zip(CELL_KEYS, (wildcards[name] for name in names)))


def priority(config: Config, wildcards: Any) -> int:
    """A cell's Snakemake priority: the earlier in run order, the higher."""
    cell, order = cell_of(wildcards), cells(config)
    return len(order) - order.index(cell) if cell in order else 0


def run_files(config: Config, artefact: str, cell: Mapping[str, str]) -> list[str]:
    runs_of_cell = [r for r in runs(config) if all(r[k] == cell[k] for k in CELL_KEYS)]
    return [paths.sensitivity_run_file(artefact, **r) for r in runs_of_cell]


def cell_files(config: Config) -> list[str]:
    return [paths.sensitivity_cell_file(**c) for c in cells(config)]


def phase_runs(config: Config) -> list[dict[str, Any]]:
    """Every seed of the cells the phases figure draws (at learning-rate factor 1)."""
    section = config.sensitivity
    grid = product(section.phases, section.seeds) if section else ()
    return [{**phase.model_dump(), "lr_factor": "1", "seed": seed} for phase, seed in grid]


def phase_files(config: Config) -> list[str]:
    return [paths.sensitivity_run_file("trace.parquet", **r) for r in phase_runs(config)]


def vector_inputs(config: Config, name: str, setup: str) -> dict[str, Any]:
    """The files a run of vector set ``name`` reads: a derived set's or an encoder's (no basis)."""
    if config.sensitivity and name in config.sensitivity.derived:
        return {
            artefact.split(".")[0]: paths.derived_file(artefact, name, setup)
            for artefact in ("vectors.npy", "index.parquet", "basis.npy")
        }
    return {
        "vectors": paths.embedding_file("vectors.npy", name, setup),
        "index": paths.embedding_file("index.parquet", name, setup),
        "basis": [],
    }


def derived_inputs(config: Config, name: str, setup: str) -> dict[str, Any]:
    """A derived vector set's inputs (and, to rescale, those of the set whose norm it takes)."""
    spec = config.sensitivity.derived[name]
    files = {
        "vectors": paths.embedding_file("vectors.npy", spec.of, setup),
        "index": paths.embedding_file("index.parquet", spec.of, setup),
    }
    if spec.norm_of:
        other = vector_inputs(config, spec.norm_of, setup)
        files.update(norm_vectors=other["vectors"], norm_index=other["index"])
    return files


def settings_line(config: Config) -> str:
    """The settings every sensitivity table and figure states ('' without the section)."""
    if (section := config.sensitivity) is None:
        return ""
    factors = ", ".join(f"{f:g}" for f in section.lr_factors)
    own = [f"{f:g}" for b in section.blocks for f in b.lr_factors or []]
    if own:
        factors += f" (and x {', '.join(dict.fromkeys(own))} in the cells that name them)"
    sample = section.metric_sample_size
    return (
        f"{section.updates} updates, Adam lr {section.learning_rate} x {factors}, metrics "
        f"every {section.metric_stride} updates{f' on {sample} sampled items' if sample else ''}"
        f", seeds {', '.join(map(str, section.seeds))}; items: words with a "
        f"{section.items_from} vector; {100 * section.interval_level:g}% t-intervals over "
        "seeds on Fisher z"
    )


STUDIES = (
    StudySpec(
        name="sensitivity",
        outputs=lambda config: [
            paths.SENSITIVITY_TABLE,
            paths.SENSITIVITY_MARKDOWN,
            *(
                paths.sensitivity_figure(e, n)
                for n in ("r_by_condition", "phases")
                for e in ("pdf", "png")
            ),
        ],
        rule_all="never",
        job_costs={"optimize_sensitivity": cost.sensitivity_job_seconds},
    ),
)
