"""The extension study's claims judged on its per-seed values, each with its mean's interval."""

from __future__ import annotations

import math

import pandas as pd

from isotropy.extensions import results
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.verdicts.claims import check_seed_claims, mark_undecided
from isotropy.verdicts.learning import guard_heldout_claims


def _interval(values: list[float]) -> str:
    """The seeds' mean and its 95% t-interval as the page prints them."""
    found = results.mean_interval(values)
    shown = ["–" if v is None or not math.isfinite(v) else f"{v:.3g}" for v in found]
    return shown[0] if None in found[1:] else f"{shown[0]} [{shown[1]}, {shown[2]}]"


def judged_claims(seeds: pd.DataFrame) -> pd.DataFrame:
    """The study's claims from its per-seed values, guarded."""
    values = results.claim_values(seeds)
    claims = mark_undecided(check_seed_claims(values, EXTENSION_CLAIMS, "extensions"), values)
    return guard_heldout_claims(claims, seeds)


def claims_table(seeds: pd.DataFrame) -> pd.DataFrame:
    """Every claim row with its per-seed values' mean and interval."""
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
