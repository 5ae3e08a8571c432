"""Declared Holm families, the stand-in gate on every rule, and claims that say whether they
were tested."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import seed_simulator as sim

from isotropy import statistics as st
from isotropy import studies
from isotropy.extensions.results import CLAIMS as EXTENSION_CLAIMS
from isotropy.standins import StandIns
from isotropy.statistics import NOT_SUPPORTED, SUPPORTED
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.claims import check_claims, claims_markdown
from isotropy.verdicts.comparison import compare, comparison_markdown, read_published
from isotropy.verdicts.measurements import measurement, spread_test
from isotropy.verdicts.measurements.optimisation import _spread_row

PROTOCOL = {"main": {"metric_stride": 1, "updates": 1000}}


def polarity_traces(noise: float = 0.044, seed: int = 5, steps: int = 1000) -> pd.DataFrame:
    """Five seeds whose pooled r is near the paper's −0.808 (polarity)."""
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(5):
        iso = 0.5 - 0.2 * np.linspace(0, 1, steps) + rng.normal(0, 0.02, steps)
        sil = 0.3 - (iso - 0.5) + rng.normal(0, noise, steps)
        rows += sim.trace_rows(run, range(len(iso)), iso, sil)
    return pd.DataFrame(rows)


def main_measured() -> pd.DataFrame:
    return sim.measured(polarity_traces(), PROTOCOL)


def seed_free_sts_rows(published: pd.DataFrame) -> list[dict]:
    """A seed-free STS row 20 points from each printed seed-free method's number: each reads
    *differs* exactly (p(agrees) 1), the rows that cannot be false agreements."""
    rows = []
    printed = published[(published["study"] == "geometry") & (published["tolerance"] == "printed")]
    for _, paper in printed.iterrows():
        if paper["setup"].split("/")[-1] not in ("none", "centring", "all-but-the-top"):
            continue
        value, setup = paper["paper_value"] - 20, paper["setup"]
        exact = dict(seeds=3, per_seed=(value,) * 3, seed_free=True)
        rows.append(
            measurement("geometry", paper["quantity"], f"bert, {setup}", setup, value, **exact)
        )
    return rows


def istar_rows(p_less: float = 0.5, p_greater: float = 0.5) -> list[dict]:
    """An unrelated study: an I-STAR grid of tests over seeds that decide nothing."""
    tested = dict(seeds=5, p_less=p_less, p_greater=p_greater)
    return [
        measurement("istar", quantity, f"m/t, λ={lam}", f"m/t, λ={lam}", 0.0, **tested)
        for quantity in ("istar_isoscore_change", "istar_metric_gain")
        for lam in (-1, -2, -5, -10)
    ]


def _main_rows(table: pd.DataFrame, key: str) -> pd.DataFrame:
    main = table[table["study"] == "main"]
    return main.set_index([key, "setup"])[["verdict"]]


def test_no_comparison_verdict_of_the_main_study_moves_when_other_rows_join():
    """Rejected: the polarity row agreed with probability 0.97 alone and 0.26 beside 26 seed-free
    STS rows. Its family is Mickus et al. × main whatever else the run holds."""
    published = read_published()
    main = main_measured()
    alone = compare(published, main, {"main"})
    polarity = alone[(alone["quantity"] == "pearson_r") & (alone["setup"] == "miniLM/polarity")]
    assert polarity["verdict"].item() == st.AGREES
    raw = float(polarity["p_agree"].item())
    extra = seed_free_sts_rows(published)
    assert len(extra) >= 20 and raw * (len(extra) + 1) > T.ALPHA  # enough to flip an old family
    crowded = pd.concat([main, pd.DataFrame(extra + istar_rows())], ignore_index=True)
    beside = compare(published, crowded, {"main", "geometry", "istar"})
    pd.testing.assert_frame_equal(_main_rows(alone, "quantity"), _main_rows(beside, "quantity"))
    tolerance = beside.loc[polarity.index[0], "tolerance"]
    assert "Holm over the 1 rows of Mickus et al. 2024 · main" in tolerance
    # the seed-free rows are exact comparisons, in no family
    sts = beside[(beside["study"] == "geometry") & (beside["verdict"] != st.NOT_RUN)]
    assert len(sts) >= len(extra) and set(sts["verdict"]) == {st.DIFFERS}
    assert sts["tolerance"].str.contains("in no Holm family").all()
    assert "Mickus et al. 2024 · main (1 rows)" in comparison_markdown(beside)


