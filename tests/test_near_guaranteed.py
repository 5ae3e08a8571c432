"""A claim that reads supported in over 5% of its planted null (flat traces, exponential pairs
at the committed time constants, the penalty's own target) is near-guaranteed and no evidence:
every page that shows one says so, and no count of passes holds it."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from isotropy import statistics as st
from isotropy.reporting import summary_html
from isotropy.statistics import SUPPORTED
from isotropy.studies.istar import CLAIMS as ISTAR_CLAIMS
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.claims import _judge_claim, claims_markdown, verdict_cells
from isotropy.verdicts.comparison import comparison_markdown
from isotropy.verdicts.measurements import seed_test
from isotropy.verdicts.measurements.istar import ISTAR_QUANTITIES
from isotropy.verdicts.measurements.optimisation import MAIN_CLAIMS, _spread_row
from isotropy.verdicts.tolerances import settle

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "results"


def planted_comparison() -> pd.DataFrame:
    """The tiny run's comparison with its first Spearman ρ row set to *consistent*."""
    table = pd.read_csv(GOLDEN / "paper_comparison.csv", keep_default_na=False)
    table["our_value"] = pd.to_numeric(table["our_value"], errors="coerce")
    assert not (table["verdict"] == st.CONSISTENT).any()  # the planted row is the only one
    first = table.index[table["quantity"] == "spearman_rho"][0]
    table.loc[first, "verdict"] = st.CONSISTENT
    return table


def planted_claims() -> pd.DataFrame:
    """The tiny run's claims with the main study's ρ and r claims on polarity *supported*."""
    table = pd.read_csv(GOLDEN / "claims.csv", keep_default_na=False)
    table["measured"] = pd.to_numeric(table["measured"], errors="coerce")
    rho = table["claim"].str.contains("negative") & (table["setup"] == "miniLM/polarity")
    table.loc[rho & (table["study"] == "main"), "verdict"] = "supported"
    return table


def flat(rng, seeds):
    """No change from identical starts: each seed's change, and the study's spread measure."""
    ends = {m: pd.DataFrame({"first": 0.0, "last": rng.normal(0, 0.02, seeds)}) for m in NAMES}
    spread = _spread_row(ends, seeds, lambda _, **row: row)
    return {**spread, "per_seed": ends["isoscore"]["last"], "seeds": seeds}


def exponential_pair(rng, seeds, correlation):
    """IsoScore's exponential fall and the silhouette's rise, independent, at a committed setup's
    updates and time constants, noise 0.002 of the change (the traces': ≤ 0.0014): r or ρ."""
    steps, *taus = TAUS[rng.integers(len(TAUS))]
    t, noise = np.arange(float(steps)), rng.normal(0, 2e-3, (2, seeds, steps))
    iso, sil = np.exp(-t / taus[0]) + noise[0], -np.exp(-t / taus[1]) + noise[1]
    return {"per_seed": [correlation(a, b)[0] for a, b in zip(iso, sil)]}


def penalty_target(rng, seeds, quantity):
    """I-STAR's own target: λ < 0 pulls IsoScore* down and does nothing else (paired runs)."""
    base = pd.DataFrame({"isoscore_star": rng.normal(0.01, 0.002, seeds), "seed": range(seeds)})
    pulled = base.assign(isoscore_star=base["isoscore_star"] - rng.uniform(0.002, 0.01, seeds))
    base["metric"], pulled["metric"] = rng.normal(0.8, 0.02, (2, seeds))
    return seed_test(pulled, base, *ISTAR_QUANTITIES[quantity][::2])


