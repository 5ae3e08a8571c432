r"""Benchmark direct optimisation with metrics after every update (the main study's cost).

Usage:
    python benchmarks/optimize.py --synthetic  # polarity shape: 10,662 x 384, 2 balanced labels
    python benchmarks/optimize.py resources/data/polarity.parquet \
        resources/embeddings/miniLM/polarity
    python benchmarks/optimize.py --synthetic --updates 100 --skip memory,clusters   # a quick look

Prints, on CUDA when present and on the CPU otherwise (``--device``):

1. ms per update of the whole run (``run_optimisation()``, metrics after every update), and
   the parts timed alone on the same data: train step, evaluate, IsoScore, silhouette;
2. the speed-up over the same run with scikit-learn's ``silhouette_score`` and the ``IsoScore``
   package as the metrics (a few updates of it, same process, same data);
3. peak memory of the run (CUDA: allocated by torch; CPU: the process's peak resident set);
4. ``ratio``: silhouette time / one full ``x @ x.T`` (n x n x d) at n = 10,662, d = 384 on the
   CPU, both timed here (issue 15's target: at most 0.65), and the same ratio for the distance
   products alone (half the pairs, in the silhouette's blocks: the floor of this algorithm; MKL
   makes them in well under half the time of the full product, whose n x n output leaves the cache);
5. ``clusters``: supersense-like (1,315 clusters) / pos-like (4 classes) cost per update on the
   same device, n = 10,560, d = 300 (target: at most 1.3);
6. ``memory``: peak memory of IsoScore + silhouette at n = 50,000, d = 768 (target: 1.5 GB);
7. ``syncs`` (CUDA only): the host-device synchronisations left per update, by call site.

``--contention K`` measures instead the same synthetic polarity run (metrics after every update)
under each thread policy of ``isotropy.compute``, idle and beside K busy processes that it starts
and stops, each in a fresh process (benchmarks/contention.py): ms and CPU ms per update, and the
loaded/idle ratios.

The synthetic data are random Gaussian vectors with the real label counts of the named setup;
their timings equal those of real vectors of the same shape (no step depends on the values).
Figures only: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import resource
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import contention
import numpy as np
import pandas as pd
import torch

from isotropy import metrics
from isotropy.metrics import clusters as cluster_metrics
from isotropy.optimize import (
    EmbeddingClassifier,
    OptimisationSettings,
    Problem,
    build_problem,
    run_optimisation,
)

SECTIONS = ("run", "reference", "ratio", "clusters", "memory", "syncs")
_STATUS = Path("/proc/self/status")


# ----------------------------------------------------------------------------------------------
# measuring
# ----------------------------------------------------------------------------------------------


def synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reset_peak(device: torch.device) -> float:
    """Start a peak-memory window; returns the baseline in MB."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        return torch.cuda.memory_allocated(device) / 2**20
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    except OSError:
        pass
    return current_rss_mb()


def current_rss_mb() -> float:
    for line in _STATUS.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    if _STATUS.exists():
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ms_per_call(
    function: Callable[[], object], device: torch.device, repeats: int, rounds: int = 3
) -> float:
    """Best over ``rounds`` of the mean time of ``repeats`` back-to-back calls (synchronised at the
    ends)."""
    function()
    synchronise(device)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(repeats):
            function()
        synchronise(device)
        best = min(best, (time.perf_counter() - started) / repeats)
    return best * 1e3


# ----------------------------------------------------------------------------------------------
# problems
# ----------------------------------------------------------------------------------------------