def test_no_claim_verdict_of_the_main_study_moves_when_other_studies_join():
    """Rejected: a claim with raw p 0.0011 supported on a main-only page, inconclusive once I-STAR
    was configured. Each study's tests are their own family."""
    marginal = (0.08, 0.065, 0.07, 0.08, 0.06)  # rises beyond 0.05: one-sided t p 0.0031
    main = pd.DataFrame([sim.seed_measurement("silhouette_change", "s", "polarity", marginal)])
    alone = check_claims(main, {"main"}, studies.measured_claims())
    rises = alone[(alone["claim"] == "silhouette_rises") & (alone["setup"] == "s")]
    assert rises["verdict"].item() == SUPPORTED
    values = [(f"toy/{k}", s, v) for k in range(12) for s, v in enumerate((0.1, -0.1, 0.05))]
    extension = pd.DataFrame(values, columns=["setup", "seed", "value"])
    extension.insert(0, "claim", "heldout_silhouette_follows")
    crowded = pd.concat([main, pd.DataFrame(istar_rows())], ignore_index=True)
    beside = pd.concat(  # the claims page as rule check_claims makes it
        [
            check_claims(crowded, {"main", "istar"}, studies.measured_claims()),
            check_claims(extension, None, EXTENSION_CLAIMS),
        ],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(_main_rows(alone, "claim"), _main_rows(beside, "claim"))
    assert "Holm over the 1 tests of Mickus et al. 2024 · main" in rises["note"].item()
    note = beside[(beside["claim"] == "silhouette_rises") & (beside["setup"] == "s")]["note"]
    assert note.item() == rises["note"].item()


GLOVE = StandIns(
    word_vectors="GloVe 50-d (mirror file glove.6B.50d.txt) for NLPL word2vec model 222 (300-d)",
    word_vectors_label="GloVe 50-d",
)
WORD2VEC = {"encoders": {"word2vec": {"kind": "word-vectors", "source": "word2vec"}}}


def supersense_traces() -> pd.DataFrame:
    """Five word2vec/supersense seeds, every ρ near −1 except one (fails −0.998)."""
    rows = []
    for seed in range(5):
        iso = np.linspace(0.5, 0.3, 30)
        sil = 0.02 + np.linspace(0, 0.2, 30) + (0.01 * np.sin(np.arange(30)) if seed == 0 else 0)
        rows += sim.trace_rows(seed, range(len(iso)), iso, sil, "word2vec", "supersense")
    return pd.DataFrame(rows)


def test_bounds_are_not_judged_on_a_stand_in_and_directions_say_so_on_both_pages():
    """Rejected: ρ "always below −0.998" read not consistent on GloVe / WordNet supersense."""
    measured = sim.measured(supersense_traces(), {**WORD2VEC, **PROTOCOL}, GLOVE)
    rho = measured[measured["quantity"] == "spearman_rho"].iloc[0]
    assert rho["stand_in"] and max(rho["per_seed"]) > -0.998  # one seed fails the bound
    setup, tested = "miniLM/sst2, λ=-1", dict(seeds=5, p_less=1e-4, p_greater=0.9999)
    istar = measurement("istar", "istar_isoscore_change", setup, setup, -0.1, **tested)
    istar["stand_in"] = "miniLM for BERT-base"
    both = pd.concat([measured, pd.DataFrame([istar])], ignore_index=True)
    table = compare(read_published(), both, {"main", "istar"})
    row = table[(table["quantity"] == "spearman_rho") & (table["setup"] == "word2vec/supersense")]
    assert row["verdict"].item() == st.STAND_IN and "GloVe 50-d" in row["tolerance"].item()
    # a direction is judged on the stand-in, and its verdict cell says so
    assert table.query("quantity == 'istar_isoscore_change'")["verdict"].item() == st.CONSISTENT
    assert "**consistent** (on a stand-in)" in comparison_markdown(table)
    claims = check_claims(measured, {"main"}, studies.measured_claims())
    claims = claims.query("study == 'main'").set_index("claim")
    assert claims.loc["spearman_strongly_negative", "verdict"] == st.STAND_IN
    assert claims.loc["pearson_negative", "verdict"] == st.STAND_IN  # r below the paper's −0.8
    assert claims.loc["silhouette_rises", "verdict"] == SUPPORTED
    lines = claims_markdown(claims.reset_index()).splitlines()
    line = next(s for s in lines if "| word2vec/supersense | silhouette_rises |" in s)
    assert "✅ supported (on a stand-in)" in line


def _spread(final_sd: float, n: int, rng: np.random.Generator) -> dict:
    """One simulated run's seed_spread row: IsoScore falls by 1 with final std ``final_sd``
    (ratio final_sd), silhouette rises by 1 with a negligible spread."""
    first = np.zeros(n)
    iso = pd.DataFrame({"first": first, "last": -1 + rng.normal(0, final_sd, n)})
    sil = pd.DataFrame({"first": first, "last": 1 + rng.normal(0, 1e-4, n)})
    at = partial(measurement, "main", setup="s", paper_setup="polarity", seeds=n, evidence="")
    return _spread_row({"isoscore": iso, "silhouette": sil}, n, at)


def _seeds_agree(rows: pd.DataFrame) -> str:
    table = check_claims(rows, {"main"}, studies.measured_claims())
    return table.query("study == 'main' and claim == 'seeds_agree'")["verdict"].item()


def test_seeds_agree_is_a_test_of_spread_against_the_change():
    """Rejected: a point ratio against 0.05 read supported with probability 0.26 at a true ratio
    of 0.07 (five seeds). As a test it reads supported at most 5% of the time there."""
    rng = np.random.default_rng(7)
    draws = 150
    verdicts = [_seeds_agree(pd.DataFrame([_spread(0.07, 5, rng)])) for _ in range(draws)]
    supported = np.mean([v == SUPPORTED for v in verdicts])
    assert supported <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws), supported
    assert _seeds_agree(pd.DataFrame([_spread(0.001, 5, rng)])) == SUPPORTED
    assert _seeds_agree(pd.DataFrame([_spread(0.5, 10, rng)])) == NOT_SUPPORTED


