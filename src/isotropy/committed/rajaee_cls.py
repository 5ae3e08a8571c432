"""The Rajaee CLS study's default grid and its CPU cause sweep, committed (run ``rajaee_cls``),
the five-seed sweep on a GPU (run ``rajaee_cls_gpu``), and docs/rajaee-cls.md's tables rendered
from them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed.record import (
    DATA,
    Checksums,
    CommittedRun,
    Page,
    claims_table,
    device_calls,
    made_by,
    page_markers,
)
from isotropy.intake import parse_json, read_csv, read_text, read_yaml
from isotropy.io import checked_record, commit_files, markdown_table
from isotropy.rajaee_cls.results import (
    LAYER_COLUMNS,
    accuracy_summary,
    cause_verdict,
    clusters_remove_the_class,
    trained_differences,
    variant_name,
)
from isotropy.studies import rajaee_cls as rajaee_cls_study
from isotropy.verdicts.tolerances import NOT_RUN

SEEDS = DATA / "rajaee_cls_seeds.csv"
CAUSE = DATA / "rajaee_cls_cause.jsonl"
RUN = DATA / "rajaee_cls_run.json"
GPU_CAUSE, GPU_RECORD = DATA / "rajaee_cls_gpu_cause.jsonl", DATA / "rajaee_cls_gpu_record.json"
DOC = Path("docs/rajaee-cls.md")
BEGIN, END = page_markers("Rajaee CLS tables")


def copy(root: Path, sources: list[Path], facts: dict[str, Any], config: Path, into) -> None:
    """Copy a finished grid (its ``results/rajaee_cls``) and the cause sweep's JSON lines."""
    results, cause = sources
    metrics = sorted(results.glob("*/*/*/seed*/metrics.json"))
    if not (results / "runs.csv").is_file() or not metrics:
        raise FileNotFoundError(f"{results} holds no finished grid: run rajaee_cls_study first")
    settings = read_yaml(Path(config).parent, Path(config).name)
    section = settings["rajaee_cls"]
    made = {
        "what": "the Rajaee CLS study's default grid (target rajaee_cls_study, config.yaml + "
        "config/offline.yaml) and the cause sweep (benchmarks/rajaee_cls_learning.py --measure)",
        **made_by(metrics, results.parent.parent, lambda r: f"{r['device']}: {r['hardware']}"),
        "run": dict(facts),
        "config": {
            "rajaee_cls": section,
            "models": {m: settings["models"][m] for m in section["models"]},
        },
        "stand_ins": {m: f"{m} for the slides' BERT-base" for m in section["models"]},
        "seeds": section["seeds"],
    }
    commit_files(root, RUN, {SEEDS: results / "runs.csv", CAUSE: Path(cause)}, made)


def _json_lines(text: str) -> list[Any]:
    return [parse_json(line) for line in text.splitlines() if line.strip()]


