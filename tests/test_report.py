"""The HTML report of the tiny run: every figure and table, each with its caption."""

from __future__ import annotations

import json
import re

import pytest
import report_pages
import tiny_workflow
from PIL import Image
from test_forest_plot import IMAGE_PROBE, forest_image_size

pytestmark = pytest.mark.slow

# Every result marked for the report, with what its caption must name (the paper's figure/table).
EXPECTED = {
    "results/main/figure2.png": "The paper's Figure 2",
    "results/main/figure3.png": "The paper's Figure 3",
    "results/main/table1.csv": "The paper's Table 1",
    "results/main/correlations.csv": "(Figure 3)",
    "results/glue/figure4.png": "The paper's Figure 4",
    "results/glue/table2.csv": "The paper's Table 2",
    "results/glue/table3.csv": "The paper's Table 3",
    "results/claims.csv": "Claims check",
    "results/claims.md": "Claims check",
    "results/paper_comparison.csv": "Paper comparison",
    "results/paper_comparison.md": "Paper comparison",
    "results/report/forest.png": "forest plot",
}
# The other studies' figures, each with the paper it reproduces named in its caption.
EXPECTED_OTHER = {
    "results/istar/figure5.png": "I-STAR, Figure 5",
    "results/istar/figure6.png": "I-STAR, Figure 6",
    "results/istar/figure7.png": "I-STAR, Figure 7",
    "results/geometry/figures/cosine_by_layer.png": "Cai et al. 2021",
    "results/geometry/figures/lid_by_layer.png": "Cai et al. 2021",
    "results/geometry/figures/sts.png": "Rajaee & Pilehvar",
    "results/geometry/cosine_by_layer.csv": "Cai et al. 2021",
    "results/geometry/lid.csv": "Cai et al. 2021, Table 3",
    "results/geometry/sts.csv": "Rajaee & Pilehvar 2021, Table 1",
    "results/istar/runs.csv": "I-STAR runs",
}