@pytest.mark.parametrize("n", [3, 5, 10])
def test_the_spread_tests_error_is_bounded_at_the_limit(n):
    """At a true ratio of exactly 0.05, P(p < 0.05) ≤ 0.05 (the claim's verdict is supported
    exactly when its p, alone in its family, is below 0.05)."""
    rng = np.random.default_rng(n)
    draws = 400
    final = -1 + rng.normal(0, 0.05, (draws, n))  # std 0.05 of a change of 1
    p = np.array([spread_test(f, f)[0] for f in final])
    assert np.isfinite(p).all()
    assert np.mean(p < T.ALPHA) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws)


def test_a_pooled_value_its_seeds_disagree_with_is_flagged_beside_it():
    """Rejected: per-seed r −0.15 with a pooled −0.997 printed "ours −0.997" without a word; and
    r < 0 in every seed read supported against the paper's −0.81…−0.98."""
    seeds = (-0.12, -0.14, -0.15, -0.16, -0.18)
    row = measurement(
        "main", "pearson_r", "miniLM/polarity", "polarity", -0.997, per_seed=seeds, seeds=5, n=500
    )
    claims = check_claims(pd.DataFrame([row]), {"main"}, studies.measured_claims())
    pearson = claims[claims["claim"] == "pearson_negative"].iloc[0]
    assert "⚠ pooled outside its seeds" in pearson["note"] and pearson["verdict"] == NOT_SUPPORTED
    assert pearson["threshold"] == "< -0.8"  # the paper's level, per seed, not zero
    assert "| -0.997 ⚠ |" in claims_markdown(claims)
    table = compare(read_published(), pd.DataFrame([row]), {"main"})
    compared = table[(table["quantity"] == "pearson_r") & (table["setup"] == "miniLM/polarity")]
    assert "⚠ pooled outside its seeds" in compared["note"].item()
    assert "| -0.997 ⚠ |" in comparison_markdown(table)
    # seeds that agree with the pooled value: no flag
    close = sim.seed_measurement("pearson_r", "miniLM/polarity", "polarity", (-0.8, -0.81, -0.82))
    notes = check_claims(pd.DataFrame([close]), {"main"}, studies.measured_claims())["note"]
    assert "⚠" not in notes.str.cat()


