r"""How far the metric stride moves Mickus et al.'s Pearson r (config/protocol_effects.csv).

§3.2's r pools IsoScore against silhouette over every update of five runs. A run that records
the metrics every ``s``-th update (and at step 0 and the last update, as every run does) sees a
subset of the same curves, so its r moves. The procedure (the held-out run plays no part in it):

* **effect**: Δz = z at the stride − z at every update, on Fisher's z (the judging scale), of the
  pooled r and of the seeds' mean z, on the steps the run records (0, s, 2s, …, the last);
* **source**: runs other than the committed protocol run: appendix A's traces
  (docs/data/glue_traces.csv.gz: 10 setups × 3 seeds × 250 updates, every update) and
  ``--replications`` sets of 5 simulated seeds of each trajectory shape (tests/seed_simulator.py);
* **rule** (:func:`allowance`): the range of the source's Δz with 0, widened on each side by
  (:data:`HEADROOM` − 1) × its largest |Δz|, rounded outward to :data:`STEP`.

The range is signed because the stride moves r one way in most runs (more negative, in every
MiniLM and MPNet run): a symmetric bound would double it. It is per stride in updates, not per
share of the run: at stride 10 appendix A's MiniLM runs (250 updates) move z by −0.062 to −0.073,
the protocol run's (1,000 updates) by −0.050 and −0.078; appendix A's larger effects are MPNet's.
The committed protocol run (docs/data/main_traces.csv.gz: 5 seeds × 1,000 updates, four setups)
is held out: its Δz are recorded beside the range, and tests/test_protocol_effects.py fails when
one leaves it. Usage:

    python benchmarks/stride_effect.py            # print the effects and the ranges
    python benchmarks/stride_effect.py --write    # and rewrite config/protocol_effects.csv
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import seed_simulator as sim  # noqa: E402

from isotropy.traces import evaluation_steps  # noqa: E402

COLUMNS = ("isoscore", "silhouette")
TRACES = ROOT / "docs" / "data" / "main_traces.csv.gz"  # held out: the bound's check
SOURCES = ROOT / "docs" / "data" / "glue_traces.csv.gz"  # the bound's source
EFFECTS = ROOT / "config" / "protocol_effects.csv"
STRIDES = (2, 5, 10)
REPLICATIONS = 1000
STEP = 0.005
# Declared widening for a setup whose curves bend faster than any source's: 25% of the largest
# effect measured, since an effect past the range eats the margin δ unseen (issue 79: 0.01 on z
# past it let a true gap of δ read *agrees* in up to 59% of runs).
HEADROOM = 1.25
COMMAND = "python benchmarks/stride_effect.py --write"


def pooled_z(iso: np.ndarray, sil: np.ndarray) -> float:
    """Fisher z of the Pearson r of every (IsoScore, silhouette) pair of every run, pooled."""
    return float(np.arctanh(np.corrcoef(np.ravel(iso), np.ravel(sil))[0, 1]))


def stride_effect(iso: np.ndarray, sil: np.ndarray, stride: int) -> tuple[float, float]:
    """The smaller and the larger Δz (at the stride − at every update) of the pooled r and of the
    seeds' mean z (``iso``, ``sil``: seeds × every update), on the steps a run at ``stride``
    records (:func:`isotropy.traces.evaluation_steps`)."""
    steps = evaluation_steps(iso.shape[1] - 1, stride)
    a, b = iso[:, steps], sil[:, steps]
    mean = lambda x, y: float(np.arctanh(sim.pearson_rows(x, y)).mean())  # noqa: E731
    moves = pooled_z(a, b) - pooled_z(iso, sil), mean(a, b) - mean(iso, sil)
    return min(moves), max(moves)


def allowance(effects) -> tuple[float, float]:
    """The rule: the range of the (low, high) ``effects`` with 0, widened on each side by
    (:data:`HEADROOM` − 1) × the largest |Δz|, rounded outward to :data:`STEP`."""
    low, high = min(0.0, *(e[0] for e in effects)), max(0.0, *(e[1] for e in effects))
    pad = (HEADROOM - 1) * max(-low, high)
    return (
        math.floor((low - pad) / STEP + 1e-9) * STEP,
        math.ceil((high + pad) / STEP - 1e-9) * STEP,
    )


def protocol_traces(path: Path = TRACES) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each setup's (IsoScore, silhouette), seeds × every update, of a committed run's traces."""
    traces = pd.read_csv(path)
    setups = {}
    for (encoder, dataset), group in traces.groupby(["encoder", "dataset"], sort=True):
        runs = [run.sort_values("step") for _, run in group.groupby("seed")]
        if not all((run["step"].diff().dropna() == 1).all() for run in runs):
            raise ValueError(f"{path}: {encoder}/{dataset} is not recorded at every update")
        iso, sil = (np.stack([run[column].to_numpy() for run in runs]) for column in COLUMNS)
        setups[f"{encoder}/{dataset}"] = (iso, sil)
    return setups


