"""The paper-vs-ours table: every printed number of config/published_values.csv beside ours,
with convention, stand-in, tolerance and verdict; numbers this run cannot produce are rows that
say why. The published values are checked against the papers' numbers as printed (a typo guard)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tiny_workflow import offline_config

from isotropy import statistics as st
from isotropy import studies
from isotropy.configuration import Config
from isotropy.standins import StandIns, describe_stand_ins
from isotropy.verdicts import comparison as C
from isotropy.verdicts.comparison import read_published
from isotropy.verdicts.declarations import printed_number
from isotropy.verdicts.measurements import measure, measurement
from isotropy.workflow.inputs import config_subset

ROOT = Path(__file__).resolve().parents[1]
MICKUS, CAI, RAJAEI = "Mickus et al. 2024", "Cai et al. 2021", "Rajaei & Sheikhi 2020"


def compare_results(
    tables: dict, config: dict, stand: StandIns, studies_run: set[str] | None = None
) -> pd.DataFrame:
    """Measure the tables once, as the rules do (the records' measures included), and set every
    published number beside them (``studies_run``: by default the tables' studies)."""
    measured = measure(tables, config, stand, studies.table_measures())
    if studies_run is None:
        studies_run = {name.split("_")[0] for name, table in tables.items() if table is not None}
    return C.compare(read_published(), measured, studies_run)


def compared(tables: dict, config: dict | None = None) -> pd.DataFrame:
    full = offline_config()  # a hand-made config names a few keys: the stand-ins are the run's
    stand = StandIns(**describe_stand_ins(Config.model_validate(full), "/mirror"))
    return compare_results(tables, config_subset(Config.model_validate(config or full)), stand)


def published_value(paper: str, source_start: str) -> str:
    table = read_published()
    rows = table[(table["paper"] == paper) & table["source"].str.startswith(source_start)]
    assert len(rows) == 1, (paper, source_start, len(rows))
    return rows["value"].iloc[0]


# ------------------------------------------------------------------ the published values


SLIDES = (
    'slides "Isotropic Word Representation in BERT" (August 2020), methods table, row '
    "K-means + Mean + PCA (cluster-based), column STS-B"
)
# (paper, the start of its source, the number as printed): a typo guard
PRINTED = [
    (MICKUS, "Table 1, row polarity, column parameters", "4,094,976"),
    (MICKUS, "Table 1, row snli, column parameters", "4,987,395"),
    (MICKUS, "Table 1, row pos, column parameters", "4,341,004"),
    (MICKUS, "Table 1, row supersense, column parameters", "690,326"),
    (MICKUS, "§3.2, Pearson r of IsoScore vs silhouette, setup polarity", "−0.808"),
    (MICKUS, "§3.2, Pearson r of IsoScore vs silhouette, setup snli", "−0.878"),
    (MICKUS, "§3.2, Pearson r of IsoScore vs silhouette, setup pos", "−0.947"),
    (MICKUS, "§3.2, Pearson r of IsoScore vs silhouette, setup supersense", "−0.978"),
    (MICKUS, "§3.2, Spearman", "−0.998"),
    (MICKUS, "appendix A, Table 2, row qqp, column mpnet", "379,298,306"),
    (MICKUS, "appendix A, Table 2, row mnli, column items", "392,702"),
    (CAI, 'Table 3 ("A comparison of LIDs (using cosine similarity)"), row BERT,', "5.6"),
    (CAI, "Table 3, row BERT, column n", "1.19 M"),
    (CAI, "Table 3, row GNEWS, column dim", "300"),
    (RAJAEI, f"{SLIDES} I(W)", "0.6353"),  # as printed, not 0.64
    (RAJAEI, f"{SLIDES} Pearson ×100", "70.75"),
]


@pytest.mark.parametrize(("paper", "source", "printed"), PRINTED)
def test_published_values_are_the_numbers_the_papers_print(paper, source, printed):
    assert published_value(paper, source) == printed


def test_a_parameter_count_is_the_papers_arithmetic():
    # supersense: 2,275 items × 300 dims + 26 labels × (300 + 1) classifier weights
    printed = published_value(MICKUS, "Table 1, row supersense, column parameters")
    assert printed_number(printed) == 2275 * 300 + 26 * 301


def test_published_table_is_complete_and_cites_the_papers():
    table = read_published()
    assert not table["source"].str.contains("papers.md").any()
    assert "papers.md" not in (ROOT / "config" / "published_values.csv").read_text()
    counts = table[table["quantity"].isin(["items", "parameters"]) & (table["paper"] == MICKUS)]
    assert len(counts) == 40 and set(counts["tolerance"]) == {"exact"}  # Tables 1 and 2
    assert len(table[table["quantity"] == "pearson_r"].query("study == 'main'")) == 4
    cai = table[(table["paper"] == CAI) & (table["quantity"] == "lid_cosine")]
    table3 = ["BERT", "DistilBERT", "GPT", "GPT-2", "ELMo", "GloVe", "GloVe-2M", "GNEWS"]
    assert list(cai["setup"]) == table3
    assert cai["paper_n"].notna().all() and set(cai["tolerance"]) == {"lid:100"}
    stsb = table[
        (table["paper"] == RAJAEI)
        & table["source"].str.contains("methods table")
        & table["source"].str.contains("STS-B")
    ]
    methods = "none centring all-but-the-top kmeans-centring cluster-based-gmm cluster-based"
    assert sorted(set(stsb["setup"])) == sorted(f"stsb/{m}" for m in methods.split())
    assert len(stsb) == 18 and table["why"].str.len().gt(0).all()


# ------------------------------------------------------------------ the join


def write_geometry(tmp_path: Path) -> dict[str, pd.DataFrame]:
    lid_columns = "model kind corpus layer metric lid_cai_scale lid_true_distances".split()
    lid = [
        ("miniLM", "contextual", "polarity", layer, metric, *values)
        for layer, value in enumerate([9.0, 6.0, 5.5])
        for metric, values in (
            ("euclidean", (value + 3, 2 * (value + 3))),
            ("cosine", (value,) * 2),
        )
    ]
    lid.append(("word2vec", "static", "", None, "cosine", 7.9, 7.9))
    lid_table = pd.DataFrame(lid, columns=lid_columns).assign(seed=0, k=100, n=10_000)
    lid_table["dim"] = lid_table["kind"].map({"contextual": 384, "static": 50})
    cosine = dict(model="miniLM", kind="contextual", layer=range(3), s_inter=[0.3, 0.4, 0.5])
    cosine |= dict(s_intra=0.7, s_inter_adjusted=[0.01, -0.01, 0.01], s_intra_adjusted=0.5)
    # layer 0: one cluster (not judged); layers 1-2: the within-cluster IsoScore ratio
    cosine |= dict(n_clusters=[1, 3, 3], isoscore_within=[None, 0.1, 0.2])
    cosine = pd.DataFrame(cosine | {"isoscore_within_ratio": [None, 0.9, 0.8]})
    methods = (
        ("none", 1, 0, 83.5, 81.0, 0.156),
        ("centring", 1, 0, 83.0, 80.0, 0.2),
        ("all-but-the-top", 1, 12, 82.0, 79.0, 0.3),
        ("kmeans-centring", 27, 0, 80.0, 78.0, 0.5),
        ("cluster-based-gmm", 27, 12, 70.0, 69.0, 0.9),
        ("cluster-based", 27, 12, 70.96, 70.66, 0.931),
    )
    sts_columns = ["seed", "method", "n_clusters", "n_directions", "pearson", "spearman"]
    sts = pd.DataFrame(
        [(seed, m, k, d, p + seed * 0.1, s, i) for seed in (0, 1) for m, k, d, p, s, i in methods],
        columns=[*sts_columns, "isotropy"],
    ).assign(model="miniLM", dataset="stsb", split="train", n_pairs=5749)
    sts["isotropy_sign_free"] = sts["isotropy"] / 2
    return {"geometry_lid": lid_table, "geometry_cosine": cosine, "geometry_sts": sts}


def test_cai_table3_is_compared_with_cosine_lid_and_states_n_k_and_cap(tmp_path):
    table = compared(write_geometry(tmp_path))
    lid = table[table["quantity"] == "lid_cosine"]  # its 8 rows: the published table's test
    by_row = lid.set_index(lid["source"].str.extract(r"row ([^,]+),")[0])
    bert = by_row.loc["BERT"]
    # the cosine value of the last layer (5.5), never the Euclidean one (8.5)
    assert bert["our_value"] == 5.5 and bert["paper_value"] == 5.6
    assert bert["our_n"] == 10_000 and bert["k"] == 100 and bert["per_type_cap"] == "20"
    assert bert["paper_n"] == 1.19e6 and bert["paper_k"] == 100
    assert bert["verdict"] == st.STAND_IN and "miniLM" in bert["tolerance"]
    assert "Figure 9) 8.50" in bert["note"] and "for WikiText-2" in bert["stand_in"]
    for name in ("DistilBERT", "GPT", "GPT-2", "ELMo", "GloVe-2M", "GNEWS"):
        assert by_row.loc[name, "verdict"] == st.NOT_RUN
        assert "this run measures lid_cosine for BERT, GloVe only" in by_row.loc[name, "note"]
    # Rajaei & Sheikhi: the six STS-B methods, with our seeds' spread in the tolerance
    stsb = table[
        table["source"].str.contains("methods table") & table["source"].str.contains("column STS-B")
    ]
    assert len(stsb) == 18 and set(stsb["verdict"]) == {st.STAND_IN}  # MiniLM for BERT-base
    after = stsb[stsb["source"].str.contains(r"\(cluster-based\), column STS-B I\(W\)")].iloc[0]
    assert after["printed"] == "0.6353" and after["our_value"] == 0.931
    pearson = stsb[stsb["source"].str.contains(r"row pre-trained BERT, column STS-B Pearson")]
    pearson = pearson.iloc[0]
    assert pearson["our_value"] == pytest.approx(83.55) and "miniLM" in pearson["tolerance"]
    # Cai's centred cosine is stated beside ours (it cannot fail); the within-cluster ratio is
    # measured over the layers with k >= 2, and not judged on MiniLM standing in for BERT
    adjusted = table[table["quantity"] == "s_inter_adjusted_max"].iloc[0]
    assert adjusted["our_value"] == pytest.approx(0.01) and adjusted["verdict"] == st.STATED
    within = table[table["quantity"] == "isoscore_within_ratio_min"].iloc[0]
    assert within["our_value"] == pytest.approx(0.8) and within["verdict"] == st.STAND_IN
    assert "one cluster (k = 1) at layers 0" in within["note"]
    sts15 = table[table["source"].str.contains("SemEval 2015")]
    assert set(sts15["verdict"]) == {st.NOT_RUN}
    assert sts15["note"].str.contains("lacks SemEval 2015").all()
    markdown = C.comparison_markdown(table)
    assert markdown.startswith("# Our numbers beside the papers'")
    assert "## Cai et al. 2021" in markdown
    assert "10,000 / 1,190,000 (k 100 / 100, cap 20)" in markdown


TABLE1_COLUMNS = "encoder dataset items rows dim labels params".split()


def test_counts_and_correlations_of_the_main_study():
    table1 = [
        ("miniLM", "polarity", 10_662, 10_662, 384, 2, 4_094_976),
        ("word2vec", "supersense", 10_560, 10_560, 50, 26, 529_326),
    ]
    correlations = [
        ("miniLM", "polarity", "all", 5005, -0.8083, -0.9991),
        ("miniLM", "polarity", "seed0", 1001, -0.8082, -0.9991),
        ("miniLM", "polarity", "seed1", 1001, -0.8084, -0.9991),
        ("word2vec", "supersense", "all", 5005, 0.74, 0.65),
        ("word2vec", "supersense", "seed0", 1001, 0.75, 0.66),
        ("word2vec", "supersense", "seed1", 1001, 0.73, 0.64),
    ]
    columns = "encoder dataset scope points pearson_r spearman_rho".split()
    table = compared(
        {
            "main_table1": pd.DataFrame(table1, columns=TABLE1_COLUMNS),
            "main_correlations": pd.DataFrame(correlations, columns=columns),
        }
    )
    main = table[table["study"] == "main"]
    by = lambda q, s: main[(main["quantity"] == q) & (main["setup"] == s)].iloc[0]  # noqa: E731
    assert by("items", "miniLM/polarity")["verdict"] == st.AGREES
    assert by("parameters", "miniLM/polarity")["verdict"] == st.AGREES
    supersense = by("parameters", "word2vec/supersense")
    assert supersense["verdict"] == st.STAND_IN and supersense["printed"] == "690,326"
    assert "GloVe 50-d" in supersense["stand_in"]
    # pooled over the paper's 5 runs: without the traces there is no per-seed series to draw from
    polarity = by("pearson_r", "miniLM/polarity")
    assert polarity["verdict"] == st.INCONCLUSIVE
    assert "needs each seed's series" in polarity["tolerance"]
    assert by("spearman_rho", "miniLM/polarity")["verdict"] == st.CONSISTENT  # < −0.998
    snli = main[(main["quantity"] == "items") & (main["setup"] == "snli")].iloc[0]
    assert snli["verdict"] == st.NOT_RUN and "for polarity, supersense only" in snli["note"]


def test_the_join_is_generic_and_the_papers_supersense_data_is_checked(config):
    """A new published row is compared; supersense_source tikhonov (the default, online) is the
    paper's own data, no stand-in: its count is judged."""
    published = read_published()
    extra = published[published["source"] == "Table 1, row supersense, column items"].copy()
    values = ["Tikhonov et al. 2023", "their word list, labelled nouns", "2,275", 2275.0]
    extra[["paper", "source", "value", "paper_value"]] = values
    supersense = [("word2vec", "supersense", 2275, 2275, 300, 26, 690_326)]
    table1 = pd.DataFrame(supersense, columns=TABLE1_COLUMNS)
    stand = StandIns(**describe_stand_ins(settings := Config.model_validate(config), None))
    measured = measure(
        {"main_table1": table1}, config_subset(settings), stand, studies.table_measures()
    )
    table = C.compare(pd.concat([published, extra]), measured, {"main"})
    rows = table[table["quantity"] == "items"].query("setup == 'word2vec/supersense'")
    assert list(rows["paper"]) == [MICKUS, "Tikhonov et al. 2023"]
    assert set(rows["verdict"]) == {st.AGREES}
    assert "2,275 items are not reproduced" not in rows["stand_in"].str.cat()


def test_istar_direction_of_effect():
    grid = [("none", 0, 0.77, 0.04), ("istar", -5, 0.51, 0.0004), ("istar", 5, 0.51, 0.44)]
    columns = ["regulariser", "lambda", "metric", "isoscore_star"]
    runs = pd.DataFrame(grid, columns=columns).assign(model="miniLM", task="sst2", seed=0)
    table = compared({"istar_runs": runs})
    istar = table[table["study"] == "istar"].set_index("quantity")
    lowers = istar.loc["istar_isoscore_change"]
    assert lowers["our_value"] == pytest.approx(0.0004 - 0.04)
    assert lowers["setup"] == "miniLM/sst2, λ=-5" and lowers["verdict"] == st.ONE_SEED
    better = istar.loc["istar_metric_gain"]
    assert better["our_value"] == pytest.approx(0.51 - 0.77) and better["verdict"] == st.ONE_SEED
    assert "for BERT-base" in better["stand_in"]


def test_every_published_number_has_a_row_in_an_offline_run_without_results():
    table = compared({})
    assert len(table) == len(read_published()) and set(table["verdict"]) == {st.NOT_RUN}
    main = table[table["study"] == "main"]
    assert main["note"].str.startswith("the main study is not part of this run").all()
    mnli = table[table["source"] == "appendix A, Table 2, row mnli, column items"].iloc[0]
    assert "the offline mirror lacks MNLI's training split" in mnli["note"]


def test_stand_ins_follow_the_configuration(shipped_config):
    config = offline_config()
    stand = describe_stand_ins(Config.model_validate(config), "/mirror")
    glove = "GloVe 50-d (mirror file word_vectors/glove.6B.50d.subset.txt.gz)"
    assert stand["word_vectors"].startswith(glove) and "WordNet POS" in stand["pos_labels"]
    assert stand["corpus"] == "polarity sentences (polarity/rt-polarity.pos) for WikiText-2"
    assert stand["sts_split"].startswith("STS-B train split")
    assert "2,275 items are not reproduced" in stand["supersense_labels"]
    assert describe_stand_ins(Config.model_validate(shipped_config), None)["word_vectors"] == ""
    subset = config_subset(Config.model_validate(config))
    assert subset["geometry"]["clusters"]["max_per_type"] == 20


def test_claims_and_comparison_read_one_measurement():
    from isotropy.verdicts.claims import check_claims

    columns = "encoder dataset scope points pearson_r spearman_rho".split()
    correlations = pd.DataFrame([("miniLM", "polarity", "all", 26, -0.97, -0.99)], columns=columns)
    measured = measure(
        {"main_correlations": correlations}, {}, StandIns(), studies.table_measures()
    )
    claims = check_claims(measured, {"main"}, studies.measured_claims())
    claims = claims.query("study == 'main'").set_index("claim")
    table = C.compare(read_published(), measured, {"main"})
    pearson = table.query("quantity == 'pearson_r' and setup == 'miniLM/polarity'").iloc[0]
    assert claims.loc["pearson_negative", "measured"] == pearson["our_value"] == -0.97
    assert claims.loc["silhouette_rises", "verdict"] == "not run"  # no traces: nothing measured


def test_isotropy_within_clusters_fails_below_its_bound_and_states_a_single_cluster(tmp_path):
    """The within-cluster row can say no (a ratio under 0.5 at one layer), and a model whose
    k-means found one cluster at every layer reads not run, saying so, instead of a verdict."""
    tables = write_geometry(tmp_path)
    cosine = tables["geometry_cosine"]
    for value, verdict in ((0.2, st.NOT_CONSISTENT), (0.8, st.CONSISTENT)):  # the paper's models
        ours = measurement("geometry", "isoscore_within_ratio_min", "bert", "BERT", value)
        judged = C.compare(C.read_published(), pd.DataFrame([ours]), {"geometry"})
        row = judged[judged["quantity"] == "isoscore_within_ratio_min"].iloc[0]
        assert row["verdict"] == verdict, (value, row["note"])
    single = cosine.assign(n_clusters=1, isoscore_within=None, isoscore_within_ratio=None)
    within = compared({**tables, "geometry_cosine": single})
    row = within[within["quantity"] == "isoscore_within_ratio_min"].iloc[0]
    assert row["verdict"] == st.NOT_RUN
    assert "one cluster (k = 1) at every layer" in row["note"]
