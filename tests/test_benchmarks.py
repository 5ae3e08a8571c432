"""The benchmark scripts run and print their figures (their timings are never asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_optimize_benchmark_prints_where_the_time_goes():
    # The cheapest sections at the polarity shape (10,662 x 384): two updates, one call per part.
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "optimize.py"), "--synthetic", "--updates", "2",
         "--repeats", "1", "--device", "cpu", "--skip", "reference,clusters,memory,syncs"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    number = r"\d+(?:\.\d+)?"
    assert re.search(rf"\[run\] {number} ms per update", out), out
    for part in ("train", "evaluate", "IsoScore", "silhouette"):
        assert re.search(rf"{part} {number}", out.split("[parts]")[1]), out
    assert re.search(rf"ratio {number} \(target <= 0\.65\); its distance products alone", out), out
