"""The Rajaee CLS grid and CPU cause sweep (run ``rajaee_cls``) and the five-seed GPU sweep (run
``rajaee_cls_gpu``), committed, and docs/rajaee-cls.md's tables rendered from them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from isotropy.committed import record as committed
from isotropy.committed.record import DATA, Checksums, CommittedRun, committed_files, page_markers
from isotropy.intake import read_text, read_yaml
from isotropy.io import commit_files
from isotropy.rajaee_cls import results as cls
from isotropy.rajaee_cls.results import variant_name
from isotropy.statistics import NOT_RUN
from isotropy.studies import rajaee_cls as rajaee_cls_study

SEEDS = DATA / "rajaee_cls_seeds.csv"
CAUSE = DATA / "rajaee_cls_cause.jsonl"
RUN = DATA / "rajaee_cls_run.json"
GPU_CAUSE, GPU_RECORD = DATA / "rajaee_cls_gpu_cause.jsonl", DATA / "rajaee_cls_gpu_record.json"
DOC = Path("docs/rajaee-cls.md")
BEGIN, END = page_markers("Rajaee CLS tables")
CAUSE_BEGIN, CAUSE_END = page_markers("Rajaee CLS cause")


def copy(root: Path, sources: list[Path], facts: dict[str, Any], config: Path, into) -> None:
    """Copy a finished grid (its ``results/rajaee_cls``) and the cause sweep's JSON lines."""
    results, cause = sources
    metrics = sorted(results.glob("*/*/*/seed*/metrics.json"))
    if not (results / "runs.csv").is_file() or not metrics:
        raise FileNotFoundError(f"{results} holds no finished grid: run rajaee_cls_study first")
    settings = read_yaml(Path(config).parent, Path(config).name)
    section = settings["rajaee_cls"]
    models = {m: settings["models"][m] for m in section["models"]}
    made = {
        "what": "the Rajaee CLS study's default grid (target rajaee_cls_study, config.yaml + "
        "config/offline.yaml) and the cause sweep (benchmarks/rajaee_cls_learning.py --measure)",
        **committed.made_by(
            metrics, results.parent.parent, lambda r: f"{r['device']}: {r['hardware']}"
        ),
        "run": dict(facts),
        "config": {"rajaee_cls": section, "models": models},
        "stand_ins": {m: f"{m} for the slides' BERT-base" for m in section["models"]},
        "seeds": section["seeds"],
    }
    commit_files(root, RUN, {SEEDS: results / "runs.csv", CAUSE: Path(cause)}, made)


def _pct(value: Any, sign: str = "") -> str:
    return "" if pd.isna(value) else f"{100 * value:{sign}.1f}"