def synthetic_problem(
    n: int, d: int, targets: np.ndarray, multilabel: bool, seed: int = 0
) -> Problem:
    """Random vectors (one row per item) with the given targets."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, d)).astype(np.float32)
    names = [f"label{i}" for i in range(targets.shape[1] if multilabel else int(targets.max()) + 1)]
    return Problem(
        vectors=vectors,
        left=np.arange(n),
        right=None,
        targets=targets,
        label_names=names,
        multilabel=multilabel,
    )


def polarity_like(n: int = 10_662, d: int = 384) -> Problem:
    """The polarity setup's shape: 5,331 positive and 5,331 negative sentences."""
    targets = np.random.default_rng(1).permutation(np.repeat([0, 1], [n // 2, n - n // 2]))
    return synthetic_problem(n, d, targets, multilabel=False)


def pos_like(n: int = 10_560, d: int = 300) -> Problem:
    targets = np.random.default_rng(2).choice(4, size=n, p=[0.6, 0.2, 0.15, 0.05])
    return synthetic_problem(n, d, targets, multilabel=False)


def supersense_like(
    n: int = 10_560, d: int = 300, clusters: int = 1_315, labels: int = 45
) -> Problem:
    """Multi-label targets with ``clusters`` distinct label vectors, Zipf-like sizes (many
    singletons)."""
    rng = np.random.default_rng(3)
    vectors: set[tuple[int, ...]] = set()
    while len(vectors) < clusters:
        ones = rng.choice(labels, size=rng.integers(1, 4), replace=False)
        vectors.add(tuple(sorted(ones.tolist())))
    pool = sorted(vectors)
    weights = 1.0 / np.arange(1, clusters + 1) ** 1.1
    assignment = np.concatenate(
        [np.arange(clusters), rng.choice(clusters, size=n - clusters, p=weights / weights.sum())]
    )
    targets = np.zeros((n, labels), dtype=np.float32)
    for item, cluster in enumerate(rng.permutation(assignment)):
        targets[item, list(pool[cluster])] = 1.0
    return synthetic_problem(n, d, targets, multilabel=True)


# ----------------------------------------------------------------------------------------------
# sections
# ----------------------------------------------------------------------------------------------


def run_ms_per_update(
    problem: Problem, updates: int, device: torch.device, bias: bool
) -> tuple[float, dict]:
    settings = OptimisationSettings(updates=updates, bias=bias, metric_stride=1, progress=False)
    synchronise(device)
    started = time.perf_counter()
    _, summary = run_optimisation(problem, settings, device)
    synchronise(device)
    return (time.perf_counter() - started) / updates * 1e3, summary


def training_setup(problem: Problem, device: torch.device, bias: bool):
    """The loop's model, Adam, loss, item rows and targets, as ``run_optimisation()`` builds them
    (seed 0)."""
    torch.manual_seed(0)
    model = EmbeddingClassifier(problem.vectors, len(problem.label_names), False, bias).to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss() if problem.multilabel else torch.nn.CrossEntropyLoss()
    left = torch.as_tensor(problem.left, device=device)
    targets = torch.as_tensor(problem.targets, device=device)
    return model, optimiser, loss_fn, left, targets


def parts(
    problem: Problem, device: torch.device, bias: bool, repeats: int, rounds: int = 3
) -> dict[str, float]:
    """Each part of one update timed alone (ms), as the loop runs it."""
    model, optimiser, loss_fn, left, targets = training_setup(problem, device, bias)
    layout = metrics.cluster_layout(metrics.cluster_ids(problem.targets), device)

    def train() -> None:
        optimiser.zero_grad(set_to_none=True)
        loss = loss_fn(model(left, None), targets)
        loss.backward()
        optimiser.step()

    def evaluate() -> tuple[torch.Tensor, torch.Tensor]:
        hits = (
            ((logits > 0) == (targets > 0.5)).all(1)
            if problem.multilabel
            else logits.argmax(1) == targets
        )
        return loss_fn(logits, targets), hits.float().mean()

    with torch.no_grad():
        logits = model(left, None)
    table = model.embeddings.weight.detach()
    return {
        "train": ms_per_call(train, device, repeats, rounds),
        "evaluate": ms_per_call(evaluate, device, repeats, rounds),
        "IsoScore": ms_per_call(lambda: metrics.isoscore_tensor(table), device, repeats, rounds),
        "silhouette": ms_per_call(
            lambda: metrics.silhouette_tensor(table[left], layout), device, repeats, rounds
        ),
    }


def reference_ms_per_update(
    problem: Problem, device: torch.device, bias: bool, updates: int, threads: int
) -> float:
    """The same loop with the references as metrics: values to the host, sklearn + IsoScore package,
    numpy's BLAS held to the same number of threads as torch."""
    from IsoScore.IsoScore import IsoScore
    from sklearn.metrics import silhouette_score
    from threadpoolctl import threadpool_limits

    model, optimiser, loss_fn, left, targets = training_setup(problem, device, bias)
    clusters = metrics.cluster_ids(problem.targets)
    synchronise(device)
    started = time.perf_counter()
    with threadpool_limits(limits=threads):
        for _ in range(updates):
            optimiser.zero_grad(set_to_none=True)
            loss = loss_fn(model(left, None), targets)
            loss.backward()
            optimiser.step()
            with torch.no_grad():
                logits = model(left, None)
                float(loss_fn(logits, targets)), float((logits.argmax(1) == targets).float().mean())
                table = model.embeddings.weight.detach().cpu().numpy().astype(np.float64)
                float(IsoScore(table))
                silhouette_score(table[problem.left], clusters)
    return (time.perf_counter() - started) / updates * 1e3


def cpu_ratio(threads: int, blocks: list[int], rounds: int = 3) -> None:
    """Silhouette / one full x @ x.T on the CPU at the polarity size (same process, same
    threads)."""
    torch.set_num_threads(threads)
    problem = polarity_like()
    cpu = torch.device("cpu")
    x = torch.from_numpy(problem.vectors)
    layout = metrics.cluster_layout(problem.targets, cpu)
    product = ms_per_call(lambda: x @ x.T, cpu, 1, rounds)
    silhouette = ms_per_call(lambda: metrics.silhouette_tensor(x, layout), cpu, 1, rounds)
    left, right = cluster_metrics._distance_factors(x, layout.order, x.dtype)
    block = cluster_metrics._CPU_BLOCK_ROWS

    def distance_products() -> None:
        for start in range(0, x.shape[0], block):
            right[start:] @ left[start : start + block].T

    floor = ms_per_call(distance_products, cpu, 1, rounds)
    print(
        f"[ratio] CPU, {threads} threads, n={x.shape[0]}, d={x.shape[1]}: silhouette "
        f"{silhouette:.0f} ms, "
        f"x @ x.T {product:.0f} ms -> ratio {silhouette / product:.2f} (target <= 0.65); "
        f"its distance products alone {floor:.0f} ms -> {floor / product:.2f}"
    )
    for block in blocks:
        seconds = ms_per_call(
            lambda: metrics.silhouette_tensor(x, layout, block_size=block), cpu, 1, rounds
        )
        print(f"    block of {block} rows: ratio {seconds / product:.2f}")


def clusters_ratio(device: torch.device, updates: int) -> None:
    pos_ms, _ = run_ms_per_update(pos_like(), updates, device, bias=True)
    supersense_ms, _ = run_ms_per_update(supersense_like(), updates, device, bias=True)
    print(
        f"[clusters] {device}, {updates} updates, n=10560, d=300: pos-like (4 classes) "
        f"{pos_ms:.2f} ms/update, "
        f"supersense-like (1,315 clusters) {supersense_ms:.2f} ms/update -> ratio "
        f"{supersense_ms / pos_ms:.2f} (target <= 1.3)"
    )


def memory_at_size(device: torch.device, n: int = 50_000, d: int = 768) -> None:
    rng = np.random.default_rng(4)
    points = torch.from_numpy(rng.standard_normal((n, d), dtype=np.float32)).to(device)
    labels = rng.integers(0, 2, size=n)
    layout = metrics.cluster_layout(labels, device)
    base = reset_peak(device)
    started = time.perf_counter()
    iso = float(metrics.isoscore_tensor(points))
    sil = float(metrics.silhouette_tensor(points, layout))
    seconds = time.perf_counter() - started
    peak = peak_mb(device)
    what = "allocated by torch" if device.type == "cuda" else "process resident set"
    print(
        f"[memory] {device}, n={n}, d={d}: IsoScore + silhouette in {seconds:.1f} s; peak {what} "
        f"{peak:.0f} MB "
        f"({peak - base:.0f} MB above the {base:.0f} MB holding the data; target <= 1536 MB); "
        f"values {iso:.4f} {sil:.4f}"
    )


def sync_report(problem: Problem, device: torch.device, bias: bool, updates: int = 5) -> None:
    """Synchronising CUDA calls of a short run, by call site (torch's sync debug mode)."""
    settings = OptimisationSettings(updates=updates, bias=bias, metric_stride=1, progress=False)
    run_optimisation(problem, settings, device)  # warm: first-call work is not the loop's
    sites: collections.Counter = collections.Counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            run_optimisation(problem, settings, device)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    for warning in caught:
        if "synchroniz" in str(warning.message):
            sites[f"{Path(warning.filename).name}:{warning.lineno}"] += 1
    total = sum(sites.values())
    print(
        f"[syncs] {total} synchronising calls in a run of {updates} updates ({total / updates:.2f} "
        "per update), by site:"
    )
    for site, count in sites.most_common():
        print(f"    {count:4d}  {site}")


def contention_worker(updates: int, bias: bool) -> None:
    """One measured run on the CPU for --contention (the parent sets threads and policy)."""
    problem, device = polarity_like(), torch.device("cpu")
    run_ms_per_update(problem, 2, device, bias)  # start-up apart
    wall, cpu = time.perf_counter(), time.process_time()
    run_ms_per_update(problem, updates, device, bias)
    contention.worker_report(updates, time.perf_counter() - wall, time.process_time() - cpu)


# ----------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("table", nargs="?", help="prepared table (parquet); omit with --synthetic")
    parser.add_argument(
        "embeddings", nargs="?", help="folder holding vectors.npy and index.parquet"
    )
    parser.add_argument(
        "--synthetic",
        action="store_true",
        help="random vectors, the polarity setup's shape and labels",
    )
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument(
        "--bias", action="store_true", help="classifier bias (the polarity setup has none)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument("--repeats", type=int, default=20, help="calls per timing of a part")
    parser.add_argument(
        "--rounds", type=int, default=3, help="timings of each part, the best printed (ms_per_call)"
    )
    parser.add_argument("--reference-updates", type=int, default=3)
    parser.add_argument(
        "--cluster-updates", type=int, default=None, help="default: 200 on CUDA, 10 on the CPU"
    )
    parser.add_argument(
        "--ratio-blocks",
        default="",
        help="also time the CPU silhouette with these block sizes (rows)",
    )
    parser.add_argument(
        "--skip", default="", help=f"comma-separated sections to skip: {', '.join(SECTIONS)}"
    )
    contention.add_arguments(parser)
    args = parser.parse_args()
    options = ["--updates", str(args.updates)] + (["--bias"] if args.bias else [])
    worker = functools.partial(contention_worker, args.updates, args.bias)
    if contention.run_mode(args, __file__, worker, options, unit="update"):
        return
    skip = {s for s in args.skip.split(",") if s}
    if unknown := skip - set(SECTIONS):
        parser.error(
            f"--skip names unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}"
        )

    torch.set_num_threads(args.threads)
    device = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else ("cpu" if args.device == "auto" else args.device)
    )
    if args.synthetic:
        problem, source = polarity_like(), "random vectors, polarity labels (5,331 + 5,331)"
    elif args.table and args.embeddings:
        from isotropy.embeddings.texts import load_embeddings

        vectors, index = load_embeddings(
            f"{args.embeddings}/vectors.npy", f"{args.embeddings}/index.parquet"
        )
        problem, source = (
            build_problem(pd.read_parquet(args.table), index, vectors),
            args.embeddings,
        )
    else:
        parser.error("give a table and an embeddings folder, or --synthetic")
    name = (
        torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"CPU, {args.threads} threads"
    )
    print(
        f"{problem.items} items, {problem.rows} rows x {problem.dim} dims ({source}); "
        f"{args.updates} updates; {name}"
    )

    if "run" not in skip:
        started = time.perf_counter()
        run_ms_per_update(problem, 2, device, args.bias)
        print(
            "start-up: first run_optimisation() call of the process (2 updates) took "
            f"{time.perf_counter() - started:.1f} s"
        )
        base = reset_peak(device)
        ours, summary = run_ms_per_update(problem, args.updates, device, args.bias)
        peak = peak_mb(device)
        print(
            f"[run] {ours:.2f} ms per update, metrics after every update "
            f"({summary['wall_seconds']:.1f} s in run_optimisation); "
            f"peak memory {peak:.0f} MB ({peak - base:.0f} MB above the start)"
        )
    if "run" not in skip and hasattr(metrics, "silhouette_tensor"):  # absent from an older package
        split = parts(problem, device, args.bias, args.repeats, args.rounds)
        print(
            "[parts] ms per update, each part timed alone: "
            + ", ".join(f"{k} {v:.2f}" for k, v in split.items())
            + f" (sum {sum(split.values()):.2f})"
        )
    if "reference" not in skip and "run" not in skip:
        reference = reference_ms_per_update(
            problem, device, args.bias, args.reference_updates, args.threads
        )
        print(
            "[reference] same loop with sklearn silhouette_score + IsoScore package: "
            f"{reference:.0f} ms per update "
            f"-> speed-up {reference / ours:.0f}x"
        )
    if "ratio" not in skip:
        cpu_ratio(args.threads, [int(b) for b in args.ratio_blocks.split(",") if b], args.rounds)
    if "clusters" not in skip:
        clusters_ratio(device, args.cluster_updates or (200 if device.type == "cuda" else 10))
    if "memory" not in skip:
        memory_at_size(device)
    if "syncs" not in skip and device.type == "cuda":
        sync_report(problem, device, args.bias)


if __name__ == "__main__":
    main()
