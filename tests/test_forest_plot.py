"""The report's opening forest plot (isotropy.verdicts.forest): every judged row drawn with its
band where the verdict's region lies, or listed with its reason; a real browser shows it."""

from __future__ import annotations

import base64
import html
import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from seed_simulator import seed_measurement

from isotropy import statistics as st
from isotropy.reporting import forest_html, overview_html
from isotropy.verdicts.comparison import (
    PUBLISHED_COLUMNS,
    as_shown,
    compare,
    comparison_markdown,
    read_published,
)
from isotropy.verdicts.forest import (
    forest_caption,
    forest_figure,
    forest_rows,
    in_margins,
    listed_rows,
    plot_forest,
    undrawn_rows,
)
from isotropy.verdicts.measurements import measurement

NAN = math.nan
GLOVE = "GloVe 50-d for NLPL word2vec model 222 (300-d)"
LABELS = "WordNet POS labels for CoDWoE"


# Rows of every kind: an interval ending exactly on the band's edges (±1), a margin clipped at
# r = −1, an exact count that agrees and one far off, a seed-free row and a row of disagreeing
# seeds (no interval), a bound (nothing to draw), a stand-in, a protocol and a one-seed row.
# Columns: source | setup | paper value | ours | verdict | D's interval | band | p(agrees).
SMALL_TABLE = f"""
§3.2, r, polarity|miniLM/polarity|-0.808|-0.808|{st.INCONCLUSIVE}|-0.05|0.05|-0.05|0.05|0.06
§3.2, r, snli|miniLM/snli|-0.878|-0.873|{st.AGREES}|-0.01|0.0|-0.05|0.05|0.001
§3.2, r, supersense|miniLM/supersense|-0.978|-0.99|{st.DIFFERS}|0.01|0.03|-0.05|0.022|0.9
Table 1, row snli, column items|miniLM/snli|9842|9842|{st.AGREES}|||0.0|0.0|
Table 1, row polarity, column items|miniLM/polarity|10662|160|{st.DIFFERS}|||0.0|0.0|
slides, methods table, row none, column STS-B|none|60.08|61.08|{st.AGREES}|-1.0|-1.0|-2.0|2.0|
slides, methods table, row cluster, column STS-B|cluster|60.0|59.0|{st.INCONSISTENT_SEEDS}|||-2|2|
§3.2, ρ always below|miniLM/polarity|-0.998|-0.9945|{st.NOT_CONSISTENT}|||||
§3.2, r, pos|word2vec/pos|-0.947|0.97|{st.STAND_IN}|0.1|0.2|||
§3.2, ρ, pos|word2vec/pos|-0.998|0.97|{st.STAND_IN}|||||
§3.2, r, x|miniLM/x|-0.9|0.9|{st.NOT_COMPARABLE}|||||
Figure 5|miniLM/sst2, λ=-5||-0.04|{st.ONE_SEED}|||||
Table 3, row ELMo|ELMo|9.1||{st.NOT_RUN}|||||
"""
# What a row says beyond the rule as applied: (source, column) -> value.
SMALL_TABLE_WORDS = {
    ("§3.2, ρ always below", "tolerance"): "below -0.998 in every one of 5 seeds: 5 fail",
    ("§3.2, r, pos", "stand_in"): f"{GLOVE}; {LABELS}",
    ("§3.2, r, pos", "tolerance"): f"not judged: {GLOVE}; {LABELS}",
    ("§3.2, ρ, pos", "stand_in"): GLOVE,
    ("§3.2, ρ, pos", "tolerance"): f"not judged: {GLOVE}",
    ("§3.2, r, x", "tolerance"): "protocol differs: updates 12, the paper's 1000",
    ("Figure 5", "tolerance"): "< 0 over seeds: one seed, no spread to test with",
    ("Table 3, row ELMo", "tolerance"): "",
}


def small_table() -> pd.DataFrame:
    """:data:`SMALL_TABLE` as the comparison's columns."""
    columns = "source setup paper_value our_value verdict d_low d_high band_low band_high p_agree"
    table = pd.read_csv(io.StringIO(SMALL_TABLE), sep="|", names=columns.split())
    table = table.assign(paper="Mickus et al. 2024", study="main", stand_in="")
    table["tolerance"] = "rule as applied"
    for (source, column), value in SMALL_TABLE_WORDS.items():
        table.loc[table["source"] == source, column] = value
    geometry = table["source"].str.startswith("slides")
    table.loc[geometry, ["paper", "study"]] = ["Rajaei & Sheikhi 2020", "geometry"]
    table.loc[table["source"] == "Figure 5", "study"] = "istar"
    return table