def doc_parts(root: str | os.PathLike = ".") -> list[Any]:
    record, seeds, cause = committed_files(root, RUN, SEEDS, CAUSE)
    section = record["config"]["rajaee_cls"]
    method, training, run = section["cluster_method"], section["training"], record["run"]
    summary = cls.accuracy_summary(seeds)  # from the unrounded values
    per_seed = seeds[["method", "seed"]].assign(
        **{
            "accuracy %": seeds["accuracy"].map(_pct),
            "majority %": seeds["majority_baseline"].map(_pct),
            "I(W) of the CLS states": seeds["cls_iw"].map("{:.2e}".format),
            "I(W) the head read": seeds["cls_iw_head_input"].map("{:.2e}".format),
        }
    )
    sweep = [  # each entry's last agreement is at evaluation, those before it after each epoch
        {
            "trained with": variant_name(entry),
            "seed": entry["seed"],
            "accuracy %": _pct(entry["accuracy"]),
            "majority %": _pct(entry["majority_baseline"]),
            "ARI per batch, training (before epoch 1 → 2)": " → ".join(
                f"{r['train_batch_ari_mean']:.2f}" for r in before
            ),
            "ARI per batch, evaluation": "{eval_batch_ari_mean:.2f} "
            "({eval_batch_ari_min:.2f}–{eval_batch_ari_max:.2f})".format_map(final),
            "ARI offline, evaluation": f"{final['eval_offline_ari']:.2f}",
            "wall s": f"{entry['wall_seconds']:.0f}",
        }
        for entry in cause
        for *before, final in [entry["agreement"]]
    ]
    return [
        f"Grid: {', '.join(section['models'])} on {', '.join(section['tasks'])}, "
        f"{training['train_subset']} training examples x {training['epochs']} epochs, batch "
        f"{training['batch_size']}, lr {training['learning_rate']:g}, seeds "
        f"{', '.join(map(str, record['seeds']))}; the method: k = {method['clusters']}, "
        f"d = {method['directions']}, fitted {method['fit']}. Code {record['code_commit'][:12]}, "
        f"{run.get('started', '?')} to {run.get('ended', '?')} UTC ({run.get('wall', '?')} wall, "
        f"{run.get('machine', '?')}); stand-in: {'; '.join(record['stand_ins'].values())}.\n",
        per_seed,
        f"Mean accuracy, {summary['seeds']} seeds: {_pct(summary['without'])}% without the "
        f"method, {_pct(summary['with_method'])}% with it; with − without, same seed, "
        f"{100 * summary['difference']:+.1f} points (95% t-interval over seeds "
        f"{100 * summary['low']:+.1f} to {100 * summary['high']:+.1f}).\n",
        "The cause sweep (`benchmarks/rajaee_cls_learning.py --measure`), trained with each "
        "method variant; ARI: adjusted Rand index of k-means clusters (k of the variant, 3 "
        "without the method) of the CLS states before the method with the labels, batch mean.\n",
        pd.DataFrame(sweep),
    ]


def claims_parts(root: str | os.PathLike = ".") -> list[Any]:
    """The slides' CLS claims judged on the committed grid (the zero-mean claim reads per-layer
    norms, which it does not hold)."""
    record, seeds = committed_files(root, RUN, SEEDS)
    offline = record["config"]["rajaee_cls"]["cluster_method"]["fit"] == "offline"
    table = rajaee_cls_study.check_claims(
        seeds, pd.DataFrame(columns=cls.LAYER_COLUMNS), offline=offline
    )
    not_held = "it reads per-layer CLS norms, not committed"
    table = table.assign(note=table["note"].where(table["verdict"] != NOT_RUN, not_held))
    return [
        "The slides' CLS claims on the committed grid (docs/verdicts.md, Claims: every seed the "
        "claimed way, one-sided t over seeds, Holm over the CLS family; learning guard first):\n",
        committed.claims_table(table, ["claim", "setup", "verdict", "evidence", "note"]),
    ]


