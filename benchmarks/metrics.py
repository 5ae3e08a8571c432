"""Benchmark: our silhouette + IsoScore against scikit-learn's silhouette_score + the IsoScore
package.

Runs in one process, on the same data for both (a float32 cloud; the references get its exact
float64 copy, their most accurate input), and prints per size: seconds, the speed-up, the largest
absolute difference and the process's peak resident memory during each call. Then, ours only, the
memory target size (default n = 50,000, d = 768), and CUDA when present.

    python benchmarks/metrics.py                       # the sizes of the issue
    python benchmarks/metrics.py --sizes 2000x64 --memory-size 5000x64   # a quick check

The data are two labelled classes (the polarity setup) of an anisotropic Gaussian cloud with
shifted class means: silhouette and IsoScore are both far from their extremes.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from isotropy import metrics

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM); False where that is not possible."""
    try:
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    for line in _STATUS.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(
    function: Callable[[], float], repeats: int = 1, sync: Callable[[], None] = lambda: None
) -> tuple[float, float, float]:
    """(value, best seconds over repeats, peak resident MB of the process during the calls)."""
    gc.collect()
    _reset_peak()
    best, value = float("inf"), float("nan")
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        sync()
        best = min(best, time.perf_counter() - start)
    return value, best, _peak_mb()


def make_data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1], [n // 2, n - n // 2])
    rng.shuffle(labels)
    scales = np.geomspace(0.05, 1.0, d)
    points = rng.normal(size=(n, d)) * scales
    points[labels == 1] += 0.15  # shifted class mean along every axis
    return points.astype(np.float32), labels


def parse_size(text: str) -> tuple[int, int]:
    n, d = text.lower().split("x")
    return int(n), int(d)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="10662x384,20000x768", help="n x d sizes compared with the references"
    )
    parser.add_argument(
        "--memory-size", default="50000x768", help="n x d size for our peak-memory check"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="timing repeats for ours (best is reported)"
    )
    args = parser.parse_args()

    from IsoScore.IsoScore import IsoScore
    from sklearn.metrics import silhouette_score

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} (shared machine: timings vary with load); peak-RSS "
        f"reset: {_reset_peak()}"
    )
    header = (
        f"{'n x d':>12} {'metric':>10} {'ours s':>8} {'ref s':>8} {'speed-up':>8} "
        f"{'max |diff|':>11} {'ours MB':>8} {'ref MB':>8}"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes.split(","):
        n, d = parse_size(size)
        points, labels = make_data(n, d)
        reference_points = points.astype(np.float64)
        # warm-up (thread pools, first-call overheads) on a small slice
        metrics.silhouette(points[:500], labels[:500])
        metrics.isoscore(points[:500])

        sil, sil_s, sil_mb = measure(lambda: metrics.silhouette(points, labels), args.repeats)
        iso, iso_s, iso_mb = measure(lambda: metrics.isoscore(points), args.repeats)
        ref_sil, ref_sil_s, ref_sil_mb = measure(lambda: silhouette_score(reference_points, labels))
        ref_iso, ref_iso_s, ref_iso_mb = measure(lambda: float(IsoScore(reference_points)))
        rows = [
            ("silhouette", sil_s, ref_sil_s, abs(sil - ref_sil), sil_mb, ref_sil_mb),
            ("IsoScore", iso_s, ref_iso_s, abs(iso - ref_iso), iso_mb, ref_iso_mb),
            (
                "both",
                sil_s + iso_s,
                ref_sil_s + ref_iso_s,
                max(abs(sil - ref_sil), abs(iso - ref_iso)),
                max(sil_mb, iso_mb),
                max(ref_sil_mb, ref_iso_mb),
            ),
        ]
        for name, ours_s, ref_s, diff, ours_mb, ref_mb in rows:
            print(
                f"{size:>12} {name:>10} {ours_s:8.3f} {ref_s:8.3f} {ref_s / ours_s:7.1f}x "
                f"{diff:11.2e} {ours_mb:8.0f} {ref_mb:8.0f}"
            )
        print(
            f"{size:>12} values: silhouette {sil:.6f} (sklearn {ref_sil:.6f}), IsoScore {iso:.8f} "
            f"(package {ref_iso:.8f}); "
            f"1,000 updates of both metrics: {1000 * (sil_s + iso_s) / 60:.1f} min (reference "
            f"{1000 * (ref_sil_s + ref_iso_s) / 60:.1f} min)"
        )
        del points, reference_points

    n, d = parse_size(args.memory_size)
    points, labels = make_data(n, d)
    data_mb = points.nbytes / 2**20
    sil, sil_s, sil_mb = measure(lambda: metrics.silhouette(points, labels))
    iso, iso_s, iso_mb = measure(lambda: metrics.isoscore(points))
    print(
        f"\nours only at n x d = {n}x{d} (float32 data {data_mb:.0f} MB): silhouette {sil:.6f} in "
        f"{sil_s:.2f} s, "
        f"peak RSS {sil_mb:.0f} MB; IsoScore {iso:.6f} in {iso_s:.2f} s, peak RSS {iso_mb:.0f} MB"
    )

    if torch.cuda.is_available():
        device = torch.device("cuda")
        print(f"\nCUDA: {torch.cuda.get_device_name(device)}")
        for size in args.sizes.split(",") + [args.memory_size]:
            n, d = parse_size(size)
            points, labels = make_data(n, d)
            on_gpu = torch.from_numpy(points).to(device)
            metrics.silhouette(on_gpu[:500], labels[:500])
            torch.cuda.reset_peak_memory_stats(device)
            sil, sil_s, _ = measure(
                lambda: metrics.silhouette(on_gpu, labels), args.repeats, torch.cuda.synchronize
            )
            iso, iso_s, _ = measure(
                lambda: metrics.isoscore(on_gpu), args.repeats, torch.cuda.synchronize
            )
            peak = torch.cuda.max_memory_allocated(device) / 2**20
            print(
                f"{size:>12} silhouette {sil:.6f} in {sil_s:.3f} s, IsoScore {iso:.8f} in "
                f"{iso_s:.3f} s, peak GPU memory {peak:.0f} MB"
            )
    else:
        print("\nCUDA: not available on this machine")


if __name__ == "__main__":
    main()