def test_d_in_units_of_the_margin_puts_every_bands_edges_at_plus_and_minus_one():
    low, high = np.array([-0.05, -0.05, -2.0, 0.0, -0.05]), np.array([0.05, 0.022, 3.0, 0.0, 0.0])
    assert in_margins(low, low, high).tolist() == [-1, -1, -1, 0, -1]
    assert in_margins(high, low, high).tolist() == [1, 1, 1, 0, 0]
    found = in_margins([0.011, -0.01, 1.5, 5.0, 0.001], low, high)
    assert found == pytest.approx([0.22, -0.2, 0.5, math.inf, math.inf])
    assert math.isnan(in_margins([NAN], [-1.0], [1.0])[0])


def test_forest_rows_are_the_judged_rows_with_a_paper_value_and_a_band():
    table = small_table()
    rows = forest_rows(table)
    assert list(rows.index) == [0, 1, 2, 3, 4, 5, 6]
    assert rows["d"].tolist() == pytest.approx([0.0, -0.005, 0.012, 0.0, 10502, -1.0, 1.0])
    # the interval that ends on the band's edges ends at ±1, whichever scale it came from
    assert (rows.loc[0, "x_low"], rows.loc[0, "x_high"]) == (-1.0, 1.0)
    # at r = −1 the band's upper side is 0.022 wide: 0.03 lies beyond it, 0.01 inside
    assert rows.loc[2, ["x_low", "x_high"]].tolist() == pytest.approx([0.01 / 0.022, 0.03 / 0.022])
    # no interval: an exact count, a seed-free value (one point), disagreeing seeds
    assert rows.loc[[3, 4, 5, 6], "x_low"].isna().all()
    assert rows.loc[3, "x"] == 0 and rows.loc[4, "x"] == math.inf and rows.loc[5, "x"] == -0.5
    assert rows["group"].tolist()[-1] == "Rajaei & Sheikhi 2020 · geometry study"
    # each row names its source and our setup, shortened to the label's width
    assert rows.loc[5, "label"] == "slides, methods table, row none, column STS-B · none"
    assert rows["label"].str.len().max() <= 68
    assert list(undrawn_rows(table).index) == [7]
    listed = listed_rows(table)
    assert listed["reason"].tolist() == [
        f"{GLOVE}; {LABELS}",
        GLOVE,
        "protocol differs: updates 12, the paper's 1000",
        "< 0 over seeds: one seed, no spread to test with",
    ]
    # exact counts are drawn below the correlations a reader looks for first; rows of other
    # rules keep the table's order
    count_first = small_table().iloc[[3, 1]]  # an exact count, then a correlation
    assert list(forest_rows(count_first).index) == [3, 1]
    count_first.loc[3, "tolerance"] = "exact"
    assert list(forest_rows(count_first).index) == [1, 3]


def test_a_table_without_the_band_columns_is_refused_by_name():
    with pytest.raises(ValueError, match=r"no column \['d_low', 'd_high', 'band_low'"):
        forest_rows(small_table().drop(columns=["d_low", "d_high", "band_low"]))


def _ticks(axis) -> list[str]:
    return [label.get_text() for label in axis.get_yticklabels()]


def test_the_figure_draws_each_row_with_its_band_its_interval_and_its_verdict():
    figure = forest_figure(forest_rows(small_table()))
    axis, right = figure.axes
    left = _ticks(axis)
    assert left[0] == "Mickus et al. 2024 · main study" and left[6].startswith("Rajaei")
    assert "§3.2, r, snli · miniLM/snli" in left
    summaries = _ticks(right)
    assert "−0.005 [−0.01, 0] in [−0.05, +0.05]: agrees" in summaries
    assert "+0.012 [+0.01, +0.03] in [−0.05, +0.022]: differs" in summaries
    assert "+10,502, exact: differs" in summaries and "0, exact: agrees" in summaries
    assert "−1 in [−2, +2]: agrees" in summaries  # seed-free: no interval
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels[0] == "±δ band: the region the verdict accepts"
    assert {"agrees", "differs", "inconclusive"} <= set(labels)
    assert "D beyond the axis → (value on the right)" in labels
    # the band bars: one per row with a margin, none for the exact counts; each from −1 to +1
    # except the clipped row's, which is as wide on its clipped side as the verdict allows
    bars = [p for p in axis.patches if p.get_width() > 0]
    assert len(bars) == 5 and {(b.get_x(), b.get_x() + b.get_width()) for b in bars} == {(-1, 1)}
    # the off-scale count is drawn at the axis's edge, pointing outwards
    assert axis.get_xlim()[1] / 1.04 == pytest.approx(1.1 * 0.03 / 0.022)