# Each committed setup's (updates + 1, IsoScore's, silhouette's time constant): the update by
# which the seeds' mean first covers 1 − 1/e of its change (main study and appendix A).
NAMES = ("silhouette", "isoscore")
MEANS = [
    r.groupby("step")[["isoscore", "silhouette"]].mean().to_numpy()
    for s in ("main", "glue")
    for _, r in pd.read_csv(ROOT / f"docs/data/{s}_traces.csv.gz").groupby(["encoder", "dataset"])
]
TAUS = [(len(m), *(abs(m - m[0]) >= (1 - np.exp(-1)) * abs(m[-1] - m[0])).argmax(0)) for m in MEANS]
# Each claim kind's null (the measured row the claims' judge reads), and the comparison's
# every-run correlation bounds (config/published_values.csv) judged by the same rule.
PAIRS = {"pearson_r": stats.pearsonr, "spearman_rho": stats.spearmanr}
CLAIMS = {c.name: c for c in (*MAIN_CLAIMS, *ISTAR_CLAIMS)}
NULLS = dict.fromkeys(("silhouette_rises", "isoscore_falls", "seeds_agree"), flat)
NULLS |= {c.name: partial(penalty_target, quantity=c.quantity) for c in ISTAR_CLAIMS}
PAIRED = [(c.name, c.quantity) for c in MAIN_CLAIMS if c.quantity in PAIRS]
BOUNDS = pd.read_csv(ROOT / "config" / "published_values.csv").query("estimand == 'every_run'")
for q, bound in BOUNDS.query("quantity in @PAIRS")[["quantity", "tolerance"]].to_numpy():
    PAIRED.append((key := f"{q} {bound}", q))
    CLAIMS[key] = replace(CLAIMS["pearson_negative"], name=q, bound=bound, rule="every_run")
NULLS |= {key: partial(exponential_pair, correlation=PAIRS[q]) for key, q in PAIRED}


def test_the_declared_near_guaranteed_claims_are_those_their_null_supports():
    """Marked exactly when *supported* in over 5% of its null (200 draws of 3 seeds, judged)."""
    assert set(CLAIMS) == set(NULLS) and len(CLAIMS) == 10  # every claim kind has its null
    rates = dict.fromkeys(CLAIMS, 0.0)
    for key in CLAIMS:
        rng = np.random.default_rng(93)
        for _ in range(200):
            verdict, _, test = _judge_claim(CLAIMS[key], pd.Series(NULLS[key](rng, 3)))
            settled = test is not None and settle(*test[:2], (SUPPORTED, "")) == SUPPORTED
            rates[key] += (verdict == "supported" or settled) / 200
    assert {CLAIMS[k].name for k, r in rates.items() if r > 0.05} == T.NEAR_GUARANTEED_ROWS, rates
    rho = {"quantity": "spearman_rho", "verdict": st.CONSISTENT}
    assert T.near_guaranteed(rho) and not T.near_guaranteed(rho | {"verdict": "not consistent"})
    assert not T.near_guaranteed({"quantity": "pearson_r", "verdict": st.AGREES})  # equivalence


def test_the_comparison_page_does_not_count_a_passing_spearman_row():
    page = comparison_markdown(planted_comparison())
    counts = re.search(r"Verdicts: (.+)\.", page).group(1)
    assert "0 consistent" in counts and "8 differs" in counts  # the failures still count
    assert f"1 {T.NEAR_GUARANTEED}" in counts and f"**consistent** ({T.NEAR_GUARANTEED})" in page


def test_the_claims_page_does_not_count_a_passing_spearman_claim():
    page = claims_markdown(planted_claims())
    tally = next(line for line in page.splitlines() if line.startswith("✅"))
    assert tally.startswith("✅ supported: 0 ·")  # the Pearson r is near-guaranteed too
    assert tally.endswith(f"not counted ({T.WHY_NEAR_GUARANTEED}): 2")
    assert f"✅ supported ({T.NEAR_GUARANTEED})" in page
    assert sum(T.NEAR_GUARANTEED in c for c in verdict_cells(planted_claims())) == 2  # glue's


def test_the_report_summary_does_not_count_a_passing_spearman_row():
    """The committed protocol run's two passing ρ rows (docs/data/main_verdicts.csv) and the
    planted ones, through the marking the report's script applies."""
    committed = pd.read_csv(ROOT / "docs" / "data" / "main_verdicts.csv")
    assert len(committed.query("quantity == 'spearman_rho' and verdict == 'consistent'"))
    page = summary_html(*map(T.marked, (planted_claims(), planted_comparison(), committed)))
    replicated = re.search(r"judged on .*?: replicated: ([^;]+);", page).group(1)
    assert "Spearman" not in replicated and "Pearson r on miniLM/polarity" in replicated
    assert "replicated: 0;" in page  # this run: its ρ and r claims are both near-guaranteed
    script = (ROOT / "scripts" / "report_overview.py").read_text(encoding="utf-8")
    for table in ("pd.read_csv(snakemake.input.claims)", "as_shown(comparison)"):
        assert f"marked({table})" in script
    assert "committed=marked(" in script and "marked(undrawn_rows(" in script
