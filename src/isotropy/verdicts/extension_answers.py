"""The extension study's answers in docs/extensions.md, generated from its per-seed values, never
typed.

``docs/data/extensions_seeds.csv`` is a copy of a run's ``results/extensions/seeds.csv`` and
``docs/data/extensions_run.json`` says which run it is. From them :func:`answers_markdown`
renders the answers table of docs/extensions.md (between :data:`START` and :data:`END`);
``tests/test_extensions_answers.py`` fails when the page differs from what the data render. After a
new run::

    python -m isotropy.verdicts.extension_answers results/extensions/seeds.csv --run "what ran"

copies the values and rewrites the page (with no argument: rewrites it from the committed values).
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
from isotropy.io import markdown_table, markers, write_block
from isotropy.verdicts.claims import NOT_DECIDED, check_seed_claims, mark_undecided
from isotropy.verdicts.learning import guard_heldout_claims

ROOT = Path(__file__).resolve().parents[3]
SEEDS = Path("docs/data/extensions_seeds.csv")
RUN = Path("docs/data/extensions_run.json")
DOC = Path("docs/extensions.md")
START, END = markers("extensions answers", "python -m isotropy.verdicts.extension_answers")


def _interval(values: list[float]) -> str:
    """The seeds' mean and its 95% t-interval (none with one seed) as the page prints them."""
    found = results.mean_interval(values)
    shown = ["–" if v is None or not math.isfinite(v) else f"{v:.3g}" for v in found]
    return shown[0] if None in found[1:] else f"{shown[0]} [{shown[1]}, {shown[2]}]"


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
        spans = {
            setup: _interval(group.sort_values("seed")["value"].tolist())
            for setup, group in ours.groupby("setup", sort=False)
        }
        if row.setup == "any setup":
            spans = {setup: f"{setup}: {span}" for setup, span in spans.items()}
        intervals.append("; ".join(spans.values()) or "–")
    # claims in their stated order, each one's setups by name (the run's order is the jobs')
    order = {claim.name: i for i, claim in enumerate(EXTENSION_CLAIMS)}
    ranked = claims.assign(interval=intervals, rank=claims["claim"].map(order))
    ranked = ranked.sort_values(["rank", "setup"], kind="stable")
    return ranked.drop(columns="rank").reset_index(drop=True)


def answers_markdown(seeds: pd.DataFrame, run: dict) -> str:
    """The generated block of docs/extensions.md (between :data:`START` and :data:`END`): the
    run, then every claim row with its mean's interval and its verdict."""
    counts = seeds.groupby("question", sort=False)["seed"].nunique().to_dict()
    table = claims_table(seeds)
    shown = pd.DataFrame(
        {
            "claim": "`" + table["claim"] + "`",
            "setup": table["setup"],
            "mean [95% t-interval]": table["interval"].where(table["verdict"] != NOT_DECIDED, "–"),
            "verdict": "*" + table["verdict"] + "*",
        }
    )
    ran = ", ".join(f"{question}: {n} seeds" for question, n in counts.items())
    head = f"Run: {run['run']}. Per-seed values: `{SEEDS.as_posix()}` ({ran})."
    return f"{head}\n\n{markdown_table(shown)}"


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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