def test_the_caption_states_the_settings_and_names_every_stand_in_once():
    caption = forest_caption(
        small_table(), {"main": [0, 1, 2]}, {"main": "every update", "glue": "every 10th update"}
    )
    assert "(7 of 13 rows of results/paper_comparison.csv" in caption
    assert "Seeds: main 0, 1, 2." in caption
    assert "Metrics recorded: main after every update; glue after every 10th update." in caption
    assert caption.endswith(f"Stand-ins (not judged, listed below): {GLOVE}; {LABELS}.")
    assert caption.count(GLOVE) == 1


def test_the_page_opens_on_the_summary_and_the_forest_plot_then_the_run(tmp_path):
    table, pdf, png = small_table(), tmp_path / "forest.pdf", tmp_path / "forest.png"
    # saved through isotropy.plots.checks.save_figure: an overlap raises (tests/conftest.py)
    assert len(plot_forest(table, pdf, png, preview="PREVIEW (make preview): seed 0")) == 7
    rows = dict(undrawn=undrawn_rows(table), listed=listed_rows(table))
    forest = forest_html(png.read_bytes(), "the caption <b>", table, **rows)
    claim = {"statement": "s", "setup": "miniLM/polarity", "verdict": "supported", "paper": "p"}
    claims = pd.DataFrame([claim])
    page = overview_html(
        claims, table, studies=["main"], seeds={"main": [0]}, stand_ins={}, forest=forest
    )
    run = page.index("<h2>This run")
    assert page.index("<h2>Summary") < page.index("<figure") < run < page.index("Claims check")
    embedded = re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1)
    assert base64.b64decode(embedded) == png.read_bytes()
    assert "<figcaption>the caption &lt;b&gt;</figcaption>" in page
    drawn_first = page[:run]
    for reason in listed_rows(table)["reason"]:
        assert html.escape(reason, quote=False) in drawn_first
    assert "below -0.998 in every one of 5 seeds" in drawn_first  # judged, nothing to draw
    assert "1 printed numbers this run does not produce (not run)" in drawn_first
    # no row to draw: a figure that says so, still saved
    assert plot_forest(table.iloc[7:], pdf, png).empty and png.stat().st_size > 1000


def test_the_comparison_names_a_stand_in_once_per_row():
    """Rejected: the stand-in's sentence in the tolerance column and again in the stand-in column
    of the same row."""
    table = small_table()
    table["printed"], table["quantity"], table["unit"], table["note"] = "x", "q", "u", ""
    for column in ("our_n", "paper_n", "k", "paper_k"):
        table[column] = NAN
    table["per_type_cap"], table["estimand"], table["m"] = "", "single", "1"
    table["margin"] = ""
    lines = [line for line in comparison_markdown(table).splitlines() if "word2vec/pos" in line]
    assert len(lines) == 2 and all(line.count(GLOVE) == 1 for line in lines), lines
    page = overview_html(table.iloc[:0], as_shown(table), studies=[], seeds={}, stand_ins={})
    short = page[page.index("overview-comparison") :]
    rows = [row for row in short.split("<tr>") if "word2vec/pos" in row]
    assert len(rows) == 2 and all(row.count(GLOVE) == 1 for row in rows), rows


def _published(tmp_path, rows: list[str]) -> pd.DataFrame:
    header = ",".join(PUBLISHED_COLUMNS) + ",estimand,m,margin,margin_reason,protocol\n"
    path = tmp_path / "published.csv"
    path.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")
    return read_published(path)


# (printed value, unit, margin, rule) and our per-seed values: near the band's edges both ways
CASES = [
    ("−0.808", "correlation", "z:0.1", "printed", (-0.806, -0.804, -0.807, -0.805, -0.806)),
    ("−0.808", "correlation", "z:0.1", "printed", (-0.77, -0.76, -0.765, -0.762, -0.768)),
    ("−0.808", "correlation", "z:0.1", "printed", (-0.74, -0.80, -0.70, -0.85, -0.76)),
    ("−0.978", "correlation", "z:0.1", "printed", (-0.99, -0.991, -0.989, -0.992, -0.99)),
    ("−0.978", "correlation", "z:0.1", "printed", (-0.999, -0.9985, -0.9992, -0.9988, -0.999)),
    ("54.09", "correlation ×100", "z:0.03", "printed", (55.0, 55.3, 54.8, 55.1, 55.6)),
    ("0.33", "ratio (1 = isotropic)", "logit:0.693", "iw_factor:2", (0.3, 0.31, 0.29, 0.32)),
    ("0.33", "ratio (1 = isotropic)", "logit:0.693", "iw_factor:2", (0.05, 0.06, 0.055, 0.07)),
]