def simulated(stride: int, replications: int = REPLICATIONS, seed: int = 2026):
    """The (low, high) effect over ``replications`` sets of 5 simulated seeds of every shape."""
    every = np.arange(0, sim.UPDATES + 1)
    moves = []
    for shape in sim.SHAPES:
        rng = np.random.default_rng(seed)
        for _ in range(replications):
            iso, sil = sim.trajectories(shape, 5, rng, every)
            moves.append(stride_effect(iso, sil, stride))
    return min(m[0] for m in moves), max(m[1] for m in moves)


def effects(replications: int = REPLICATIONS) -> pd.DataFrame:
    """One row per stride: the (low, high) effect per source (appendix A's setups, the simulated
    seeds), the allowance derived from them, and the held-out protocol run's per setup."""
    sources, held_out = protocol_traces(SOURCES), protocol_traces()
    rows = []
    for stride in STRIDES:
        row = {f"A:{setup}": stride_effect(*arrays, stride) for setup, arrays in sources.items()}
        row["simulated"] = simulated(stride, replications)
        row["allowance"] = allowance(list(row.values()))
        row |= {setup: stride_effect(*arrays, stride) for setup, arrays in held_out.items()}
        rows.append({"stride": stride, **row})
    return pd.DataFrame(rows)


def span(effect: tuple[float, float]) -> str:
    return f"{effect[0]:+.4f} to {effect[1]:+.4f}"


def effect_rows(table: pd.DataFrame, replications: int = REPLICATIONS) -> pd.DataFrame:
    """config/protocol_effects.csv's rows from :func:`effects`."""
    sources = [c for c in table.columns if c.startswith("A:")]
    glue = pd.read_csv(SOURCES)  # the committed appendix A run: its seeds and updates, counted
    seeds, updates = glue["seed"].nunique(), int(glue["step"].max())
    held_out = [c for c in table.columns if "/" in c and not c.startswith("A:")]
    rows = []
    for _, row in table.iterrows():
        check = ", ".join(f"{setup} {span(row[setup])}" for setup in held_out)
        low, high = row["allowance"]
        how = (
            "Δz (at the stride − at every update) on the steps a run at the stride records, of the "
            "pooled r and of the seeds' mean z, in runs other than the protocol run: appendix A "
            f"(docs/data/glue_traces.csv.gz, {len(sources)} setups × {seeds} seeds × {updates} "
            f"updates) {span((min(row[c][0] for c in sources), max(row[c][1] for c in sources)))}; "
            f"simulated, {replications} sets of 5 seeds of each trajectory shape (fall, dip, "
            f"phases), 1000 updates: {span(row['simulated'])}; allowance: their range with 0, "
            f"widened each side by {HEADROOM - 1:g} × the largest |Δz|, rounded out to {STEP:g}. "
            f"Held out, the protocol run (docs/data/main_traces.csv.gz, 5 seeds × 1000 updates): "
            f"{check}"
        )
        rows.append(
            dict(
                quantity="pearson_r",
                setting="metric_stride",
                paper=1,
                ours_at_most=int(row["stride"]),
                scale="Fisher z",
                low=f"{low:g}",
                high=f"{high:g}",
                how=how,
                measured=datetime.date.today().isoformat(),
                command=COMMAND,
            )
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=REPLICATIONS)
    parser.add_argument("--write", action="store_true", help=f"rewrite {EFFECTS.name}")
    args = parser.parse_args()
    table = effects(args.replications)
    print(table.map(lambda v: span(v) if isinstance(v, tuple) else v).to_string(index=False))
    if args.write:
        effect_rows(table, args.replications).to_csv(EFFECTS, index=False)
        print(f"wrote {EFFECTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
