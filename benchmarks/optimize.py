"""Benchmark one direct-optimisation run with metrics after every update (the main study's cost).

Usage (after the workflow has embedded the data set):
    python benchmarks/optimize.py resources/data/polarity.parquet \
        resources/embeddings/miniLM/polarity [--updates 1000] [--bias] [--threads 2]

Prints the wall time of the whole run, the time per update split into training and metrics,
the peak resident memory, and the cost the same metrics would have with the references
(scikit-learn's silhouette_score + the IsoScore package), timed on the same data in this process.
Targets (issue 2): 1,000 updates of the polarity setup in under 20 minutes on 2 CPU cores,
peak memory under 4 GB.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd
import torch

from isotropy.device import resolve_device
from isotropy.embeddings import load_embeddings
from isotropy.optimize import OptimisationSettings, build_problem, optimize


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table")
    parser.add_argument("embeddings", help="folder holding vectors.npy and index.parquet")
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--bias", action="store_true", help="classifier bias (the polarity setup has none)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--reference-repeats", type=int, default=2)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    table = pd.read_parquet(args.table)
    vectors, index = load_embeddings(f"{args.embeddings}/vectors.npy", f"{args.embeddings}/index.parquet")
    problem = build_problem(table, index, vectors)
    settings = OptimisationSettings(updates=args.updates, bias=args.bias, metric_stride=1, progress=True)
    print(f"{problem.items} items, {problem.rows} rows x {problem.dim} dims, {args.updates} updates, device {device}, {args.threads} threads")

    started = time.perf_counter()
    trace, summary = optimize(problem, settings, device)
    wall = time.perf_counter() - started

    # The references on the final table, same data, same process.
    from IsoScore.IsoScore import IsoScore
    from sklearn.metrics import silhouette_score

    final = problem.vectors.astype(np.float64)  # initial table: the references' cost does not depend on values
    reps = final[problem.left] if problem.right is None else np.hstack([final[problem.left], final[problem.right]])
    labels = problem.targets if not problem.multilabel else np.unique(problem.targets, axis=0, return_inverse=True)[1]
    ref_times = []
    for _ in range(args.reference_repeats):
        t0 = time.perf_counter()
        silhouette_score(reps, labels)
        float(IsoScore(final))
        ref_times.append(time.perf_counter() - t0)
    reference_per_update = min(ref_times)

    per_update = wall / (args.updates + 1)
    print(f"wall time: {wall / 60:.1f} min ({per_update:.3f} s per update incl. metrics)")
    print(f"reference metrics (sklearn silhouette + IsoScore package): {reference_per_update:.3f} s per update "
          f"-> {reference_per_update * (args.updates + 1) / 60:.1f} min for the metrics alone; "
          f"ratio reference/ours per update: {reference_per_update / per_update:.1f}x")
    print(f"peak RSS: {peak_rss_mb():.0f} MB")
    print(f"first/last: isoscore {trace['isoscore'].iloc[0]:.4f} -> {trace['isoscore'].iloc[-1]:.4f}, "
          f"silhouette {trace['silhouette'].iloc[0]:.4f} -> {trace['silhouette'].iloc[-1]:.4f}, params {summary['params']}")


if __name__ == "__main__":
    main()
