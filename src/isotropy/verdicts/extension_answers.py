"""The extension study's answers in the docs, generated from its per-seed values, never typed.

``docs/data/extensions_seeds.csv`` is a copy of a run's ``results/extensions/seeds.csv`` and
``docs/data/extensions_run.json`` says which run it is. From them :func:`answers_markdown`
renders the answers table of docs/extensions.md (between :data:`START` and :data:`END`) and
:func:`readme_line` the README's one-line summary; ``tests/test_extensions_answers.py`` fails
when either page differs from what the data render. After a new run::

    python -m isotropy.verdicts.extension_answers results/extensions/seeds.csv --run "what ran"

copies the values and rewrites both pages (with no argument: rewrites them from the committed
values).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path

import pandas as pd

from isotropy.extensions import results
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.io import markers, write_block
from isotropy.verdicts.claims import (
    NOT_DECIDED,
    NOT_SUPPORTED,
    check_seed_claims,
    mark_undecided,
)
from isotropy.verdicts.learning import guard_heldout_claims

ROOT = Path(__file__).resolve().parents[3]
SEEDS = Path("docs/data/extensions_seeds.csv")
RUN = Path("docs/data/extensions_run.json")
DOC = Path("docs/extensions.md")
README = Path("README.md")
COMMAND = "python -m isotropy.verdicts.extension_answers"
START, END = markers("extensions answers", COMMAND)
README_START, README_END = markers("extensions answers line", COMMAND)

# The question each claim answers, in the order of the paper's open questions.
QUESTIONS = {
    "criteria_same_optimum": "other criteria",
    "deep_output_anisotropic": "deep classifier",
    "anisotropy_spreads_down": "deep classifier",
    "triplet_need_not_be_anisotropic": "triplet loss",
    "heldout_isoscore_follows": "held-out data",
    "heldout_silhouette_follows": "held-out data",
}
# Context beside each claim's value: (question, item filter, quantity, what it is).
CONTEXT = [
    ("criteria", results.CRITERIA, "rho_silhouette", "Spearman ρ with the silhouette"),
    ("deep", None, "isoscore_change", "IsoScore change per layer"),
    ("triplet", ("triplet",), "silhouette_change", "silhouette change"),
    ("heldout", ("heldout", "train"), "final_accuracy", "accuracy at the last epoch"),
    ("heldout", ("train",), "isoscore_change", "IsoScore change"),
    ("heldout", ("run",), "epochs", "epochs run"),
]


# What a verdict cannot say, beside it on both pages: (claim, verdict) -> caveat.
CAVEATS = {
    ("triplet_need_not_be_anisotropic", NOT_SUPPORTED): (
        "every setup's IsoScore fell, which cannot refute 'need not': another setup may keep it"
    ),
    ("criteria_same_optimum", NOT_DECIDED): (
        "both optima at the same end of the run in every seed (its first or last recorded "
        "update): neither turns within it"
    ),
}


def caveat(claim: str, verdict: str) -> str:
    """The caveat a claim's verdict carries on both pages ('' when none)."""
    return CAVEATS.get((claim, verdict), "")


def _number(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.3g}"


def _interval(values: list[float]) -> str:
    estimate, low, high = results.mean_interval(values)
    if low is None or high is None:
        return _number(estimate)
    return f"{_number(estimate)} [{_number(low)}, {_number(high)}]"


def judged_claims(seeds: pd.DataFrame) -> pd.DataFrame:
    """The study's claims from its per-seed values, guarded: its own page (rule
    extensions_tables), its family on the claims page (its record's ``claim_page``) and the
    answers below."""
    values = results.claim_values(seeds)
    claims = mark_undecided(check_seed_claims(values, EXTENSION_CLAIMS, "extensions"), values)
    return guard_heldout_claims(claims, seeds)


def claims_table(seeds: pd.DataFrame) -> pd.DataFrame:
    """Every claim row (:func:`judged_claims`) with its per-seed values and their mean's
    interval."""
    values, claims = results.claim_values(seeds), judged_claims(seeds)
    intervals = []
    for row in claims.itertuples(index=False):
        ours = values[values["claim"] == row.claim]
        if row.setup != "any setup":
            ours = ours[ours["setup"] == row.setup]
        spans = [
            (setup, _interval(group.sort_values("seed")["value"].tolist()))
            for setup, group in ours.groupby("setup", sort=False)
        ]
        if row.setup == "any setup":
            intervals.append("; ".join(f"{setup}: {span}" for setup, span in spans))
        else:
            intervals.append(spans[0][1] if spans else "–")
    # claims in their stated order, each one's setups by name (the run's order is the jobs')
    order = {claim.name: i for i, claim in enumerate(EXTENSION_CLAIMS)}
    ranked = claims.assign(interval=intervals, rank=claims["claim"].map(order))
    ranked = ranked.sort_values(["rank", "setup"], kind="stable")
    return ranked.drop(columns="rank").reset_index(drop=True)