def committed_tables(root: str | os.PathLike = ".") -> tuple[dict, pd.DataFrame, list[dict]]:
    """(the record, the grid's per-seed rows, the sweep's runs), checked against the record."""
    record = checked_record(root, RUN)
    return record, read_csv(root, str(SEEDS)), _json_lines(read_text(root, str(CAUSE)))


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _cause_lines(cause: list[dict[str, Any]]) -> list[str]:
    """The CPU cause sweep's agreement per variant."""
    lines = [
        "",
        "The cause sweep (`benchmarks/rajaee_cls_learning.py --measure`): each variant trained "
        "with the method; ARI = adjusted Rand index of the k-means clusters (k of the variant, "
        "k = 3 without the method) with the labels, mean over batches, on the CLS states before "
        "the method.",
        "",
        "| trained with | seed | accuracy % | majority % "
        "| ARI per batch, training (before epoch 1 → 2) | ARI per batch, evaluation "
        "| ARI offline, evaluation | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in cause:
        before, final = entry["agreement"][:-1], entry["agreement"][-1]
        training_ari = " → ".join(f"{r['train_batch_ari_mean']:.2f}" for r in before)
        lines.append(
            f"| {variant_name(entry)} | {entry['seed']} | {_pct(entry['accuracy'])} "
            f"| {_pct(entry['majority_baseline'])} | {training_ari} "
            f"| {final['eval_batch_ari_mean']:.2f} ({final['eval_batch_ari_min']:.2f}–"
            f"{final['eval_batch_ari_max']:.2f}) | {final['eval_offline_ari']:.2f} "
            f"| {entry['wall_seconds']:.0f} |"
        )
    return lines


def doc_block(root: str | os.PathLike = ".") -> str:
    """The page's generated block: the grid per seed, the sweep's agreement and accuracies."""
    record, seeds, cause = committed_tables(root)
    section = record["config"]["rajaee_cls"]
    method, training = section["cluster_method"], section["training"]
    run = record["run"]
    lines = [
        f"Grid: {', '.join(section['models'])} on {', '.join(section['tasks'])}, "
        f"{training['train_subset']} training examples x {training['epochs']} epochs, batch "
        f"{training['batch_size']}, lr {training['learning_rate']:g}, seeds "
        f"{', '.join(map(str, record['seeds']))}; the method: k = {method['clusters']}, "
        f"d = {method['directions']}, fitted {method['fit']}. Code {record['code_commit'][:12]}, "
        f"{run.get('started', '?')} to {run.get('ended', '?')} UTC ({run.get('wall', '?')} wall, "
        f"{run.get('machine', '?')}); stand-in: {'; '.join(record['stand_ins'].values())}.",
        "",
        "| method | seed | accuracy % | majority % | I(W) of the CLS states | I(W) the head read |",
        "|---|---|---|---|---|---|",
    ]
    for _, row in seeds.iterrows():
        lines.append(
            f"| {row['method']} | {row['seed']} | {_pct(row['accuracy'])} "
            f"| {_pct(row['majority_baseline'])} | {row['cls_iw']:.2e} "
            f"| {row['cls_iw_head_input']:.2e} |"
        )
    summary = accuracy_summary(seeds)  # from the unrounded values
    lines += [
        "",
        f"Mean accuracy over the {summary['seeds']} seeds: {_pct(summary['without'])}% without "
        f"the method, {_pct(summary['with_method'])}% with it; with − without, same seed: "
        f"{100 * summary['difference']:+.1f} points (95% t-interval over seeds "
        f"{100 * summary['low']:+.1f} to {100 * summary['high']:+.1f}).",
        *_cause_lines(cause),
    ]
    return "\n".join(lines) + "\n"


def claims_shown(root: str | os.PathLike = ".") -> list[pd.DataFrame]:
    """The slides' CLS claims judged on the committed grid (the zero-mean claim reads per-layer
    norms, which it does not hold), as the page shows them."""
    record, seeds, _ = committed_tables(root)
    offline = record["config"]["rajaee_cls"]["cluster_method"]["fit"] == "offline"
    table = rajaee_cls_study.check_claims(
        seeds, pd.DataFrame(columns=LAYER_COLUMNS), offline=offline
    )
    not_held = "it reads per-layer CLS norms, not committed"
    table = table.assign(note=table["note"].where(table["verdict"] != NOT_RUN, not_held))
    return [claims_table(table, ["claim", "setup", "verdict", "evidence", "note"])]


def committed_claims_block(root: str | os.PathLike = ".") -> str:
    """The slides' CLS claims judged on the committed grid (:func:`claims_shown`)."""
    return (
        "The slides' CLS claims judged on the committed grid (docs/verdicts.md, Claims: every "
        "seed the claimed way and a one-sided t over seeds, Holm over the CLS family; the "
        "learning guard first):\n\n" + markdown_table(*claims_shown(root))
    )


CAUSE_BEGIN, CAUSE_END = page_markers("Rajaee CLS cause")


def _points(value: float | None) -> str:
    return "" if value is None else f"{100 * value:+.1f}"


def cause_block(root: Path) -> str:
    """The five-seed sweep: accuracy per variant and seed, the paired differences and what they
    decide (:func:`cause_verdict`), the method applied after training, the predicate's count."""
    record = checked_record(root, GPU_RECORD)
    runs = _json_lines(read_text(root, str(GPU_CAUSE)))
    seeds = sorted({run["seed"] for run in runs})
    by_variant: dict[str, dict[int, dict[str, Any]]] = {}
    for run in runs:
        by_variant.setdefault(variant_name(run), {})[run["seed"]] = run
    out = [
        _sweep_source(runs, record),
        "",
        "Validation accuracy % trained with each variant (k clusters, d directions removed, "
        "fitted per batch or offline); ARI: of the k-means clusters (k of the variant, 3 without "
        "the method; 0 by construction at k = 1) with the labels at evaluation, fitted offline on "
        "the CLS states before the method, mean over seeds:",
        "",
        "| trained with | " + " | ".join(f"seed {s}" for s in seeds) + " | mean | ARI |",
        "|---|" + "---|" * (len(seeds) + 2),
    ]
    for name, variant in by_variant.items():
        cells = [_pct(variant[s]["accuracy"]) if s in variant else "" for s in seeds]
        mean = _pct(sum(r["accuracy"] for r in variant.values()) / len(variant))
        ari = sum(r["agreement"][-1]["eval_offline_ari"] for r in variant.values()) / len(variant)
        out.append(f"| {name} | " + " | ".join(cells) + f" | {mean} | {ari:.2f} |")
    differences = trained_differences(runs)
    out += [
        "",
        "Paired differences of accuracy (points, same seed) with their 95% t-interval over seeds:",
        "",
        "| difference | seeds | each seed | mean | 95% interval | the interval |",
        "|---|---|---|---|---|---|",
    ]
    for row in differences.itertuples(index=False):
        each = ", ".join(_points(v) for v in row.values)
        interval = "" if row.low is None else f"{_points(row.low)} to {_points(row.high)}"
        mean = _points(row.mean) if row.seeds else ""
        out.append(
            f"| {row.difference} | {row.seeds} | {each} | {mean} | {interval} | {row.reads} |"
        )
    plain = list(by_variant.get("none", {}).values())
    holds = sorted(run["seed"] for run in plain if clusters_remove_the_class(run))
    if plain:
        out += ["", *_applied_after(plain)]
    out += [
        "",
        f"**{cause_verdict(runs)}** The predicate of the first two bullets above "
        "(`clusters_remove_the_class`, the method applied after training) holds on "
        f"{len(holds)} of the {len(plain)} runs without the method"
        + (f" (seeds {', '.join(map(str, holds))})." if holds else "."),
    ]
    return "\n".join(out) + "\n"


def _sweep_source(runs: list[dict[str, Any]], record: dict[str, Any]) -> str:
    call, missing = record["calls"][0], ", ".join(record["runs_not_ended"])
    ended = (
        f"not run (the call's deadline came first): {missing}"
        if missing
        else "every run planned ended before the call's deadline"
    )
    return (
        f"The sweep trained with each variant at {len(record['seeds'])} seeds "
        f"(benchmarks/rajaee_cls_on_device.py, {GPU_CAUSE.name}): {call['device']}, torch "
        f"{call['versions']['torch']}, code {call['code_commit']}, {call['date']}; "
        f"{len(runs)} runs, {ended}; {call['stand_in']}."
    )


def _applied_after(plain: list[dict[str, Any]]) -> list[str]:
    """Accuracy % of the method applied after training per (fit, k, d) and seed, and the mean."""
    seeds = sorted(line["seed"] for line in plain)
    points: dict[tuple[str, int, int], dict[int, float]] = {}
    for line in sorted(plain, key=lambda line: line["seed"]):
        for point in line["agreement"][-1]["method_accuracy"]:
            key = (point["fit"], point["clusters"], point["directions"])
            points.setdefault(key, {})[line["seed"]] = point["accuracy"]
    rows = []
    for (fit, k, d), found in points.items():
        rows.append({"fitted": fit, "k": k, "d": d})
        rows[-1] |= {f"seed {s}": _pct(found[s]) if s in found else "" for s in seeds}
        rows[-1]["mean"] = _pct(sum(found.values()) / len(found))
    return [
        "The method applied after training to the runs without it (their head unchanged): "
        "validation accuracy % against k and the removed directions d.",
        "",
        markdown_table(pd.DataFrame(rows)).rstrip("\n"),
    ]


COMMITTED = CommittedRun(
    name="rajaee_cls",
    records=(Checksums(RUN, (SEEDS, CAUSE)),),
    pages=(
        Page(DOC, doc_block, (BEGIN, END)),
        Page(DOC, committed_claims_block, page_markers("Rajaee CLS claims"), claims_shown),
    ),
    copy=copy,
    sources="results/rajaee_cls (a finished grid) and the cause sweep's JSON lines",
    source_count=2,
    effective_config="logs/effective-config/rajaee_cls_study.yaml",
)


def copy_device_calls(root: Path, sources: list[Path], facts, config, into) -> dict[str, Any]:
    """The ``$OUT`` folders of benchmarks/rajaee_cls_on_device.py calls, in order, as one sweep."""
    calls = device_calls(sources)
    text = "".join(read_text(source, "cause.jsonl") for source in sources)
    seeds = sorted({seed for call in calls for seed in call["seeds"]})
    ended = {f"seed{x['seed']} {variant_name(x)}" for x in _json_lines(text)}
    # planned by some call (a call's record.json is rewritten at its start and its end)
    planned = {n for c in calls for n in [*c["wall_seconds_per_run"], *c["runs_not_ended"]]}
    record = {
        "what": f"the Rajaee CLS cause sweep trained with each variant, in {len(calls)} call(s)",
        "seeds": seeds,
        "runs_not_ended": sorted(planned - ended),
        "calls": calls,
    }
    return commit_files(root, into.path, {GPU_CAUSE: text.encode("utf-8")}, record)


COMMITTED_GPU = CommittedRun(
    name="rajaee_cls_gpu",
    records=(Checksums(GPU_RECORD, (GPU_CAUSE,)),),
    pages=(Page(DOC, cause_block, (CAUSE_BEGIN, CAUSE_END)),),
    copy=copy_device_calls,
    sources="the $OUT folders of benchmarks/rajaee_cls_on_device.py run calls, in order",
    source_count=0,
)