@pytest.mark.parametrize(("printed", "unit", "margin", "rule", "seeds"), CASES)
def test_the_band_and_interval_columns_say_what_the_verdict_says(
    tmp_path, printed, unit, margin, rule, seeds
):
    """One row alone on its page (no adjustment): *agrees* exactly when D's interval lies inside
    the band, *differs* exactly when wholly outside it; the band is the declared margin as D."""
    published = _published(
        tmp_path,
        [
            f'X,t,main,pearson_r,polarity,"{printed}",{unit},0.001,m,d,,c,{rule},,,mean,1,'
            f"{margin},a priori,"
        ],
    )
    ours = seed_measurement("pearson_r", "miniLM/polarity", "polarity", seeds)
    row = compare(published, pd.DataFrame([ours]), {"main"}).iloc[0]
    low, high, band_low, band_high = (row[c] for c in ("d_low", "d_high", "band_low", "band_high"))
    assert band_low < 0 < band_high and low < high
    inside = band_low < low and high < band_high
    outside = high < band_low or low > band_high
    expected = st.AGREES if inside else st.DIFFERS if outside else st.INCONCLUSIVE
    assert row["verdict"] == expected, (row["tolerance"], low, high, band_low, band_high)
    assert f"[{low:+.4g}, {high:+.4g}]" in row["tolerance"]


R_MARGIN = "mean,1,z:0.1,p,"  # estimand, m, margin, its reason, protocol


def test_the_band_is_the_declared_margin_on_the_judging_scale(tmp_path):
    published = _published(
        tmp_path,
        [
            f"X,a,main,pearson_r,polarity,−0.808,correlation,0.001,m,d,,c,printed,,,{R_MARGIN}",
            f"X,b,main,pearson_r,polarity,−0.978,correlation,0.001,m,d,,c,printed,,,{R_MARGIN}",
            'X,c,main,items,polarity,"10,662",items,1,m,d,,c,exact,w,,fixed,1,,a count,',
            "X,d,main,pearson_r,polarity,−0.998,correlation,0.001,m,d,,c,below:-0.998,w,,every_run,"
            "1,,a bound,",
        ],
    )
    r = measurement(
        "main", "pearson_r", "miniLM/polarity", "polarity", -0.9, per_seed=(-0.9, -0.91)
    )
    n = measurement("main", "items", "miniLM/polarity", "polarity", 160)
    table = compare(published, pd.DataFrame([r, n]), {"main"}).set_index("source")
    for source, paper in (("a", -0.808), ("b", -0.978)):  # ±0.1 on Fisher z, as D in r,
        # of every value the print stands for (±0.0005): the region agrees needs
        z_low, z_high = np.arctanh(paper + 0.0005) - 0.1, np.arctanh(paper - 0.0005) + 0.1
        band = paper - np.tanh(z_high), paper - np.tanh(z_low)
        found = (table.loc[source, "band_low"], table.loc[source, "band_high"])
        assert found == pytest.approx(band)
        assert table.loc[source, "band_high"] < paper + 1  # never past r = -1
    assert (table.loc["c", "band_low"], table.loc["c", "band_high"]) == (0.0, 0.0)
    assert table.loc["d", ["band_low", "band_high", "d_low"]].isna().all()  # a bound: no band


# Run in the page once it has rendered: the forest image's decoded size (0x0: not decoded);
# tests/test_report.py opens the tiny run's report in a headless browser with it.
IMAGE_PROBE = """<script>
setTimeout(function () {
  var image = document.querySelector('.overview-forest img');
  document.body.setAttribute('data-forest-image',
    image ? image.naturalWidth + 'x' + image.naturalHeight : 'none');
}, 3000);
</script>"""


def forest_image_size(dom: str) -> tuple[int, int]:
    """The decoded size of the forest image in a DOM dumped after :data:`IMAGE_PROBE` ran."""
    found = re.search(r'data-forest-image="(\d+)x(\d+)"', dom)
    assert found, "the probe did not run or found no forest image"
    return int(found.group(1)), int(found.group(2))