def test_the_docs_answers_read_the_claims_pages_verdicts():
    """The committed extension run: its rows read the same verdict in docs/extensions.md (its own
    family) as on a claims page that also holds the main study."""
    from isotropy.committed import extensions as answers
    from isotropy.committed.record import Page
    from isotropy.verdicts.extension_answers import claims_table

    seeds, _ = answers.load(root := Path(__file__).resolve().parents[1])
    own = claims_table(seeds).set_index(["claim", "setup"])["verdict"]
    main = check_claims(main_measured(), {"main"}, studies.measured_claims())
    # the claims page as rule check_claims makes it: the study's record gives its own page
    page = pd.concat([main, *studies.claim_pages({"extensions_seeds": seeds})])
    shared = page[page["study"] == "extensions"].set_index(["claim", "setup"])["verdict"]
    assert len(own) > 10
    pd.testing.assert_series_equal(own.sort_index(), shared.sort_index())
    block = Page(root, lambda _: answers.answers_parts(seeds, {"run": "committed"})).render(root)
    for (claim, setup), verdict in own.items():
        assert f"| `{claim}` | {setup} |" in block and f"*{verdict}* |" in block


def test_every_istar_row_reads_the_same_verdict_on_both_pages():
    """Rejected: 5-16% of I-STAR rows read different words on the comparison and the claims
    page. One family, adjusted the same way, on both."""
    # IsoScore* falls clearly at every λ; the task gains at half of them with p 0.0035: Holm
    # over the claimed directions (12 tiny p first) gives 12 × 0.0035 = 0.042, consistent
    rows = []
    for k, (model, lam) in enumerate(
        (m, x) for m in ("m1", "m2", "m3") for x in (-0.5, -1, -2, -5)
    ):
        setup = f"{model}/t, λ={lam}"
        gain = 0.0035 if k % 2 else 0.5
        for quantity, p_less in (("istar_isoscore_change", 1e-4), ("istar_metric_gain", 1 - gain)):
            tested = {"seeds": 5, "p_less": p_less, "p_greater": 1 - p_less}
            rows.append(measurement("istar", quantity, setup, setup, 0.0, **tested))
    measured = pd.DataFrame(rows)
    claims = check_claims(measured, {"istar"}, studies.measured_claims()).query("study == 'istar'")
    quantity = {
        "negative_lambda_lowers_isoscore": "istar_isoscore_change",
        "negative_lambda_improves_task": "istar_metric_gain",
    }
    words = {SUPPORTED: st.CONSISTENT, NOT_SUPPORTED: st.NOT_CONSISTENT}
    on_claims = {
        (quantity[r.claim], r.setup): words.get(r.verdict, r.verdict) for r in claims.itertuples()
    }
    table = compare(read_published(), measured, {"istar"})
    grid = table[table["quantity"].isin(quantity.values())]
    on_comparison = {(r.quantity, r.setup): r.verdict for r in grid.itertuples()}
    assert len(on_claims) == 24 and on_claims == on_comparison
    gains = [v for (q, _), v in on_comparison.items() if q == "istar_metric_gain"]
    assert sorted(set(gains)) == [st.CONSISTENT, st.INCONCLUSIVE]
