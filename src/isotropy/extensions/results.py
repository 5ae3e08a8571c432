"""The extension study's numbers: per-seed values of each question from the runs' traces, one
table per question with every seed's value and the interval over seeds, the study's claims
(:data:`CLAIMS`) and the per-seed values each is judged on
(:func:`isotropy.verdicts.claims.check_claims`).

A per-seed value is one run's number (a change from step 0 to the last step, a correlation over
its recorded steps, the step of an optimum). Intervals over seeds: correlations by
:func:`isotropy.statistics.seed_interval` (t-interval of Fisher z, the main study's);
other quantities by the t-interval of their mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from scipy import stats

from isotropy.extensions.design import QUESTIONS
from isotropy.metrics import registry
from isotropy.statistics import TREND_SESOI, TREND_SOURCE, Claim, mean_interval, seed_interval

SEED_COLUMNS = ["question", "setup", "item", "quantity", "seed", "value"]
# The cluster criteria beside the silhouette, as the metric registry names and orders them.
CRITERIA = registry.cluster_criteria()
CORRELATIONS = ("rho_isoscore", "rho_silhouette")


def by_question(files: Iterable[str]) -> dict[str, str]:
    """Each question's file among a rule's outputs, keyed by its name (``<question>.<ext>``), so
    no file is paired with a question by position; refused unless there is one per question."""
    files = [str(f) for f in files]
    found = {Path(f).stem: f for f in files}
    if sorted(found) != sorted(QUESTIONS) or len(found) != len(files):
        raise ValueError(
            f"expected one file per question {list(QUESTIONS)}, named after it; found {files}"
        )
    return {question: found[question] for question in QUESTIONS}


def _spearman(x: pd.Series, y: pd.Series) -> float:
    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def _change(run: pd.DataFrame, column: str) -> float:
    return float(run[column].iloc[-1] - run[column].iloc[0])


def _rows(question: str, setup: str, item: str, seed: int, values: dict) -> list[dict]:
    where = {"question": question, "setup": setup, "item": item}
    return [
        {**where, "quantity": q, "seed": int(seed), "value": float(v)} for q, v in values.items()
    ]


def criteria_seeds(traces: pd.DataFrame) -> pd.DataFrame:
    """Per seed of each linear run (columns setup, seed, step, isoscore, silhouette and the
    criteria): each criterion's change, Spearman ρ with IsoScore and, oriented so that higher
    is better, with the silhouette, the step of its optimum beside the silhouette's, their
    distance in updates (0: the same optimum among the recorded steps) and the last recorded
    step (both optima there, or both at step 0: the run cannot tell whether they differ; the
    claims page's ``mark_undecided`` says so)."""
    rows = []
    for (setup, seed), run in traces.sort_values("step").groupby(["setup", "seed"], sort=False):
        best_silhouette = int(run["step"].iloc[int(run["silhouette"].to_numpy().argmax())])
        for name in ("silhouette", *CRITERIA):
            if name not in run:
                continue
            oriented = registry.orientation(name) * run[name]
            values = {
                "change": _change(run, name),
                "rho_isoscore": _spearman(run[name], run["isoscore"]),
                "optimum_step": int(run["step"].iloc[int(oriented.to_numpy().argmax())]),
                "silhouette_optimum_step": best_silhouette,
                "last_step": int(run["step"].iloc[-1]),
            }
            if name != "silhouette":
                values["rho_silhouette"] = _spearman(oriented, run["silhouette"])
                values["optimum_distance"] = abs(values["optimum_step"] - best_silhouette)
            rows += _rows("criteria", setup, name, seed, values)
    return pd.DataFrame(rows, columns=SEED_COLUMNS)


def deep_seeds(traces: pd.DataFrame) -> pd.DataFrame:
    """Per seed of each deep (and linear) run: IsoScore and silhouette change of every layer
    (``table``: the embedding table, and the silhouette of the items' representations;
    ``h<l>``: hidden layer l), the top hidden layer's, and the largest IsoScore change below it."""
    rows = []
    runs = traces.sort_values("step").groupby(["setup", "head", "seed"], sort=False)
    for (setup, head, seed), run in runs:
        recorded = [c for c in run if c.startswith("isoscore_h") and run[c].notna().all()]
        layers = sorted(int(c[len("isoscore_h") :]) for c in recorded)
        changes = {"table": (_change(run, "isoscore"), _change(run, "silhouette"))}
        for k in layers:
            changes[f"h{k}"] = (_change(run, f"isoscore_h{k}"), _change(run, f"silhouette_h{k}"))
        for layer, (iso, sil) in changes.items():
            values = {"isoscore_change": iso, "silhouette_change": sil}
            rows += _rows("deep", setup, f"{head}/{layer}", seed, values)
        if layers:
            top, below = f"h{layers[-1]}", ["table", *[f"h{k}" for k in layers[:-1]]]
            summary = {
                "top_isoscore_change": changes[top][0],
                "lower_isoscore_change_max": max(changes[b][0] for b in below),
            }
            rows += _rows("deep", setup, f"{head}/summary", seed, summary)
    return pd.DataFrame(rows, columns=SEED_COLUMNS)


def triplet_seeds(traces: pd.DataFrame) -> pd.DataFrame:
    """Per seed of each triplet run: IsoScore and silhouette change and their Spearman ρ."""
    rows = []
    for (setup, seed), run in traces.sort_values("step").groupby(["setup", "seed"], sort=False):
        values = {
            "isoscore_change": _change(run, "isoscore"),
            "silhouette_change": _change(run, "silhouette"),
            "rho_isoscore": _spearman(run["silhouette"], run["isoscore"]),
            "final_isoscore": float(run["isoscore"].iloc[-1]),
        }
        rows += _rows("triplet", setup, "triplet", seed, values)
    return pd.DataFrame(rows, columns=SEED_COLUMNS)


def heldout_seeds(epochs: pd.DataFrame) -> pd.DataFrame:
    """Per seed of each fine-tuning run (columns setup, seed, epoch, heldout_*, train_*): the
    change from epoch 0 to the last epoch of held-out and training IsoScore and silhouette, the
    held-out accuracy reached, and the epochs run."""
    rows = []
    for (setup, seed), run in epochs.sort_values("epoch").groupby(["setup", "seed"], sort=False):
        for part in ("heldout", "train"):
            values = {
                "isoscore_change": _change(run, f"{part}_isoscore"),
                "silhouette_change": _change(run, f"{part}_silhouette"),
                "final_accuracy": float(run[f"{part}_accuracy"].iloc[-1]),
            }
            rows += _rows("heldout", setup, part, seed, values)
        run_values = {"epochs": float(run["epoch"].max())}
        if "heldout_majority" in run:  # the learning guard's inputs (older runs lack them)
            run_values["majority_baseline"] = float(run["heldout_majority"].iloc[0])
            run_values["heldout_items"] = float(run["heldout_items"].iloc[0])
        rows += _rows("heldout", setup, "run", seed, run_values)
    return pd.DataFrame(rows, columns=SEED_COLUMNS)


def question_table(seeds: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """One row per setup × item × quantity: every seed's value, the estimate and its interval."""
    rows = []
    for (setup, item, quantity), group in seeds.groupby(["setup", "item", "quantity"], sort=False):
        group = group.sort_values("seed")
        values = group["value"].tolist()
        if quantity in CORRELATIONS:
            found = seed_interval(values, level)
            estimate, low, high, count = found.estimate, found.low, found.high, found.seeds
        else:
            estimate, low, high, count = mean_interval(values, level)
        how = "Fisher z t-interval" if quantity in CORRELATIONS else "t-interval of the mean"
        row = {"setup": setup, "item": item, "quantity": quantity}
        row |= {f"seed{int(s)}": v for s, v in zip(group["seed"], values)}
        interval = f"{100 * level:g}% {how} over {count} seeds"
        row |= {"estimate": estimate, "low": low, "high": high, "interval": interval}
        rows.append(row)
    return pd.DataFrame(rows)


# The main paper's open questions as claims about per-seed values (judged by
# isotropy.verdicts.claims.check_claims; the study's record: isotropy.studies.extensions).
_OPEN = "Mickus et al. 2024, Limitations"


def _claim(name, statement, bound, paper, sesoi=TREND_SESOI, source=TREND_SOURCE, **more):
    """A claim of this study, judged by direction on the per-seed values of its name."""
    more |= {"sesoi": sesoi, "sesoi_source": source}
    return Claim(name, "extensions", name, statement, bound, paper, "direction", **more)


CLAIMS = [
    _claim(
        "criteria_same_optimum",
        "the criterion (oriented: higher = better clusters) is at its best at the recorded update"
        " where the silhouette is: |update of its optimum - update of the silhouette's| < 1,"
        " over the layouts the linear head's optimisation visits (the criterion is not itself"
        " optimised)",
        "below:1",
        f"{_OPEN} (choice of objectives: 'imply the same optimum layout as Equation 4')",
        0.0,
        "the bound's",
    ),
    _claim(
        "deep_output_anisotropic",
        "a deep head's output embeddings (its top hidden layer, input of its linear classifier)"
        " become less isotropic over the optimisation (IsoScore last - step 0 < 0)",
        "below:0",
        f"{_OPEN} (deep classifiers: output embeddings 'would tend to be anisotropic')",
    ),
    _claim(
        "anisotropy_spreads_down",
        "anisotropy reaches every layer below the top, to some extent: each lower hidden"
        " layer's and the table's IsoScore falls, by any amount (largest change < 0)",
        "below:0",
        f"{_OPEN} (deep classifiers: 'spread to bottom layers to some extent')",
        0.0,
        "the claim's words",
    ),
    _claim(
        "triplet_need_not_be_anisotropic",
        "triplet training does not necessarily make the table anisotropic: in at least one"
        " setup the table's IsoScore does not fall (last - step 0 > 0) by the test over seeds;"
        " not supported = every setup falls (no such setup here, which cannot refute 'need not')",
        "above:0",
        "Mickus et al. 2024, appendix B ('does not entail ... will necessarily develop"
        " anisotropic representations')",
        0.0,
        "the claim's words",
        scope="any setup",
    ),
    _claim(
        "heldout_isoscore_follows",
        "fine-tuned end to end until the stated convergence (or max_epochs), the held-out"
        " sentences' IsoScore falls, the trained items' direction in the paper's argument"
        " (last epoch - epoch 0 < 0)",
        "below:0",
        f"{_OPEN} (idealised conditions: 'trained until convergence on held out data')",
    ),
    _claim(
        "heldout_silhouette_follows",
        "fine-tuned end to end until the stated convergence (or max_epochs), the held-out"
        " sentences' silhouette rises, the trained items' direction in the paper's argument"
        " (last epoch - epoch 0 > 0)",
        "above:0",
        f"{_OPEN} (idealised conditions: 'trained until convergence on held out data')",
    ),
]


# Which per-seed values each claim of the extension study is judged on (:data:`CLAIMS`):
# claim -> (question, its items (a regular expression), quantity). The claim's setup is
# "<setup>/<item>".
CLAIM_QUANTITIES = {
    "criteria_same_optimum": ("criteria", "|".join(CRITERIA), "optimum_distance"),
    "deep_output_anisotropic": ("deep", ".*/summary", "top_isoscore_change"),
    "anisotropy_spreads_down": ("deep", ".*/summary", "lower_isoscore_change_max"),
    "triplet_need_not_be_anisotropic": ("triplet", "triplet", "isoscore_change"),
    "heldout_isoscore_follows": ("heldout", "heldout", "isoscore_change"),
    "heldout_silhouette_follows": ("heldout", "heldout", "silhouette_change"),
}


def claim_values(seeds: pd.DataFrame, last_step: int | None = None) -> pd.DataFrame:
    """Per-seed values of every claim: columns claim, setup, seed, value, undecided.

    ``undecided`` marks a same-optimum seed whose criterion and silhouette are both best at the
    first recorded step (step 0, before any update) or both at the last (``last_step`` rows of
    the values, or the ``last_step`` given for values recorded before they had them): neither
    turns within the run, so their distance 0 says nothing; its value is left out (NaN) and the
    claims page's ``mark_undecided`` says so."""
    frames = []
    for claim, (question, wanted, quantity) in CLAIM_QUANTITIES.items():
        picked = seeds[(seeds["question"] == question) & (seeds["quantity"] == quantity)]
        picked = picked.loc[picked["item"].astype(str).str.fullmatch(wanted)]
        setup = picked["setup"] + "/" + picked["item"].str.replace("/summary", "")
        values = {"claim": claim, "setup": setup, "seed": picked["seed"], "value": picked["value"]}
        frame = pd.DataFrame(values).assign(undecided=False)
        if claim == "criteria_same_optimum" and len(frame):
            at_end = _optima_at_an_end(seeds, last_step).reindex(
                pd.MultiIndex.from_arrays([picked["setup"], picked["item"], picked["seed"]])
            )
            frame["undecided"] = at_end.to_numpy(dtype=bool)
            frame.loc[frame["undecided"], "value"] = math.nan
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _optima_at_an_end(seeds: pd.DataFrame, last_step: int | None) -> pd.Series:
    """Per (setup, criterion, seed): True when the criterion's and the silhouette's optima both
    sit at the first recorded step (0) or both at the last."""
    criteria = seeds[(seeds["question"] == "criteria") & seeds["item"].isin(CRITERIA)]
    wide = criteria.pivot_table("value", ["setup", "item", "seed"], "quantity")
    if "last_step" in wide:
        last = wide["last_step"]
    elif last_step is None:
        raise ValueError(
            "the criteria values lack last_step (made before it was recorded): re-run rule "
            "extensions_tables, or give the run's last recorded update"
        )
    else:
        last = pd.Series(float(last_step), wide.index)
    at_an_end = (wide["optimum_step"] == 0) | (wide["optimum_step"] == last)
    return at_an_end & (wide["optimum_step"] == wide["silhouette_optimum_step"])
