"""The Rajaee CLS study's default grid and its cause sweep, committed (issue 68), as the main
study's run is (:mod:`isotropy.verdicts.headline`).

- ``docs/data/rajaee_cls_seeds.csv``: the grid's ``results/rajaee_cls/runs.csv`` (one row per
  method and seed: accuracy, majority baseline, CLS I(W) ...).
- ``docs/data/rajaee_cls_cause.jsonl``: the sweep of ``benchmarks/rajaee_cls_learning.py
  --measure`` (one JSON line per run: accuracy, cluster–label ARI, the method after training at
  each k and number of removed directions).
- ``docs/data/rajaee_cls_run.json``: their record (checksums, code commit, settings, model,
  stand-ins, package versions, device, seeds, the run's times).

docs/rajaee-cls.md's tables are rendered from them (``python -m isotropy.rajaee_cls.committed``;
with ``--results``, a finished grid is copied first); tests/test_rajaee_cls_committed.py fails
when the page is stale or a file does not match the checksum its record states.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from isotropy import paths
from isotropy.io import checked_record, commit_files, markers, sha256_file, write_block
from isotropy.provenance import read_record, single_commit
from isotropy.rajaee_cls.results import accuracy_summary

DATA = Path("docs/data")
SEEDS = DATA / "rajaee_cls_seeds.csv"
CAUSE = DATA / "rajaee_cls_cause.jsonl"
RUN = DATA / "rajaee_cls_run.json"
DOC = Path("docs/rajaee-cls.md")
BEGIN, END = markers("Rajaee CLS tables", "python -m isotropy.rajaee_cls.committed")


def write_data(
    results: str | os.PathLike,
    effective_config: str | os.PathLike,
    cause: str | os.PathLike,
    run: Mapping[str, Any],
    root: str | os.PathLike = ".",
) -> dict[str, Any]:
    """Copy a finished grid (``results``: its ``results/rajaee_cls``) and the cause sweep's JSON
    lines beside the docs with their record; ``run``: facts no file holds (start, end, machine)."""
    results = Path(results)
    metrics = sorted(results.glob("*/*/*/seed*/metrics.json"))
    if not (results / "runs.csv").is_file() or not metrics:
        raise FileNotFoundError(f"{results} holds no finished grid: run rajaee_cls_study first")
    config = yaml.safe_load(Path(effective_config).read_text(encoding="utf-8"))
    section = config["rajaee_cls"]
    found = [read_record(path) for path in metrics]
    records = [record for record in found if record is not None]
    if len(records) != len(found):
        raise FileNotFoundError(f"{results}: a run's metrics.json has no provenance record")
    facts = {
        "what": "the Rajaee CLS study's default grid (target rajaee_cls_study, config.yaml + "
        "config/offline.yaml) and the cause sweep (benchmarks/rajaee_cls_learning.py --measure)",
        "code_commit": single_commit(records, "the grid's runs"),
        "run": dict(run),
        "config": {
            "rajaee_cls": section,
            "models": {m: config["models"][m] for m in section["models"]},
        },
        "stand_ins": {m: f"{m} for the slides' BERT-base" for m in section["models"]},
        "seeds": section["seeds"],
        "packages": json.loads(
            _one(records, lambda r: json.dumps(r["packages"], sort_keys=True), "package sets")
        ),
        "device": _one(records, lambda r: f"{r['device']}: {r['hardware']}", "devices"),
        "sources_sha256": {
            str(p.relative_to(results.parent.parent)): sha256_file(p) for p in metrics
        },
    }
    return commit_files(root, RUN, {SEEDS: results / "runs.csv", CAUSE: Path(cause)}, facts)


def _one(records: list[dict[str, Any]], key, what: str) -> Any:
    found = {str(key(record)) for record in records}
    if len(found) != 1:
        raise ValueError(f"the grid's runs were made by {len(found)} {what}: {sorted(found)}")
    return found.pop()


def committed_tables(root: str | os.PathLike = ".") -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """(the grid's per-seed rows, the sweep's runs), checked against the record."""
    root = Path(root)
    checked_record(root, RUN)
    lines = (root / CAUSE).read_text(encoding="utf-8").splitlines()
    return pd.read_csv(root / SEEDS), [json.loads(line) for line in lines if line.strip()]


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _variant(run: Mapping[str, Any]) -> str:
    if run["method"] == "none":
        return "none"
    method = run["cluster_method"]
    return f"{method['fit']}, k = {method['clusters']}, d = {method['directions']}"


def _cause_lines(cause: list[dict[str, Any]]) -> list[str]:
    """The cause sweep's two tables: agreement per variant, and accuracy after training."""
    lines: list[str] = []
    lines += [
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
            f"| {_variant(entry)} | {entry['seed']} | {_pct(entry['accuracy'])} "
            f"| {_pct(entry['majority_baseline'])} | {training_ari} "
            f"| {final['eval_batch_ari_mean']:.2f} ({final['eval_batch_ari_min']:.2f}–"
            f"{final['eval_batch_ari_max']:.2f}) | {final['eval_offline_ari']:.2f} "
            f"| {entry['wall_seconds']:.0f} |"
        )
    posthoc = [
        (entry["seed"], point)
        for entry in cause
        for point in entry["agreement"][-1].get("method_accuracy", [])
    ]
    if posthoc:
        lines += [
            "",
            "The method applied after training to the model trained without it (its head "
            "unchanged): validation accuracy % against k and the removed directions d.",
            "",
            "| seed | fitted | k | d | accuracy % |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {seed} | {p['fit']} | {p['clusters']} | {p['directions']} | {_pct(p['accuracy'])} |"
            for seed, p in posthoc
        ]
    return lines


def doc_block(root: str | os.PathLike = ".") -> str:
    """The page's generated block: the grid per seed, the sweep's agreement and accuracies."""
    record = checked_record(root, RUN)
    seeds, cause = committed_tables(root)
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
    lines += _summary_lines(seeds)
    lines += _cause_lines(cause)
    return "\n".join(lines) + "\n"


def _summary_lines(seeds: pd.DataFrame) -> list[str]:
    """The grid's accuracies summed up from the unrounded values."""
    summary = accuracy_summary(seeds)
    return [
        "",
        f"Mean accuracy over the {summary['seeds']} seeds: {_pct(summary['without'])}% without "
        f"the method, {_pct(summary['with_method'])}% with it; with − without, same seed: "
        f"{100 * summary['difference']:+.1f} points (95% t-interval over seeds "
        f"{100 * summary['low']:+.1f} to {100 * summary['high']:+.1f}).",
    ]


def write_page(root: str | os.PathLike = ".") -> None:
    """Rewrite docs/rajaee-cls.md's generated block from the committed data."""
    write_block(Path(root) / DOC, doc_block(root), BEGIN, END)


def main(argv: list[str] | None = None) -> int:
    """``python -m isotropy.rajaee_cls.committed``: regenerate docs/rajaee-cls.md's tables from
    the committed data; with ``--results``, first copy a finished grid and the sweep there."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--results", help=f"a finished grid's {paths.rajaee_cls_file('')}")
    parser.add_argument("--cause", help="the sweep's JSON lines")
    parser.add_argument("--effective-config", default="logs/effective-config/rajaee_cls_study.yaml")
    parser.add_argument("--run", help="a JSON file of the run's facts (started, ended, wall, …)")
    args = parser.parse_args(argv)
    if args.results:
        facts = json.loads(Path(args.run).read_text(encoding="utf-8")) if args.run else {}
        write_data(args.results, args.effective_config, args.cause, facts)
    write_page()
    print(f"wrote {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
