"""Measure what `make run` estimates from: seconds per update and per metric evaluation, per setup.

Usage (after the workflow has prepared and embedded the main study's data, e.g. `make preview`):
    python benchmarks/per_update_cost.py [--updates 20] [--threads 2] [--datasets polarity snli]

For each main-study setup it runs the optimisation on the real data, after a warm-up: ``updates``
and ``2 * updates`` updates with metrics at the start and end only (the difference is the cost of
the updates), and ``updates`` updates with metrics after every one (the cost of the evaluations).
It prints wall and process-CPU seconds and the load average, and the ``update_cpu_seconds`` and
``evaluation_cpu_seconds`` rows of ``config/costs.csv`` (with the date, machine and this command):
CPU seconds halved, as the rule's 2 threads share them (the wall time of an idle 2-core
machine). On a busy machine measure with ``--threads 1``: waiting threads spin and inflate the
CPU time of a multi-threaded run.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from isotropy.embeddings.texts import load_embeddings
from isotropy.optimize import OptimisationSettings, build_problem, run_optimisation
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets


def timed(problem, settings: OptimisationSettings) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run_optimisation(problem, settings, torch.device("cpu"))
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--random-vectors",
        type=int,
        metavar="DIM",
        help="stand-in vectors where a setup is not embedded yet",
    )
    parser.add_argument("--datasets", nargs="*", help="main-study setups to measure (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = workflow_config.load_config(["config.yaml"]).settings
    table = {}
    for dataset in args.datasets or config.main.setups:
        encoder = config.main.setups[dataset].encoder
        folder = f"resources/embeddings/{encoder}/{dataset}"
        data = pd.read_parquet(f"resources/data/{dataset}.parquet")
        if args.random_vectors and not Path(f"{folder}/vectors.npy").is_file():
            # The cost depends on the shapes only (items, rows, dims, labels), not on the values.
            index = pd.Series(
                pd.unique(
                    pd.concat([data[c].astype(str) for c in ("text", "text_pair") if c in data])
                )
            )
            vectors = (
                np.random.default_rng(0)
                .standard_normal((len(index), args.random_vectors))
                .astype(np.float32)
            )
            print(
                f"{dataset}: no embeddings yet, random vectors of dim {args.random_vectors} in "
                "their place"
            )
        else:
            vectors, index = load_embeddings(f"{folder}/vectors.npy", f"{folder}/index.parquet")
        problem = build_problem(data, index, vectors)
        base = targets.optimisation_settings(config, "main", dataset, 0) | {
            "updates": args.updates,
            "progress": False,
        }
        load_before = os.getloadavg()[0]
        timed(problem, OptimisationSettings(**base | {"updates": 2, "metric_stride": 2}))  # warm-up
        # Same number of evaluations (step 0 and the last), twice the updates: the updates' cost.
        short_wall, short_cpu = timed(
            problem, OptimisationSettings(**base | {"metric_stride": args.updates})
        )
        long_wall, long_cpu = timed(
            problem,
            OptimisationSettings(
                **base | {"updates": 2 * args.updates, "metric_stride": 2 * args.updates}
            ),
        )
        # Same updates, metrics after every one (updates - 1 more evaluations): their cost.
        full_wall, full_cpu = timed(problem, OptimisationSettings(**base | {"metric_stride": 1}))
        load = (load_before + os.getloadavg()[0]) / 2
        per_update_cpu, per_update_wall = (
            (long_cpu - short_cpu) / args.updates,
            (long_wall - short_wall) / args.updates,
        )
        per_eval_cpu = (full_cpu - short_cpu) / (args.updates - 1)
        per_eval_wall = (full_wall - short_wall) / (args.updates - 1)
        print(
            f"{dataset}: {problem.items} items x {problem.dim} dims; wall {per_update_wall:.3f} "
            "s/update, "
            f"{per_eval_wall:.3f} s/evaluation; CPU {per_update_cpu:.3f} s/update, "
            f"{per_eval_cpu:.3f} s/evaluation; "
            f"load average {load:.1f} on {os.cpu_count()} cores"
        )
        # The rule's 2 threads share this work: the wall time of an idle 2-core machine, at best.
        table[dataset] = (round(per_update_cpu / 2, 4), round(per_eval_cpu / 2, 3))
    print("update_cpu_seconds, evaluation_cpu_seconds (rows of config/costs.csv):", table)


if __name__ == "__main__":
    main()
