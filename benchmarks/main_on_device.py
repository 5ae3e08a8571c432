"""The main study's runs at the committed protocol on one device, for a cross-device check.

    python benchmarks/main_on_device.py --resources resources --device cuda --out OUT

Reads the settings of the committed run (``docs/data/main_run.json``: setups, seeds, updates,
learning rate, stride) and its inputs from ``--resources`` (the prepared tables and embeddings a
`make run` leaves in ``resources/``), runs :func:`isotropy.optimize.run_optimisation` for every
setup and seed on ``--device``, and writes ``OUT/traces.csv.gz`` (the committed traces' columns)
and ``OUT/walls.csv`` (wall seconds per run). ``docs/data/main_traces_h100.csv.gz`` was made so;
the headline page compares it with the CPU run (``python -m isotropy.committed write main``).
Figures only: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd
import torch
from on_device import device_name
from optimize import synchronise

from isotropy.optimize import OptimisationSettings, problem_from_files, run_optimisation

RUN_RECORD = Path(__file__).resolve().parents[1] / "docs" / "data" / "main_run.json"


def run_setup(resources: Path, dataset: str, setup: dict, section: dict, device: torch.device):
    """Every seed of one setup: (trace tables, wall-time rows)."""
    encoder = setup["encoder"]
    table = pd.read_parquet(resources / "data" / f"{dataset}.parquet")
    folder = resources / "embeddings" / encoder / dataset
    problem = problem_from_files(table, folder / "vectors.npy", folder / "index.parquet")
    traces, walls = [], []
    for seed in section["seeds"]:
        settings = OptimisationSettings(
            updates=section["updates"],
            learning_rate=section["learning_rate"],
            bias=setup.get("bias", True),
            metric_stride=section["metric_stride"],
            metric_sample_size=section["metric_sample_size"],
            seed=seed,
            progress=False,
        )
        synchronise(device)
        started = time.perf_counter()
        trace, _ = run_optimisation(problem, settings, device)
        synchronise(device)
        wall = time.perf_counter() - started
        trace.insert(0, "dataset", dataset)
        trace.insert(0, "encoder", encoder)
        traces.append(trace)
        walls.append({"dataset": dataset, "seed": seed, "wall_s": wall})
        print(f"{encoder}/{dataset} seed {seed}: {wall:.2f} s", flush=True)
    return traces, walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resources", type=Path, default=Path("resources"))
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--record", type=Path, default=RUN_RECORD, help="the committed run")
    args = parser.parse_args()
    section = json.loads(args.record.read_text())["config"]["main"]
    device = torch.device(args.device)
    traces, walls = [], []
    for dataset, setup in section["setups"].items():
        more_traces, more_walls = run_setup(args.resources, dataset, setup, section, device)
        traces += more_traces
        walls += more_walls
    args.out.mkdir(parents=True, exist_ok=True)
    pd.concat(traces).to_csv(args.out / "traces.csv.gz", index=False)
    pd.DataFrame(walls).to_csv(args.out / "walls.csv", index=False)
    total = sum(w["wall_s"] for w in walls)
    print(f"{device_name(device)}, torch {torch.__version__}: {total:.0f} s in all")


if __name__ == "__main__":
    main()
