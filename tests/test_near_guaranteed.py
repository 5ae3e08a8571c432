"""A Spearman ρ that passes its bound is near-guaranteed (ρ = ±1 for any two strictly monotone
series) and is no evidence: every page that shows one says so, and no count of passes holds it.
Each test plants a passing ρ in a real table and fails if it is counted."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from isotropy.reporting import summary_html
from isotropy.studies.istar import CLAIMS as ISTAR_CLAIMS
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.claims import _judge_claim, claims_markdown, verdict_cells
from isotropy.verdicts.comparison import comparison_markdown
from isotropy.verdicts.measurements import seed_test
from isotropy.verdicts.measurements.istar import ISTAR_QUANTITIES
from isotropy.verdicts.measurements.optimisation import MAIN_CLAIMS
from isotropy.verdicts.tolerances import settle_claim

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "results"


def planted_comparison() -> pd.DataFrame:
    """The tiny run's comparison with its first Spearman ρ row set to *consistent*."""
    table = pd.read_csv(GOLDEN / "paper_comparison.csv", keep_default_na=False)
    table["our_value"] = pd.to_numeric(table["our_value"], errors="coerce")
    assert not (table["verdict"] == T.CONSISTENT).any()  # the planted row is the only one
    first = table.index[table["quantity"] == "spearman_rho"][0]
    table.loc[first, "verdict"] = T.CONSISTENT
    return table


def planted_claims() -> pd.DataFrame:
    """The tiny run's claims with the main study's ρ claim on polarity set to *supported*."""
    table = pd.read_csv(GOLDEN / "claims.csv", keep_default_na=False)
    table["measured"] = pd.to_numeric(table["measured"], errors="coerce")
    rho = (table["claim"] == "spearman_strongly_negative") & (table["setup"] == "miniLM/polarity")
    table.loc[rho & (table["study"] == "main"), "verdict"] = "supported"
    return table


def flat(rng, seeds):
    """No change over updates: each seed's last − first step is seed noise."""
    return rng.normal(0.0, 0.02, seeds)


def exponential_pair(rng, seeds, correlation):
    """An exponential fall of IsoScore and rise of silhouette, independent noise, at the
    observed time constants (ratio 0.5): each seed's r or ρ."""
    t = np.arange(20.0)
    iso = np.exp(-t / 10) + rng.normal(0, 5e-4, (seeds, 20))
    sil = -np.exp(-t / 5) + rng.normal(0, 5e-4, (seeds, 20))
    return [correlation(a, b)[0] for a, b in zip(iso, sil)]


def penalty_target(rng, seeds):
    """I-STAR's own target: λ < 0 pulls IsoScore* down and does nothing else (paired runs)."""
    base = pd.DataFrame({"seed": range(seeds), "isoscore_star": rng.normal(0.01, 0.002, seeds)})
    base["metric"] = rng.normal(0.8, 0.02, seeds)
    pulled = base.assign(isoscore_star=base["isoscore_star"] - rng.uniform(0.002, 0.01, seeds))
    return pulled.assign(metric=rng.normal(0.8, 0.02, seeds)), base


# Each claim kind's null: per-seed values, or (treated, baseline) runs for a test over seeds.
NULLS = {
    "silhouette_rises": flat,
    "isoscore_falls": flat,
    "spearman_strongly_negative": lambda rng, n: exponential_pair(rng, n, stats.spearmanr),
    "pearson_negative": lambda rng, n: exponential_pair(rng, n, stats.pearsonr),
    "negative_lambda_lowers_isoscore": penalty_target,
    "negative_lambda_improves_task": penalty_target,
}
CLAIMS = {c.name: c for c in (*MAIN_CLAIMS, *ISTAR_CLAIMS) if c.name in NULLS}


def supported_under_null(claim, draws=200, seeds=3) -> float:
    """How often ``claim`` reads *supported* on its null through the claims' judge."""
    rng, supported = np.random.default_rng(93), 0
    for _ in range(draws):
        null = NULLS[claim.name](rng, seeds)
        m = pd.Series({"per_seed": null})
        if claim.rule == "seeds":
            column = ISTAR_QUANTITIES[claim.quantity]
            _, n, low, high, values = seed_test(*null, column[0], column[2])
            m = pd.Series({"per_seed": values, "seeds": n, "p_less": low, "p_greater": high})
        verdict, _, test = _judge_claim(claim, m)
        tested = test is not None and settle_claim(*test[:2]) is True
        supported += verdict == "supported" or tested
    return supported / draws


def test_the_declared_near_guaranteed_claims_are_those_their_null_supports():
    """A claim that reads *supported* in over 5% of its planted null is marked, and only then."""
    assert set(CLAIMS) == set(NULLS)
    rates = {name: supported_under_null(claim) for name, claim in CLAIMS.items()}
    found = {name for name, rate in rates.items() if rate > 0.05}
    assert found == T.NEAR_GUARANTEED_ROWS & set(CLAIMS), rates
    rho = {"quantity": "spearman_rho", "verdict": T.CONSISTENT}
    assert T.near_guaranteed(rho) and not T.near_guaranteed(rho | {"verdict": "not consistent"})


def test_the_comparison_page_does_not_count_a_passing_spearman_row():
    page = comparison_markdown(planted_comparison())
    counts = re.search(r"Verdicts: (.+)\.", page).group(1)
    assert "0 consistent" in counts and "4 not consistent" in counts  # the failures still count
    assert f"1 {T.NEAR_GUARANTEED}" in counts
    assert f"**consistent** ({T.NEAR_GUARANTEED})" in page


def test_the_claims_page_does_not_count_a_passing_spearman_claim():
    page = claims_markdown(planted_claims())
    tally = next(line for line in page.splitlines() if line.startswith("✅"))
    assert tally.startswith("✅ supported: 0 ·")  # the supported Pearson r is near-guaranteed too
    assert tally.endswith(f"not counted ({T.WHY_NEAR_GUARANTEED}): 2")
    assert f"✅ supported ({T.NEAR_GUARANTEED})" in page
    # the glue page's cells come from the same function
    assert sum(T.NEAR_GUARANTEED in cell for cell in verdict_cells(planted_claims())) == 2


def test_the_report_summary_does_not_count_a_passing_spearman_row():
    """The committed protocol run's two passing ρ rows (docs/data/main_verdicts.csv) and the
    planted ones, through the marking the report's script applies."""
    committed = pd.read_csv(ROOT / "docs" / "data" / "main_verdicts.csv")
    assert len(committed.query("quantity == 'spearman_rho' and verdict == 'consistent'"))
    page = summary_html(
        T.marked(planted_claims()), T.marked(planted_comparison()), T.marked(committed)
    )
    replicated = re.search(r"judged on .*?: replicated: ([^;]+);", page).group(1)
    assert "Spearman" not in replicated and "Pearson r on miniLM/polarity" in replicated
    assert "replicated: 0;" in page  # this run: its ρ and r claims are both near-guaranteed
    script = (ROOT / "scripts" / "report_overview.py").read_text(encoding="utf-8")
    for table in ("pd.read_csv(snakemake.input.claims)", "as_shown(comparison)"):
        assert f"marked({table})" in script
    assert "committed=marked(" in script and "undrawn=marked(" in script
