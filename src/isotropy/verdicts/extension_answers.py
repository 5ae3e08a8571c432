"""The extension study's claims judged on its per-seed values, each with its mean's interval."""

from __future__ import annotations

import math

import pandas as pd

from isotropy import statistics
from isotropy.extensions import results
from isotropy.verdicts.claims import check_claims, mark_undecided
from isotropy.verdicts.learning import guard_heldout_claims


def judged_claims(seeds: pd.DataFrame) -> pd.DataFrame:
    """The study's claims from its per-seed values, guarded."""
    values = results.claim_values(seeds)
    claims = mark_undecided(check_claims(values, None, results.CLAIMS), values)
    return guard_heldout_claims(claims, seeds)


def claims_table(seeds: pd.DataFrame) -> pd.DataFrame:
    """Every claim row with its seeds' mean and 95% t-interval, as the page prints them."""
    values, claims = results.claim_values(seeds), judged_claims(seeds)
    spans: dict[tuple[str, str], str] = {}  # by (claim, setup), and each setup's at "any setup"
    for (claim, setup), group in values.groupby(["claim", "setup"], sort=False):
        found = statistics.mean_interval(group.sort_values("seed")["value"].tolist())
        shown = ["–" if v is None or not math.isfinite(v) else f"{v:.3g}" for v in found]
        span = shown[0] if None in found[1:] else f"{shown[0]} [{shown[1]}, {shown[2]}]"
        spans[claim, setup] = span
        every = spans.get((claim, "any setup"))
        spans[claim, "any setup"] = f"{every}; {setup}: {span}" if every else f"{setup}: {span}"
    intervals = [spans.get((row.claim, row.setup), "–") for row in claims.itertuples(index=False)]
    # claims in their stated order, each one's setups by name (the run's order is the jobs')
    order = {claim.name: i for i, claim in enumerate(results.CLAIMS)}
    ranked = claims.assign(interval=intervals, rank=claims["claim"].map(order))
    ranked = ranked.sort_values(["rank", "setup"], kind="stable")
    return ranked.drop(columns="rank").reset_index(drop=True)
