"""Every published row declares what its number is (docs/verdicts.md, "What each printed number
is"), and no rule phrase in the docs or the CSV says what the code does not do: each phrase is
checked against a case that tells them apart."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
from judge_one import judge_one
from seed_simulator import seed_measurement

from isotropy import statistics as st
from isotropy import studies
from isotropy.verdicts import equivalence as eq
from isotropy.verdicts import tolerances as T
from isotropy.verdicts.claims import check_claims
from isotropy.verdicts.comparison import read_published
from isotropy.verdicts.declarations import fill_declarations, printed_number

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "config" / "published_values.csv"
TEXTS = (ROOT / "docs" / "verdicts.md", ROOT / "docs" / "methods.md", CSV)


def test_every_row_declares_its_statistic_and_the_reason_for_its_margin():
    raw = pd.read_csv(CSV, dtype=str, keep_default_na=False)
    for column in ("estimand", "m", "margin_reason"):
        assert (raw[column].str.strip() != "").all(), raw.loc[raw[column] == "", "source"].tolist()
    table = read_published()
    judged = table[[T.parse_tolerance(t)[0] in T.EQUIVALENCE_RULES for t in table["tolerance"]]]
    assert len(judged) > 90 and (raw.loc[judged.index, "why"] == "").all()
    for _, row in judged.iterrows():
        kind, _ = eq.parse_margin(row["margin"])
        scale = T.scale_of(row["unit"], T.parse_tolerance(row["tolerance"])[0])
        assert kind in scale.margins, (row["source"], row["margin"], scale.name)
        assert kind != "relative" or row["estimand"] == "fixed", row["source"]
        assert row["why"].startswith("equivalence on " + scale.name), row["why"]


def test_bad_declarations_are_refused_with_the_row_named():
    table = pd.read_csv(CSV, dtype=str, keep_default_na=False)
    table["paper_value"] = table["value"].map(printed_number)
    known = studies.published_studies()
    fill_declarations(table, studies=known)  # as shipped: fine
    row = table.index[(table["quantity"] == "pearson_r") & (table["setup"] == "polarity")][0]
    cases = {
        # a margin in printed units (r:, points:) moved with the paper's draw: refused
        ("margin", "r:0.05"): "with kind one of ('z', 'logit', 'relative')",
        ("margin", "logit:0.5"): "not declared on Fisher z",
        ("margin", "0.05"): "margin '0.05' is not",
        ("why", "± half the printed last digit"): "written from its rule",
        ("margin_reason", ""): "no margin_reason",
        ("estimand", "pooled or single"): "is not one of",
        ("m", "five"): "m 'five' is not a whole",
        ("tolerance", "roughly"): "tolerance 'roughly'",
        ("study", "nostudy"): "study 'nostudy' is not one of",
    }
    for (column, value), message in cases.items():
        bad = table.copy()
        bad.loc[row, column] = value
        with pytest.raises(ValueError, match=f"row {row + 2} .*{re.escape(message)}"):
            fill_declarations(bad, studies=known)
    # no default stands in for a declaration: a table without them is refused, naming the row
    undeclared = table.drop(columns=["estimand", "m", "margin", "margin_reason", "protocol"])
    with pytest.raises(ValueError, match="row 2 .*estimand '' is not one of"):
        fill_declarations(undeclared)
    lid = table.copy()
    lid.loc[lid.index[lid["tolerance"].str.startswith("lid")][0], "estimand"] = "single"
    with pytest.raises(ValueError, match="share of the paper's value"):
        fill_declarations(lid)
    with pytest.raises(ValueError, match="state it as a bound"):
        eq.SCALES["z"].region(-1.0, "z:0.1")


def test_sst2_iw_percent_is_judged_like_the_other_iw_rows():
    table = read_published()
    row = table[table["quantity"] == "sst2_iw_percent"].iloc[0]
    assert row["tolerance"] == "iw_factor:2" and row["margin"] == "logit:0.693"
    declared = T.Declared(row["estimand"], float(row["m"]), row["margin"])

    def verdict(level: float) -> str:
        measured = {"value": level, "per_seed": (level - 0.1, level, level + 0.1)}
        test = T.judge_equivalence("iw_factor", measured, 84.36, declared, unit=row["unit"]).test
        assert test is not None, level
        return T.settle(test.p_agree, test.p_differ)

    for level in (42.0, 60.0, 99.0):  # all "within a factor 2" of 84.36 under the old rule
        assert verdict(level) == st.DIFFERS, level
    assert verdict(84.0) == st.AGREES  # odds 5.25 vs 5.39


def _claim(per_seed: tuple[float, ...]) -> str:
    rows = [seed_measurement("silhouette_change", "s", "polarity", per_seed)]
    table = check_claims(pd.DataFrame(rows), {"main"}, studies.measured_claims())
    return table.loc[table["claim"] == "silhouette_rises", "verdict"].iloc[0]


def _lid_comparable(ratio: float) -> bool:
    return T.lid_not_comparable(1.19e6 * ratio, 1.19e6, 100, 100) == ""


def _half_digit_applies(_: re.Match) -> bool:
    """A seed-free r 0.6 of a printed digit off: rejected if the half-digit rule were in force."""
    return judge_one("printed", -0.8086, -0.808, precision=0.001, seed_free=True)[0] != st.AGREES


def _lid_factor_applies(match: re.Match) -> bool:
    return _lid_comparable(0.9 * float(match.group(1)))


def _lid_percent_applies(match: re.Match) -> bool:
    share = float(match.group(1)) / 100
    return _lid_comparable(1 + 0.9 * share) and not _lid_comparable(1 + 1.1 * share)


def _iw_raw_factor_applies(_: re.Match) -> bool:
    """0.6 against 0.33: within a factor 2 on I(W) and on 1 − I(W), odds ×3.05."""
    return judge_one("iw_factor:2", 0.6, 0.33, per_seed=(0.599, 0.6, 0.601))[0] == st.AGREES


def _one_seed_against_applies(match: re.Match) -> bool:
    word = {"not supported": "not supported", "inconclusive": st.INCONCLUSIVE}[match.group(1)]
    return _claim((0.2, 0.21, 0.19, 0.2, -0.05)) == word


def _printed_units_margin_applies(_: re.Match) -> bool:
    try:
        eq.parse_margin("r:0.05")
    except ValueError:
        return False
    return True


# (pattern, what the code must do for the phrase to be true)
RULE_PHRASES = [
    (r"half the printed last digit", _half_digit_applies),
    (r"\bn (?:lands )?within a factor (\d+(?:\.\d+)?)", _lid_factor_applies),
    (
        r"LID[^.]*?within a factor (\d+(?:\.\d+)?) of (?:theirs|the paper's|the printed)",
        _lid_factor_applies,
    ),
    (r"n[^.]{0,60}?±(\d+(?:\.\d+)?)%", _lid_percent_applies),
    (r"within a factor \d+ of I\(W\) and of 1 − I\(W\)|1 − I\(W\) is held", _iw_raw_factor_applies),
    (
        r"[Oo]ne seed going the other way is \*(not supported|inconclusive)\*",
        _one_seed_against_applies,
    ),
    (r"Δr 0\.05|0\.05 in r\b|\br:0\.05\b|\bpoints:2\b", _printed_units_margin_applies),
]


def test_no_rule_words_that_the_code_does_not_apply_and_the_checks_can_say_no():
    stale = []
    for path in TEXTS:
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        for pattern, applies in RULE_PHRASES:
            for match in re.finditer(pattern, text):
                if not applies(match):
                    stale.append(f"{path.name}: {match.group(0)!r}")
    assert not stale, stale
    # each check rejects the phrase the old docs carried (today's code does not apply them)
    old = {
        "our seeds' 95% t-interval ± half the printed last digit": 0,
        "judged only at n within a factor 2 of the paper's": 1,
        "I(W) within a factor 2 of I(W) and of 1 − I(W)": 4,
        "One seed going the other way is *not supported*.": 5,
        "Δr 0.05 for a correlation": 6,
    }
    for phrase, index in old.items():
        pattern, applies = RULE_PHRASES[index]
        match = re.search(pattern, phrase)
        assert match and not applies(match), phrase
    assert RULE_PHRASES[3][1](re.search(RULE_PHRASES[3][0], "our n to ±0.5%"))
    assert math.isclose(T.LID_N_TOLERANCE, 0.005)
