"""The extension study's tables and figures as its scripts write them (without Snakemake): each
question's file is found by its name, never by its place among the rule's outputs, and every
figure goes through the figure checks (isotropy.plots.checks.save_figure)."""

import pandas as pd
import pytest
from figure_checks import check_figure
from test_extensions import curve_traces, heldout_epochs
from tiny_workflow import load_script, script_snakemake

from isotropy.extensions import design, results
from isotropy.plots import checks
from isotropy.plots import extensions as figures

SETUPS, SEEDS = ("polarity", "snli"), (0, 1)
# each head's curves (start, slope per recorded step) beside the table's IsoScore and silhouette
HEAD_CURVES = {
    "linear": dict(dunn=(0.2, 0.2), calinski_harabasz=(5, 4), davies_bouldin=(3, -0.4)),
    "deep1": dict(isoscore_h1=(0.5, -0.04), silhouette_h1=(0.2, 0.1)),
    "triplet": {},
}


def synthetic_traces() -> pd.DataFrame:
    """Traces of every (setup, head, seed): IsoScore falls, the cluster metrics rise (DB falls)."""
    table = dict(isoscore=(0.6, -0.06), silhouette=(0.1, 0.08))
    traces = [
        curve_traces(SEEDS, setup=setup, **table, **curves).assign(head=head)
        for setup in SETUPS
        for head, curves in HEAD_CURVES.items()
    ]
    return pd.concat(traces, ignore_index=True)


def synthetic_epochs() -> pd.DataFrame:
    return heldout_epochs((0.5, -0.1), (0.05, 0.1)).assign(setup="polarity")


def question_files(tmp_path, ext: str) -> list[str]:
    """The question files in the reverse of the questions' order: only their names pair them."""
    return [str(tmp_path / f"{q}.{ext}") for q in reversed(design.QUESTIONS)]


def test_each_question_s_table_is_written_to_the_file_named_after_it(tmp_path, monkeypatch):
    script = load_script("scripts/extensions_tables.py")
    traces = synthetic_traces()
    seeds = pd.concat(
        [
            results.criteria_seeds(traces[traces["head"] == "linear"]),
            results.deep_seeds(traces[traces["head"] != "triplet"]),
            results.triplet_seeds(traces[traces["head"] == "triplet"]),
            results.heldout_seeds(synthetic_epochs()),
        ],
        ignore_index=True,
    )
    monkeypatch.setattr(script, "seed_values", lambda runs, traces, epochs: seeds)
    outputs = {
        "seeds": str(tmp_path / "seeds.csv"),
        "tables": question_files(tmp_path, "csv"),
        "markdown": question_files(tmp_path, "md"),
        "claims": str(tmp_path / "claims.csv"),
        "claims_markdown": str(tmp_path / "claims.md"),
    }
    params = {"runs": [], "level": 0.95, "settings_line": "toy settings"}
    inputs = {"traces": [], "epochs": []}
    script.main(script_snakemake("extensions_tables", inputs, outputs, params))
    titles = {"criteria": "# Other cluster", "deep": "# Deep", "triplet": "# Triplet"}
    for question, title in (titles | {"heldout": "# Held-out"}).items():
        table = pd.read_csv(tmp_path / f"{question}.csv")
        expected = results.question_table(seeds[seeds["question"] == question])
        assert set(table["item"]) == set(expected["item"]), question
        text = (tmp_path / f"{question}.md").read_text(encoding="utf-8")
        assert text.startswith(title), question


def test_each_question_s_figure_is_checked_and_saved_to_the_files_named_after_it(
    tmp_path, monkeypatch
):
    script = load_script("scripts/extensions_figures.py")
    traces, seeds_file = synthetic_traces(), tmp_path / "seeds.csv"
    results.deep_seeds(traces[traces["head"] != "triplet"]).to_csv(seeds_file, index=False)
    epochs_file = tmp_path / "epochs.csv"
    synthetic_epochs().to_csv(epochs_file, index=False)
    monkeypatch.setattr(script, "read_traces", lambda paths, keys: traces)
    checked = {}

    def recording_check(figure, name, *args):
        checked[name] = [ax.get_title() for ax in figure.axes if ax.get_title()]
        return check_figure(figure, name, *args)

    monkeypatch.setattr(checks, "FIGURE_CHECKS", [recording_check])
    inputs = {"seeds": str(seeds_file), "traces": [], "epochs": [str(epochs_file)]}
    outputs = {"pdf": question_files(tmp_path, "pdf"), "png": question_files(tmp_path, "png")}
    # a settings line of many lines: the caption must wrap and stay inside the figure
    params = {"runs": [], "settings_line": "toy settings " * 30}
    script.main(script_snakemake("extensions_figures", inputs, outputs, params))
    # every figure went through the checks (a problem raises), each to its own question's file
    assert sorted(checked) == sorted(f"{q}.pdf" for q in design.QUESTIONS)
    assert checked["criteria.pdf"][:4] == [  # each criterion labelled as the registry does
        "polarity: Silhouette",
        "polarity: Dunn index",
        "polarity: Caliński–Harabasz index",
        "polarity: Davies–Bouldin index (lower = better)",
    ]
    titles = {name: " ".join(found) for name, found in checked.items()}
    assert "per head" in titles["deep.pdf"] and "triplet objective" in titles["triplet.pdf"]
    assert "accuracy" in titles["heldout.pdf"]
    for question in design.QUESTIONS:
        assert (tmp_path / f"{question}.png").stat().st_size > 0


def test_question_files_are_paired_by_name_and_refused_otherwise():
    names = [f"out/{q}.csv" for q in reversed(design.QUESTIONS)]
    assert results.by_question(names) == {q: f"out/{q}.csv" for q in design.QUESTIONS}
    assert list(results.by_question(names)) == list(design.QUESTIONS)
    for wrong in (names[1:], [*names, "out/extra.csv"], [*names, "other/criteria.csv"]):
        with pytest.raises(ValueError, match="one file per question"):
            results.by_question(wrong)
    assert tuple(figures.question_figures(*[pd.DataFrame()] * 3)) == design.QUESTIONS