def _by_seed(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Accuracy % per ``keys`` (first seen first) and seed, then the mean over the seeds."""
    wide = frame.pivot(index=keys, columns="seed", values="accuracy")
    wide = wide.reindex(frame.set_index(keys).index.unique())
    shown = wide.map(_pct).rename(columns="seed {}".format)
    return shown.assign(mean=wide.mean(axis=1).map(_pct))


def _differences(runs: list[dict[str, Any]]) -> pd.DataFrame:
    found = cls.trained_differences(runs)
    points = found[["mean", "low", "high"]].map(_pct, sign="+")  # differences in points
    return found[["difference", "seeds"]].assign(
        **{
            "each seed": [", ".join(_pct(v, "+") for v in values) for values in found["values"]],
            "mean": points["mean"],
            "95% interval": (points["low"] + " to " + points["high"]).replace(" to ", ""),
            "the interval": found["reads"],
        }
    )


def cause_parts(root: Path) -> list[Any]:
    """The five-seed sweep on a GPU and what it decides (:func:`cause_verdict`)."""
    record, runs = committed_files(root, GPU_RECORD, GPU_CAUSE)
    frame = pd.DataFrame(runs).assign(ari=[r["agreement"][-1]["eval_offline_ari"] for r in runs])
    frame["trained with"] = [variant_name(run) for run in runs]
    frame = frame.drop_duplicates(["trained with", "seed"], keep="last")
    variants = _by_seed(frame, ["trained with"])
    variants["ARI"] = frame.groupby("trained with")["ari"].mean().map("{:.2f}".format)
    plain = {run["seed"]: run for run in runs if run["method"] == "none"}
    applied = [  # each run's last agreement holds the method applied after training
        {"fitted": p["fit"], "k": p["clusters"], "d": p["directions"], "seed": seed} | p
        for seed, run in sorted(plain.items())
        for p in run["agreement"][-1]["method_accuracy"]
    ]
    holds = sorted(seed for seed, run in plain.items() if cls.clusters_remove_the_class(run))
    call, missing = record["calls"][0], ", ".join(record["runs_not_ended"]) or "none"
    out = [
        f"The sweep trained with each variant at {len(record['seeds'])} seeds "
        f"(benchmarks/rajaee_cls_on_device.py, {GPU_CAUSE.name}): {call['device']}, torch "
        f"{call['versions']['torch']}, code {call['code_commit']}, {call['date']}; "
        f"{len(runs)} runs; not ended by the call's deadline: {missing}; {call['stand_in']}.\n",
        "Validation accuracy % trained with each variant (k clusters, d directions removed, "
        "fitted per batch or offline); ARI as above but at evaluation, fitted offline, mean over "
        "seeds (0 by construction at k = 1):\n",
        variants.reset_index(),
        "Paired differences of accuracy (points, same seed), 95% t-interval over seeds:\n",
        _differences(runs),
    ]
    if applied:
        out += [
            "The method applied after training to the runs without it (their head unchanged): "
            "validation accuracy % against k and the removed directions d.\n",
            _by_seed(pd.DataFrame(applied), ["fitted", "k", "d"]).reset_index(),
        ]
    return out + [
        f"**{cls.cause_verdict(runs)}** The first two bullets' predicate "
        f"(`clusters_remove_the_class`, method applied after training) holds on {len(holds)} of "
        f"{len(plain)} runs without it (seeds: {', '.join(map(str, holds)) or 'none'}).\n",
    ]


COMMITTED = CommittedRun(
    name="rajaee_cls",
    records=(Checksums(RUN, (SEEDS, CAUSE)),),
    pages=(
        committed.Page(DOC, doc_parts, (BEGIN, END)),
        committed.Page(DOC, claims_parts, page_markers("Rajaee CLS claims")),
    ),
    copy=copy,
    sources="results/rajaee_cls (a finished grid) and the cause sweep's JSON lines",
    source_count=2,
    effective_config="logs/effective-config/rajaee_cls_study.yaml",
)


def copy_device_calls(root: Path, sources: list[Path], facts, config, into) -> dict[str, Any]:
    """The ``$OUT`` folders of benchmarks/rajaee_cls_on_device.py calls, in order, as one sweep."""
    calls = committed.device_calls(sources)
    text = "".join(read_text(source, "cause.jsonl") for source in sources)
    ended = {f"seed{x['seed']} {variant_name(x)}" for x in committed.json_lines(text)}
    # planned by some call (a call's record.json is rewritten at its start and its end)
    planned = {n for c in calls for n in [*c["wall_seconds_per_run"], *c["runs_not_ended"]]}
    record = {
        "what": f"the Rajaee CLS cause sweep trained with each variant, in {len(calls)} call(s)",
        "seeds": sorted({seed for call in calls for seed in call["seeds"]}),
        "runs_not_ended": sorted(planned - ended),
        "calls": calls,
    }
    return commit_files(root, into.path, {GPU_CAUSE: text.encode("utf-8")}, record)


COMMITTED_GPU = CommittedRun(
    name="rajaee_cls_gpu",
    records=(Checksums(GPU_RECORD, (GPU_CAUSE,)),),
    pages=(committed.Page(DOC, cause_parts, (CAUSE_BEGIN, CAUSE_END)),),
    copy=copy_device_calls,
    sources="the $OUT folders of benchmarks/rajaee_cls_on_device.py run calls, in order",
    source_count=0,
)
