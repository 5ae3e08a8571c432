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
    # The cheapest sections at the polarity shape (10,662 x 384): two updates, one call per part,
    # timed once after its warm-up (--rounds 1; the best of 3 by default).
    options = "--synthetic --updates 2 --repeats 1 --rounds 1 --device cpu"
    skip = ["--skip", "reference,clusters,memory,syncs"]
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "optimize.py"), *options.split(), *skip],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    number = r"\d+(?:\.\d+)?"
    # The problem it timed is the one asked for: polarity's shape, 2 updates, on the CPU.
    assert re.search(
        r"^10662 items, 10662 rows x 384 dims \(random vectors, polarity labels \(5,331 \+ "
        r"5,331\)\); "
        r"2 updates; CPU, \d+ threads$",
        out,
        re.MULTILINE,
    ), out
    assert re.search(rf"\[run\] {number} ms per update", out), out
    # Each part is printed, and the printed sum is theirs (each rounded to 0.01 ms).
    parts_line = out.split("[parts]")[1].splitlines()[0]
    parts = {
        name: float(re.search(rf"{name} ({number})", parts_line).group(1))
        for name in ("train", "evaluate", "IsoScore", "silhouette")
    }
    total = float(re.search(rf"\(sum ({number})\)", parts_line).group(1))
    printed = [float(v) for v in re.findall(rf"[A-Za-z]+ ({number})", parts_line.split("(sum")[0])]
    assert set(parts.values()) <= set(printed)
    assert total == pytest.approx(sum(printed), abs=0.005 * (len(printed) + 1))
    # The ratio is silhouette over x @ x.T as printed (those in whole ms).
    ratio = re.search(
        rf"silhouette ({number}) ms, x @ x\.T ({number}) ms -> ratio ({number}) \(target <= "
        r"0\.65\); "
        rf"its distance products alone",
        out,
    )
    assert ratio, out
    silhouette, product, shown = (float(v) for v in ratio.groups())
    bound = 0.005 + (silhouette + 1) / product**2 + 0.5 / product
    assert shown == pytest.approx(silhouette / product, abs=bound)


@pytest.mark.parametrize(
    "args, code, said", [(["--help"], 0, "usage:"), ([], 2, "ISOTROPY_MIRROR")]
)
def test_the_rajaee_benchmark_needs_the_mirror_only_to_run(monkeypatch, args, code, said):
    monkeypatch.delenv("ISOTROPY_MIRROR", raising=False)
    script = [sys.executable, str(ROOT / "benchmarks" / "rajaee_cls_cost.py"), *args]
    result = subprocess.run(script, capture_output=True, text=True, check=False)
    assert result.returncode == code and said in result.stdout + result.stderr, result.stderr


def test_the_device_runbooks_cuda_tests_collect_where_snakemake_is_not_installed():
    """No Snakemake or jsonschema on the device: the CUDA step of its runbook must collect."""
    block = "import sys; sys.modules.update(snakemake=None, jsonschema=None); import pytest; "
    cmd = "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', sys.argv[1]]))"
    cuda = ROOT / "tests" / "test_finetune_cuda.py"
    done = subprocess.run([sys.executable, "-c", block + cmd, cuda], capture_output=True)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
