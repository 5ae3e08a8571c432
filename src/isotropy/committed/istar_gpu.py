"""The I-STAR grids run on one GPU, committed (``istar_gpu_*``: the largest subset one call
fitted; ``istar_gpu_whole_*``: the whole split), and docs/istar-gpu.md rendered from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed import record as committed
from isotropy.committed.record import DATA, claims_table, committed_files
from isotropy.intake import parse_json, read_csv, read_inside, read_json, read_text
from isotropy.io import checked_record, commit_files
from isotropy.studies import BY_NAME, measured_claims
from isotropy.verdicts.claims import STAND_IN_NOTE, check_claims
from isotropy.verdicts.measurements.istar import correlation_claim, istar_measurements, seed_details

DOC = Path("docs/istar-gpu.md")
SUBSET, WHOLE = "istar_gpu", "istar_gpu_whole"  # the two grids' file prefixes
OVERLAY = {SUBSET: "config/istar_gpu.yaml", WHOLE: "config/istar_gpu_whole.yaml"}


def grid_files(prefix: str) -> tuple[Path, ...]:
    names = ("runs.csv", "metrics.jsonl", "costs.csv", "cuda_tests.log", "record.json")
    return tuple(DATA / f"{prefix}_{name}" for name in names)


MAIN_RUN, MAIN_UPDATES = DATA / "main_h100_run.json", 1000
ORDER = ["none", "istar", "cosreg"]
QUANTITIES = {"metric": "accuracy", "isoscore_star": "IsoScore*", "twonn": "TwoNN"}
FIGURES = {  # each quantity's section on the subset grid, after its figure in the poster
    c: f"## Figure {n}'s counterpart: {QUANTITIES[c]} against λ"
    for c, n in {"metric": 6, "isoscore_star": 5, "twonn": 7}.items()
}


def combine(calls: list[Path], root: Path = Path("."), prefix: str = SUBSET) -> dict[str, Any]:
    """The ``$OUT`` folders of benchmarks/istar_on_device.py calls as one grid with one record,
    after the calls of the grid already committed (a later call finishing a cut one)."""
    runs_file, metrics_file, costs_file, tests_file, record_file = grid_files(prefix)
    tables = [read_csv(call, "runs.csv") for call in calls if (call / "runs.csv").is_file()]
    metrics = "".join(read_text(call, "metrics.jsonl") for call in calls)
    earlier: list[dict[str, Any]] = []
    files: dict[Path, bytes | Path] = {costs_file: calls[0] / "costs.csv"}  # measured by the first
    if (root / record_file).is_file():
        done = checked_record(root, record_file)
        earlier, kept = done["calls"], set(done["files_sha256"])
        tables.insert(0, read_csv(root, str(runs_file)))
        metrics = read_text(root, str(metrics_file)) + metrics
        files = {n: read_inside(root, str(n)) for n in (costs_file, tests_file) if str(n) in kept}
    runs = pd.concat(tables).sort_values(
        ["regulariser", "lambda", "seed"],
        key=lambda column: column.map(ORDER.index) if column.name == "regulariser" else column,
    )
    files |= {runs_file: runs.to_csv(index=False).encode("utf-8"), metrics_file: metrics.encode()}
    if logs := [c / "cuda_tests.log" for c in calls if (c / "cuda_tests.log").is_file()]:
        files[tests_file] = logs[-1]
    facts = {
        "what": f"the I-STAR grid of {OVERLAY[prefix]} on one GPU, in "
        f"{len(earlier) + len(calls)} device call(s), the later ones finishing what a cut call did "
        "not start or adding runs",
        "calls": earlier + committed.device_calls(calls),
    }
    return commit_files(root, record_file, files, facts)


def _mean_sd(values: pd.Series) -> str:
    spread = f" ± {values.std():.2g}" if len(values) > 1 else ""
    return f"{values.mean():.4g}{spread} ({len(values)})"


def _by_lambda(runs: pd.DataFrame, column: str) -> pd.DataFrame:
    cells = runs.groupby(["lambda", "regulariser"])[column].agg(_mean_sd).unstack()
    cells = cells.reindex(columns=ORDER).fillna("").rename(index="{:g}".format)
    return cells.rename_axis(index="λ", columns=None).reset_index()


def _steps(record: dict[str, Any]) -> list[Any]:
    call = record["calls"][0]  # its costs: the grid's costs.csv
    wall, cpu = (pd.Series([call["costs"][f"step_{s}_{r}"] for r in ORDER]) for s in ("s", "cpu_s"))
    table = pd.DataFrame({"regulariser": ORDER})
    for name, seconds in (("wall", wall), ("process CPU", cpu)):
        table[f"ms per step ({name})"] = (seconds * 1e3).map("{:.1f}".format)
    table["× plain (wall)"] = (wall / wall[0]).map("{:.3f}".format)
    shown = [
        f"A step on {call['device']}, batch {call['istar']['training']['batch_size']}: best of two "
        "timings of 20 steps on the same batches, in the grid's first call:\n",
        table,
    ]
    if (wall.iloc[0] > wall.iloc[1:]).all():
        shown.append(
            "Plain timed slower than both penalised steps, which do more work: these timings do "
            "not measure the penalty's overhead (plain is timed first each round; cause not "
            "isolated).\n"
        )
    return shown


def judged(runs: pd.DataFrame, record: dict[str, Any], source: Path):
    """(the measurements, the claims table) of a committed grid."""
    model = {"model": "sentence-transformers/all-MiniLM-L6-v2", "path": None}
    config = {"models": {"miniLM": model}, "istar": record["calls"][0]["istar"]}
    rows = istar_measurements(runs, config, source=str(source))
    return rows, check_claims(pd.DataFrame(rows), {"istar"}, {"istar": measured_claims()["istar"]})


def _claim_tables(runs: pd.DataFrame, record: dict[str, Any], prefix: str) -> list[Any]:
    """A grid's claims judged, then each seed's difference and its tests (the subset's first)."""
    rows, table = judged(runs, record, grid_files(prefix)[0])
    measured = table["measured"].map("{:.4g}".format)
    details = seed_details(rows, BY_NAME["istar"].claims)
    # every family is the poster's ("Rudman & Eickhoff 2024 · I-STAR · IsoScore*"): its quantity
    details["family"] = details["family"].str.split(" · ").str[-1]
    said = "Each seed's difference, p and smallest detectable difference, as above:"
    if prefix == SUBSET:
        said = (
            "Each seed's difference (λ minus no regulariser, same seed; seeds vary "
            f"{'; '.join({c.seeds_vary for c in BY_NAME['istar'].claims})}), one-sided p raw and "
            "Holm-adjusted (families: the poster's, Rudman & Eickhoff 2024), the smallest "
            "difference these seeds detect (power 0.8, the family's strictest Holm level α/m, "
            "their own spread):"
        )
    claims = claims_table(table, ["setup", "claim", "measured", "verdict"], measured=measured)
    shown = details.map(lambda v: f"{v:.2g}" if isinstance(v, float) else v)
    return [claims, said, "", shown, ""]


def _walls(record: dict[str, Any]) -> pd.Series:
    return pd.Series({k: v for c in record["calls"] for k, v in c["wall_seconds_per_run"].items()})


def _summary(record: dict[str, Any], runs: pd.DataFrame, root: Path, prefix: str) -> str:
    _, metrics_file, _, tests_file, _ = grid_files(prefix)
    first, calls = record["calls"][0], record["calls"]
    training = first["istar"]["training"]
    if subset := training["train_subset"]:
        rows = f"{subset:,} training rows (seeded; the most the first call's measured costs fitted)"
    else:
        run = parse_json(read_text(root, str(metrics_file)).splitlines()[0])
        rows = f"the whole training split ({run['history'][-1]['step']:,} steps a run)"
    walls = _walls(record)
    missing = sorted(set(calls[-1]["runs_not_started"]))
    # each call's estimate covers the runs it planned: those it ran and those it left
    planned = sum(len(c["wall_seconds_per_run"]) + len(c["runs_not_started"]) for c in calls)
    text = (
        f"**{first['what']}.** {first['device']}, "
        + ", ".join(f"{name} {version}" for name, version in first["versions"].items())
        + f"; code {first['code_commit']}, {first['date']}. SST-2, {rows}, {training['epochs']} "
        f"epoch, learning rate {training['learning_rate']:g}, batch {training['batch_size']}; "
        f"evaluated on the whole validation split ({int(runs['eval_sentences'].iloc[0])} "
        f"sentences, majority class {runs['majority_baseline'].iloc[0]:.4f}). {len(runs)} of "
        f"{len(runs) + len(missing)} runs in {len(calls)} device calls ({walls.sum():.0f} s of "
        f"runs); not run: {', '.join(missing) or 'none'}. Estimated from the first call's measured "
        f"costs: {sum(c['estimated_seconds'] for c in calls) / planned:.1f} s a run; taken: "
        f"{walls.mean():.1f} s (mean; median {walls.median():.1f} s, slowest {walls.max():.0f} s: "
        f"{walls.idxmax()})."
    )
    if (root / tests_file).is_file():
        tests = read_text(root, str(tests_file)).strip().splitlines()[-1].strip("= ")
        text += f" The CUDA tests (tests/test_finetune_cuda.py) on the same card: {tests}."
    return text + "\n"


def _side_by_side(grids: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each run of the last grid, mean ± sd of each quantity in every grid."""
    keys = ["regulariser", "lambda"]
    runs = list(grids.values())[-1][keys].drop_duplicates()
    shown = pd.DataFrame({"run": [f"{r}, λ={lam:g}" for r, lam in runs.itertuples(index=False)]})
    for column, label in QUANTITIES.items():
        for name, grid in grids.items():
            cells = runs.merge(grid.groupby(keys)[column].agg(_mean_sd), "left", on=keys)
            shown[f"{label}, {name}"] = cells[column].fillna("").to_list()
    return shown


def _correlation(grids: dict[str, pd.DataFrame]) -> pd.DataFrame:
    ours = {n: g[g["regulariser"].isin(["none", "istar"])] for n, g in grids.items()}
    lambdas = {n: ", ".join(map("{:g}".format, sorted(set(g["lambda"])))) for n, g in ours.items()}
    both = pd.concat(  # one Holm family: the claim tested once per grid
        g.assign(task=f"{g['task'].iloc[0]}, {n} (λ {lambdas[n]})") for n, g in ours.items()
    )
    correlation = correlation_claim(both, "miniLM for the poster's BERT-base / ALBERT / DistilBERT")
    return claims_table(
        correlation,
        ["setup", "claim", "measured", "verdict", "evidence", "note"],
        {"evidence": "each seed"},
        measured=correlation["measured"].map("{:.3g}".format),
        note=correlation["note"].astype(str).str.split(f"; {STAND_IN_NOTE}").str[0],
    )


def _seed_history(record: dict[str, Any], runs: pd.DataFrame, source: Path) -> str:
    """The seeds each device call ran and, where the last call added seeds, where the claims
    judged on the earlier calls' seeds alone (which the page judged before it) read otherwise."""
    calls = record["calls"]  # results/istar/<model>/<task>/<regulariser>_<λ>/seed<n>/...
    seeds = [sorted({int(Path(p).parts[5][4:]) for p in c["wall_seconds_per_run"]}) for c in calls]
    text = "Seeds per device call: " + "; ".join(
        f"{', '.join(map(str, s))} (code {c['code_commit']})" for s, c in zip(seeds, calls)
    )
    earlier = sorted({seed for call in seeds[:-1] for seed in call})
    if not earlier or set(seeds[-1]) <= set(earlier):
        return text + ".\n"
    before, after = (judged(r, record, source)[1] for r in (runs[runs["seed"].isin(earlier)], runs))
    pairs = zip(before.itertuples(), after.itertuples(), strict=True)
    changed = [f"{b.claim} at {b.setup}, {b.verdict}" for b, a in pairs if b.verdict != a.verdict]
    return (
        f"{text}. This page judged seeds {', '.join(map(str, earlier))} before the last call "
        f"added {', '.join(map(str, seeds[-1]))} (λ = -1's task claim then read inconclusive by "
        f"that day's rule); today's rule on them alone reads otherwise in "
        f"{'; '.join(changed) or 'no verdict'}.\n"
    )


def parts(root: Path) -> list[Any]:
    (record, runs), (whole_record, whole) = (
        committed_files(root, grid_files(p)[4], grid_files(p)[0]) for p in OVERLAY
    )
    rows = record["calls"][0]["istar"]["training"]["train_subset"]
    grids = {f"{rows:,} rows": runs, "whole split": whole}
    return [*_subset_parts(root, record, runs), *_whole_parts(root, whole_record, rows, grids)]


def _subset_parts(root: Path, record: dict, runs: pd.DataFrame) -> list[Any]:
    """The page's sections on the subset grid: Figures 5-7's counterparts, costs, claims."""
    step, main = record["calls"][0]["costs"]["step_s_none"], read_json(root, str(MAIN_RUN))
    main_step = pd.Series(main["wall_seconds_per_run"]).median() / MAIN_UPDATES
    return [
        _summary(record, runs, root, SUBSET),
        "Below: mean ± sd over seeds (number of seeds); IsoScore* and TwoNN (intrinsic dimension) "
        "of the validation representations; λ 0: no regulariser. CosReg at λ = −5 predicts the "
        "majority class in every seed.\n",
        *(p for column, head in FIGURES.items() for p in (head, "", _by_lambda(runs, column))),
        "## Cost per step\n",
        *_steps(record),
        "The penalty's overhead target is at most 1.15× plain. A fine-tuning step (MiniLM, 32 "
        f"sentences) took {step * 1e3:.1f} ms, {step / main_step:.1f}× a main-study direct "
        f"optimisation update on another card ({main_step * 1e3:.1f} ms: median run of "
        f"{MAIN_RUN.name}, {main['device']}).\n",
        "## The poster's claims, judged\n",
        "By the I-STAR verdict code (docs/verdicts.md, Claims); Holm per quantity (IsoScore*, task "
        "metric) over all λ. CosReg is in no claim of ours, λ > 0 only in the correlation below.\n",
        *_claim_tables(runs, record, SUBSET),
    ]


def _whole_parts(root: Path, whole_record: dict, rows: int, grids: dict) -> list[Any]:
    """The page's sections on the whole training split, and the correlation on both grids."""
    whole = grids["whole split"]
    # results/istar/<model>/<task>/<regulariser>_<λ>/seed<n>/metrics.json
    per_run = _walls(whole_record).groupby(lambda path: Path(path).parts[4].split("_")[0]).mean()
    return [
        f"## The claims' runs on the whole training split ({OVERLAY[WHOLE]})\n",
        _summary(whole_record, whole, root, WHOLE),
        f"Mean ± sd over seeds (number of seeds), beside the {rows:,}-row grid's same runs:\n",
        _side_by_side(grids),
        *_steps(whole_record),
        "A whole run (loading, tokenising, Σ_S, the steps, evaluation) took "
        + ", ".join(f"{seconds:.1f} s ({name})" for name, seconds in per_run.items())
        + " on average.\n",
        *_claim_tables(whole, whole_record, WHOLE),
        _seed_history(whole_record, whole, grid_files(WHOLE)[0]),
        'The poster\'s "isotropy correlates negatively with task performance", one rule on both '
        "grids (docs/verdicts.md, Claims): per seed, Pearson r of IsoScore* and accuracy over the "
        "grid's runs with no regulariser or I-STAR at any λ (shown: Fisher z); Holm over the two "
        "grids. A verdict speaks for its grid's λ only (the whole split has none > 0).\n",
        _correlation(grids),
    ]


COMMITTED = committed.CommittedRun(
    name="istar_gpu",
    # a grid's CUDA tests' log is committed when its calls ran them
    records=tuple(
        committed.Checksums(grid[-1], grid[:3], optional=grid[3:4])
        for grid in map(grid_files, OVERLAY)
    ),
    pages=(committed.Page(DOC, parts, whole=("istar_gpu", "I-STAR at scale on one GPU")),),
    copy=lambda root, sources, facts, config, into: combine(
        sources, root, into.path.name.removesuffix("_record.json")
    ),
    sources="the $OUT folders of benchmarks/istar_on_device.py run calls, in order",
    source_count=0,
)