def _claim_lines(seeds: pd.DataFrame) -> list[str]:
    statements = {c.name: c.statement for c in EXTENSION_CLAIMS}
    lines = [
        "| claim | setup | mean [95% t-interval] | verdict | caveat |",
        "|---|---|---|---|---|",
    ]
    said = set()  # a caveat once, where its claim's rows begin
    for row in claims_table(seeds).itertuples(index=False):
        interval = row.interval
        if row.verdict == NOT_DECIDED:  # every seed left out: no value to show
            interval = "–"
        note = caveat(row.claim, row.verdict)
        shown = "–" if not note else ("as above" if note in said else note)
        said.add(note)
        cells = [f"`{row.claim}`", row.setup, interval, f"*{row.verdict}*", shown]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("What each claim judges (its statement in `claims.csv`):")
    lines.append("")
    lines += [f"- `{name}`: {statement}." for name, statement in statements.items()]
    return lines


def _context_lines(seeds: pd.DataFrame) -> list[str]:
    lines = ["| setup | item | quantity | mean [95% interval] |", "|---|---|---|---|"]
    for question, items, quantity, what in CONTEXT:
        ours = seeds[(seeds["question"] == question) & (seeds["quantity"] == quantity)]
        if items is not None:
            ours = ours[ours["item"].isin(items)]
        for (setup, item), group in ours.groupby(["setup", "item"]):
            values = group.sort_values("seed")["value"].tolist()
            if quantity in results.CORRELATIONS:
                found = results.seed_interval(values, 0.95)
                low, high = found.low, found.high
                span = f"{_number(found.estimate)} [{_number(low)}, {_number(high)}]"
            else:
                span = _interval(values)
            lines.append(f"| {setup} | {item} | {what} | {span} |")
    return lines


def answers_markdown(seeds: pd.DataFrame, run: dict) -> str:
    """The generated block of docs/extensions.md (between :data:`START` and :data:`END`): the
    run, every claim row, the context."""
    counts = seeds.groupby("question")["seed"].nunique().to_dict()
    ran = ", ".join(f"{q}: {counts[q]} seeds" for q in results_order(counts))
    lines = [
        f"Run: {run['run']}. Per-seed values: `{SEEDS.as_posix()}` ({ran}).",
        "",
        *_claim_lines(seeds),
        "",
        "Context from the same run (intervals over seeds: correlations by the Fisher z"
        " t-interval, other quantities by the t-interval of the mean):",
        "",
        *_context_lines(seeds),
    ]
    return "\n".join(lines) + "\n"


def results_order(counts: dict) -> list[str]:
    """The questions present, in the study's order."""
    return [q for q in ("criteria", "deep", "triplet", "heldout") if q in counts]


def readme_line(seeds: pd.DataFrame) -> str:
    """The README's one-line summary: each claim's verdicts over its rows, each with the caveat
    it carries in docs/extensions.md (:func:`caveat`)."""
    table = claims_table(seeds)
    parts = []
    for claim in QUESTIONS:
        verdicts = table.loc[table["claim"] == claim, "verdict"].value_counts()
        said = ", ".join(
            f"{verdict} ×{count}"
            + (f" ({caveat(claim, verdict)})" if caveat(claim, verdict) else "")
            for verdict, count in verdicts.items()
        )
        parts.append(f"`{claim}` {said}")
    link = "[docs/extensions.md](docs/extensions.md#answers-of-the-last-run)"
    listed = "; ".join(parts)
    return f"Answers of the last run (verdict × rows; values and intervals in {link}): {listed}.\n"


def load(root: Path = ROOT) -> tuple[pd.DataFrame, dict]:
    """The committed per-seed values and the record of their run. Values recorded before the
    criteria rows had their last recorded step get it from the record (``last_step``)."""
    seeds = pd.read_csv(root / SEEDS)
    run = json.loads((root / RUN).read_text(encoding="utf-8"))
    criteria = seeds[(seeds["question"] == "criteria") & (seeds["quantity"] == "optimum_step")]
    if "last_step" in run and not (seeds["quantity"] == "last_step").any() and len(criteria):
        last = criteria.assign(quantity="last_step", value=float(run["last_step"]))
        seeds = pd.concat([seeds, last], ignore_index=True)
    return seeds, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seeds", type=Path, nargs="?", help="a run's results/extensions/seeds.csv")
    parser.add_argument("--run", help="what ran and when (one sentence; with seeds)")
    args = parser.parse_args(argv)
    if args.seeds:
        if not args.run:
            parser.error("new seeds need --run: what ran and when")
        (ROOT / SEEDS).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.seeds, ROOT / SEEDS)
        (ROOT / RUN).write_text(json.dumps({"run": args.run}, indent=2) + "\n", encoding="utf-8")
    seeds, run = load()
    write_block(ROOT / DOC, answers_markdown(seeds, run), START, END)
    write_block(ROOT / README, readme_line(seeds), README_START, README_END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