@pytest.fixture(scope="module")
def report(tiny_run, tmp_path_factory):
    """The report of the full tiny run (rule all, which the fixture made), as `make report`
    makes it after the run: its HTML text."""
    workdir, command, mirror = tiny_run
    path = tmp_path_factory.mktemp("report") / "report.html"
    stylesheet = str(tiny_workflow.ROOT / "report/style.css")
    report = ["--report", str(path), "--report-stylesheet", stylesheet, "all"]
    result = tiny_workflow.snakemake(*command, *report, mirror=mirror, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir, path.read_text(encoding="utf-8")


def test_every_figure_and_table_has_its_caption(report):
    workdir, text = report
    captions = report_pages.captions(text)
    for path, names in EXPECTED.items():
        assert path in captions, f"{path} is not in the report (found {sorted(captions)})"
        caption = captions[path]
        assert names in caption, (path, caption)
        # Data, models and seeds are stated from the configuration of this run.
        assert "Seeds" in caption, (path, caption)
    for path, names in EXPECTED_OTHER.items():
        assert names in captions.get(path, ""), (path, captions.get(path))
        assert "Seeds: 0" in captions[path] and "Models:" in captions[path], (path, captions[path])
    sts = captions["results/geometry/sts.csv"]
    istar_runs = captions["results/istar/runs.csv"]
    assert "miniLM" in sts and "stsb (train split)" in sts
    assert "tasks: sst2" in istar_runs and "λ ∈ -5, 5" in istar_runs
    assert "all-MiniLM-L6-v2" in captions["results/main/figure2.png"]
    assert "rte, wnli" in captions["results/glue/figure4.png"]
    # captions say what ran: two seeds draw a band, GLUE's one seed none
    assert "± one standard deviation as a band" in captions["results/main/figure2.png"]
    assert "one seed per panel (no band)" in captions["results/glue/figure4.png"]
    figure3 = " ".join(captions["results/main/figure3.png"].split())
    assert "IsoScore is on a logarithmic axis in every panel" in figure3
    assert "95% t-interval over seeds" in figure3  # the intervals are named, not a bootstrap
    # The tiny run builds every study, so the claims read the I-STAR and STS tables too.
    claims = captions["results/claims.csv"]
    assert "istar_runs" in claims and "geometry_sts" in claims
    assert "not run" not in claims.split("Results read in this run:")[1]
    # The embedded figure is the real file.
    import base64

    png = (workdir / "results/main/figure2.png").read_bytes()
    assert base64.b64encode(png[:300]).decode()[:200] in text
    # Figures are embedded as PNG, never as PDF (a caption may still name the PDF's record).
    assert '"mime_type": "application/pdf"' not in text and '"mime_type": "image/png"' in text


def test_categories_are_named_one_way_and_every_rule_once(report):
    _, text = report
    match = re.search(r"var categories = (\{.*?\});\s*\n", text)
    assert match, "no categories in the report"
    categories = sorted(json.loads(match.group(1)))
    assert categories == [
        "claims and paper comparison",
        "geometry study",
        "glue study",
        "istar study",
        "main study",
    ], categories
    graph = json.loads(re.search(r"var rulegraph_spec = (\{.*?\});\s*\n", text).group(1))
    nodes = [v.get("rule") for d in graph["data"] if d["name"] == "node-data" for v in d["values"]]
    assert "geometry_sentence_embeddings" in nodes and len(nodes) == len(set(nodes)), nodes


def test_first_page_opens_on_the_run_its_claims_and_the_paper_comparison(report):
    """The workflow description (the first page) holds the overview of this run (its order:
    tests/test_reporting.py): its claims and paper numbers, no raw Python structure."""
    _, text = report
    desc = report_pages.first_page(text)
    assert (
        "Seeds: main 0, 1" in desc
        and "Target: all: the studies main, glue, istar, geometry" in desc
    )
    # The files come from the run's own record (the tiny run's one merged config.yaml).
    named = re.search(
        r"Configuration: (\S+/config\.yaml), the effective configuration \(sha256 [0-9a-f]{12}…\), "
        r"in full in results/report/overview\.html\.provenance\.json\.",
        desc,
    )
    assert named and f"Configuration: {named[1]}.</p>" in desc, desc[:3000]
    assert "Stand-ins: " in desc and "PREVIEW" not in desc
    assert "Configuration files" not in desc and "{'" not in desc and "['" not in desc
    # It opens on the forest plot of the paper comparison, its caption stating what made it,
    # the rows it cannot draw listed under it with their reason.
    forest = desc[: desc.index("<h2>This run")]
    assert forest.index('<figure class="overview-forest"') < forest.index("Measured, not judged")
    assert "Seeds: main 0, 1; glue 0; istar 0; geometry 0." in forest
    assert "Metrics recorded: main after every update; glue after every update." in forest
    assert "Stand-ins (not judged, listed below): GloVe 50-d" in forest
    assert "<td>stand-in: not judged</td>" in forest and "<td>not comparable</td>" in forest


def test_report_opens_in_a_headless_browser(report, tmp_path):
    """Chromium renders the report: the first page opens on the forest plot (the embedded image
    decoded at the size of results/report/forest.png), then the overview at full width, then
    the rule graph below it."""
    workdir, text = report
    head, tail = text.rsplit("</body>", 1)  # the page's own end (a script also holds one)
    probed = f"{head}{IMAGE_PROBE}</body>{tail}"
    rendered = report_pages.open_in_browser(probed, tmp_path, "report_first_page_full.png")
    assert 'class="isotropy-overview"' in rendered, rendered[:2000]
    assert rendered.index("isotropy-overview") < rendered.index('id="rulegraph"')
    page = rendered[rendered.index('class="isotropy-overview"') :]  # the DOM, not the scripts
    assert page.index('class="overview-forest"') < page.index("<h2>This run")
    size = Image.open(workdir / "results/report/forest.png").size
    assert forest_image_size(rendered) == size and min(size) > 100
    assert 'overview-claims"' in rendered and 'overview-comparison"' in rendered
