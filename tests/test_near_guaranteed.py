"""A Spearman ρ that passes its bound is near-guaranteed (ρ = ±1 for any two strictly monotone
series) and is no evidence: every page that shows one says so, and no count of passes holds it.
Each test plants a passing ρ in a real table and fails if it is counted."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from isotropy.reporting import summary_html
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.claims import claims_markdown, verdict_cells
from isotropy.verdicts.comparison import comparison_markdown

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


def test_only_a_passing_spearman_row_is_near_guaranteed():
    rho = {"quantity": "spearman_rho", "verdict": T.CONSISTENT}
    assert T.near_guaranteed(rho)
    assert T.near_guaranteed({"claim": "spearman_strongly_negative", "verdict": "supported"})
    assert not T.near_guaranteed(rho | {"verdict": T.NOT_CONSISTENT})  # a failure is evidence
    assert not T.near_guaranteed(rho | {"quantity": "pearson_r"})


def test_the_comparison_page_does_not_count_a_passing_spearman_row():
    page = comparison_markdown(planted_comparison())
    counts = re.search(r"Verdicts: (.+)\.", page).group(1)
    assert "0 consistent" in counts and "4 not consistent" in counts  # the failures still count
    assert f"1 {T.NEAR_GUARANTEED}" in counts
    assert f"**consistent** ({T.NEAR_GUARANTEED})" in page


def test_the_claims_page_does_not_count_a_passing_spearman_claim():
    page = claims_markdown(planted_claims())
    tally = next(line for line in page.splitlines() if line.startswith("✅"))
    assert tally.startswith("✅ supported: 1 ·")  # the one supported claim that is evidence
    assert tally.endswith(f"not counted ({T.WHY_NEAR_GUARANTEED}): 1")
    assert f"✅ supported ({T.NEAR_GUARANTEED})" in page
    # the glue page's cells come from the same function
    assert sum(T.NEAR_GUARANTEED in cell for cell in verdict_cells(planted_claims())) == 1


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
    assert "replicated: 1;" in page  # this run: only the claim that is evidence
    script = (ROOT / "scripts" / "report_overview.py").read_text(encoding="utf-8")
    for table in ("pd.read_csv(snakemake.input.claims)", "as_shown(comparison)"):
        assert f"marked({table})" in script
    assert "committed=marked(" in script and "undrawn=marked(" in script
