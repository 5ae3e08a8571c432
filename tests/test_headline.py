"""The main study's committed protocol run (``docs/data/main_*``): these tests fail when it is
not at the paper's protocol or its verdicts move (its pages' staleness and the copying, on the
golden tiny run's GLUE study: tests/test_committed.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from isotropy.committed import main as headline
from isotropy.committed import optimisation
from isotropy.io import checked_record, sha256_file
from isotropy.statistics import VERDICTS

ROOT = Path(__file__).resolve().parents[1]
SETUPS = {"miniLM/polarity", "miniLM/snli", "word2vec/pos", "word2vec/supersense"}
COMMITTED = (ROOT / headline.RUN).is_file()
needs_run = pytest.mark.skipif(not COMMITTED, reason="no committed protocol run yet")


@needs_run
def test_the_committed_run_is_at_the_papers_protocol():
    """§3: five initialisations per setup, 1,000 updates, metrics after every update."""
    traces = optimisation.committed_tables("main", ROOT)["main_traces"]
    assert set(traces["encoder"] + "/" + traces["dataset"]) == SETUPS
    for _, run in traces.groupby(["encoder", "dataset", "seed"]):
        assert sorted(run["step"]) == list(range(1001))
    seeds = traces.groupby(["encoder", "dataset"])["seed"].nunique()
    assert (seeds == 5).all(), seeds.to_dict()
    main = checked_record(ROOT, headline.RUN)["config"]["main"]
    assert main["metric_stride"] == 1 and main["updates"] == 1000


@needs_run
def test_section_3_2_polarity_and_snli_agree_with_the_paper():
    """Section 3.2's r for the two setups with the paper's own model and data (Mickus et al.
    2024: polarity -0.808, SNLI -0.878) agree at the protocol, and rho stays below -0.998 in
    every seed: a changed trace, table or verdict rule that moves them fails here."""
    table = headline.verdicts(ROOT).set_index(["quantity", "setup"])
    for setup, paper in (("miniLM/polarity", -0.808), ("miniLM/snli", -0.878)):
        row = table.loc[("pearson_r", setup)]
        assert row["verdict"] == "agrees", row["tolerance"]
        assert abs(float(row["our_value"]) - paper) < 0.005
        assert table.loc[("spearman_rho", setup), "verdict"] == "consistent"
        # the p-values beside the verdict are the Holm-adjusted ones its text used
        said = f"p(agrees) {row['p_agree']:.2g}, p(differs) {row['p_differ']:.2g}"
        assert said in row["tolerance"], (said, row["tolerance"])


@needs_run
def test_section_3_trends_are_judged_on_the_committed_run(monkeypatch):
    """Silhouette rises and IsoScore falls in every seed of the paper's own model and data; a
    planted trace whose IsoScore rises in polarity, or whose seeds end apart in SNLI, is caught."""
    table = headline.verdicts(ROOT, claims=True).set_index(["claim", "setup"])["verdict"]
    assert len(table) == 3 * len(SETUPS)
    for setup in ("miniLM/polarity", "miniLM/snli"):
        for claim in headline.TRENDS:
            assert table[(claim, setup)] == "supported", (claim, setup)
    tables = optimisation.committed_tables("main", ROOT)
    traces = tables["main_traces"].copy()
    polarity, snli = (traces["dataset"] == name for name in ("polarity", "snli"))
    steps = traces["step"].where(polarity | snli, 0)
    traces.loc[polarity, "isoscore"] = 0.1 + 1e-4 * steps[polarity] * (1 + traces["seed"] / 10)
    traces.loc[snli, "silhouette"] += 0.05 * traces.loc[snli, "seed"] * (steps[snli] / 1000)
    monkeypatch.setattr(
        optimisation, "committed_tables", lambda study, root: {**tables, "main_traces": traces}
    )
    planted = headline.verdicts(ROOT, claims=True).set_index(["claim", "setup"])["verdict"]
    assert planted[("isoscore_falls", "miniLM/polarity")] == "not supported"
    assert planted[("seeds_agree", "miniLM/snli")] != "supported"
    assert planted[("silhouette_rises", "miniLM/polarity")] == "supported"


@needs_run
def test_the_readme_names_every_setup_with_its_verdict_and_rule():
    """*agrees* with its margin in r; a ρ row with what monotone traces guarantee."""
    block = headline.COMMITTED.pages[1].render(ROOT)
    for setup in SETUPS:
        lines = [line for line in block.splitlines() if line.startswith(f"| {setup} |")]
        assert len(lines) == 2, block
        for line in lines:
            assert any(f"**{word}**" in line for word in VERDICTS), line
    line = "\n".join(line for line in block.splitlines() if line.startswith("| miniLM/polarity |"))
    assert "**agrees** within −0.037 to +0.032 in r (D = paper − ours)" in line
    assert "**consistent** (near-guaranteed: not counted; in the worst seed" in line
    assert "IsoScore goes against its trend at 2 of 1000 updates" in line


def test_the_monotone_words_count_what_goes_against_the_trend():
    """Strictly monotone traces guarantee ρ = ±1 and say so; a planted reversal is counted."""
    steps = list(range(6))
    rows = [
        {"encoder": "e", "dataset": "d", "seed": s, "step": k, "isoscore": 1 - k, "silhouette": k}
        for s in (0, 1)
        for k in steps
    ]
    traces = pd.DataFrame(rows)
    assert headline._monotone_words(traces, "e/d").endswith("strictly monotone in every seed")
    traces.loc[(traces["seed"] == 1) & (traces["step"] == 3), "isoscore"] = 5.0
    words = headline._monotone_words(traces, "e/d")
    assert "IsoScore goes against its trend at 1 of 5 updates" in words


# --- the copying (on the golden tiny run: tests/test_committed.py, as GLUE's) ---------------


def test_results_without_traces_are_refused(tmp_path):
    (tmp_path / "main").mkdir()
    for name in ("table1.csv", "correlations.csv"):
        (tmp_path / "main" / name).write_text("x\n")
    with pytest.raises(FileNotFoundError, match="no traces"):
        optimisation.copy("main", tmp_path, [tmp_path / "main"], {}, tmp_path / "none.yaml")


def test_the_repeat_on_another_device_matches_its_record_and_shows_a_planted_difference():
    """The committed H100 repeat is the file its record names, and the comparison reports a
    planted change of one value and refuses a repeat with a step missing."""
    record = json.loads((ROOT / headline.H100_RUN).read_text(encoding="utf-8"))
    traces = headline.H100_TRACES
    assert record["files_sha256"][str(traces)] == sha256_file(ROOT / traces)
    cpu = optimisation.committed_tables("main", ROOT)["main_traces"]
    other = pd.read_csv(ROOT / headline.H100_TRACES)
    clean = headline.device_differences(cpu, other)
    assert (clean["steps"] == 5005).all() and (clean["silhouette"] < 1e-5).all()
    planted = other.copy()
    planted.loc[planted["dataset"].eq("snli") & planted["step"].eq(500), "silhouette"] += 0.01
    shown = headline.device_differences(cpu, planted).set_index("dataset")["silhouette"]
    assert shown["snli"] == pytest.approx(0.01, abs=1e-5) and shown["polarity"] < 1e-5
    with pytest.raises(ValueError, match="one device only"):
        headline.device_differences(cpu, other.iloc[1:])


def test_the_readme_s_one_sentence_says_what_the_committed_verdicts_say():
    """The README's headline sentence is typed: it must stay what the generated verdicts say."""
    readme = " ".join((ROOT / headline.README).read_text(encoding="utf-8").split())
    assert (
        "the correlation of IsoScore with the silhouette agrees with the paper on both sentence "
        "tasks; the two word-vector tasks run on offline stand-ins and are not judged" in readme
    )
    # docs/data/main_verdicts.csv, which every report shows beside its run's own
    rows = pd.read_csv(ROOT / headline.VERDICTS)
    assert rows["run"].str.contains("code ed3f5e44d86a; 5 seeds, 1000 updates").all()
    pearson = rows[rows["quantity"] == "pearson_r"].set_index("setup")["verdict"]
    assert pearson.to_dict() == {
        "miniLM/polarity": "agrees",
        "miniLM/snli": "agrees",
        "word2vec/pos": "stand-in: not judged",
        "word2vec/supersense": "stand-in: not judged",
    }
