"""The report's opening page (isotropy.reporting) and the captions' facts
(targets.caption_facts)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest
import report_pages
import yaml
from tiny_workflow import ROOT, run_make, snakemake_in

from isotropy import intake, reporting
from isotropy.configuration import Config
from isotropy.reporting import configuration_line, counted, forest_html, overview_html, rule_link
from isotropy.verdicts.comparison import as_shown
from isotropy.verdicts.forest import listed_rows, plot_forest, undrawn_rows
from isotropy.verdicts.tolerances import marked
from isotropy.workflow import targets


def test_overview_lists_the_run_then_claims_then_comparison():
    claims, comparison, _ = _verdict_rows()
    claims.loc[0, ["statement", "measured"]] = ["silhouette <rises>", 0.0634902]
    page = overview_html(
        claims,
        comparison,
        studies=["main"],
        seeds={"main": [0]},
        stand_ins={"word_vectors": "GloVe 50-d for word2vec"},
    )
    assert page.index("This run") < page.index("Claims check") < page.index("Paper comparison")
    assert "3 checks: not supported (1), supported (1), not run (1)" in page
    # check_claims' log line: every verdict (it once named 3 of them: "20 checks: 2 ... 4 not run")
    assert counted(pd.Series(["stated", "supported"] * 2), "x") == "4 x: supported (2), stated (2)"
    assert "silhouette &lt;rises&gt;" in page  # escaped
    assert "0.06349" in page and "Seeds: main 0." in page and "GloVe 50-d for word2vec" in page
    assert page.count("<tr") == 3 + 4  # the claims run, every paper number
    assert "Target: main_study (make run)" in page and "PREVIEW" not in page
    assert "Configuration: the defaults (config.yaml)." in page
    assert "{" not in page and "[" not in page  # no raw Python structure


def test_a_previews_verdicts_are_the_main_studys_marked_and_pointing_at_the_preview():
    from isotropy.verdicts.measurements import as_preview

    rows = [["main", "results/main/correlations.csv", "supported"]]
    rows += [["glue", "results/glue/table3.csv", "not run"]]
    table = pd.DataFrame(rows, columns=["study", "evidence", "verdict"])
    marked = as_preview(table, "PREVIEW (make preview)")
    assert list(marked.columns) == ["preview", "study", "evidence", "verdict"]
    row = ["PREVIEW (make preview)", "main", "results/preview/correlations.csv", "supported"]
    assert marked.values.tolist() == [row]  # in the columns' order above


def test_the_report_stylesheet_hides_the_raw_job_parameters():
    """report/style.css hides the raw params after the "Snakemake rule" item, found by its one
    span of class gap-1: Snakemake's component is read, so an upgrade that moves either fails."""
    import snakemake.report

    css = (ROOT / "report/style.css").read_text()
    assert "#app li:has(> span.gap-1) ~ li { display: none; }" in css
    components = Path(snakemake.report.__file__).parent / "html_reporter/template/components"
    info = (components / "result_info.js").read_text()
    assert info.index("this.getRule(),") < info.index("this.getParamsAndWildcards(),")
    assert info.index('"flex items-center gap-1"') < info.index('text: "Job parameters"')
    others = [p.name for p in components.glob("*.js") if p != components / "result_info.js"]
    spans = [
        n
        for n in others
        if re.search(r'e\(\s*"span",\s*\{ className: "[^"]*\bgap-1\b', (components / n).read_text())
    ]
    assert spans == [], spans


def test_caption_facts_follow_the_runs_tabulated(tmp_path, shipped_config):
    shipped = Config.model_validate(shipped_config)
    setups = {name: shipped.main.setups[name] for name in ("polarity", "snli")}
    main = shipped.main.model_copy(update={"seeds": [0], "setups": setups})
    config = shipped.model_copy(update={"main": main})
    facts = targets.caption_facts(config, "preview", root=str(tmp_path))
    assert facts["seeds"] == [0] and facts["band"] is False
    assert facts["recorded"] == "at step 0, after every 10th update and after the last"
    assert list(facts["setups"]) == ["polarity", "snli"]
    folder = tmp_path / "results/main/miniLM/polarity/seed1"
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text("{}")
    (folder / "trace.parquet").write_bytes(b"")
    facts = targets.caption_facts(config, "main", root=str(tmp_path))
    assert facts["seeds"] == [0, 1] and facts["band"] is True  # polarity now has 2 seeds


def _make_report_commands(workdir, *args):
    result = run_make(workdir, "report", "-n", *args, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.replace("\\\n", " ").splitlines()  # continuation lines joined
    # the report's plan (nothing upstream allowed: are the results there?), then the gate given it
    plan = [line for line in lines if line.startswith("plan=")]
    assert len(plan) == 1 and "isotropy.audit --gate" in plan[0].partition("; printf")[2], lines
    assert lines.index(plan[0]) < min(i for i, line in enumerate(lines) if "cores 1" in line)
    return [
        line for line in lines if ("bin/snakemake" in line or "echo" in line) and line not in plan
    ]


def test_make_report_reports_the_last_run_with_its_effective_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")  # the install step's prerequisite (dry run)
    logs = tmp_path / "logs"
    (logs / "effective-config").mkdir(parents=True)
    made = "# made with: config.yaml + lean.yaml$(shell touch INJECTED)`x`\n"  # plain characters
    (logs / "effective-config/main_study.yaml").write_text(made + "main: {seeds: [0]}\n")
    (logs / "last_run.txt").write_text("TARGET=main_study\nCONFIG_FILES=config.yaml lean.yaml\n")
    lines = _make_report_commands(tmp_path)
    said = "main_study with logs/effective-config/main_study.yaml (made with config.yaml + lean"
    assert (
        f"{said}.yamlshell touch INJECTEDx) (" in lines[0] and not (tmp_path / "INJECTED").exists()
    )
    made, reported = lines[1], " ".join(lines[2:])
    assert "results/report/overview.html" in made and "--config 'studies=[main]'" in made
    assert "--report report.partial.html" in reported and "main_study" in reported
    assert "--configfile logs/effective-config/main_study.yaml" in reported
    # a preview: its own overview, claims and paper comparison, judged on results/preview/
    (logs / "last_run.txt").write_text("TARGET=preview_study\nCONFIG_FILES=config.yaml\n")
    lines = _make_report_commands(tmp_path)
    made = lines[1]
    assert "results/preview/report/overview.html" in made and "--config " not in made
    # another run, chosen by hand
    lines = _make_report_commands(
        tmp_path, "REPORT_TARGET=glue_study", "REPORT_CONFIG_FILES=a.yaml"
    )
    assert "--configfile a.yaml --config 'studies=[glue]'" in lines[1]


def test_the_configuration_is_named_by_its_content_not_by_how_the_run_was_invoked(tmp_path):
    """The overview's params do not change with the config files' spelling (a file list made it
    stale on every audit); the first screen names the files the run recorded."""
    config = {"seeds": [0, 1], "models": {"miniLM": {"path": "x"}}}
    same = {"models": {"miniLM": {"path": "x"}}, "seeds": [0, 1]}  # another order, one file
    page = "results/report/overview.html"
    assert configuration_line(config, page) == configuration_line(same, page)
    assert configuration_line({**config, "seeds": [0]}, page) != configuration_line(config, page)
    assert configuration_line(config, page).endswith(f"in full in {page}.provenance.json")
    assert "workflow.configfiles" not in (ROOT / "rules" / "report.smk").read_text()
    tiny = {"seeds": [0], "studies": ["preview"]}
    for target, made, body in [("main", "config.yaml", config), ("preview", "+ tiny.yaml", tiny)]:
        (tmp_path / f"{target}_study.yaml").write_text(f"# made with: {made}\n{yaml.dump(body)}")
    asked = [({**tiny, "studies": ["main"]}, "main"), (same, "preview"), ({"seeds": [2]}, "main")]
    made = [reporting.recorded_files(c, f"{t}_study", tmp_path) for c, t in asked]
    assert made == ["+ tiny.yaml", "config.yaml", ""]  # make report sets studies; none other's


@pytest.mark.parametrize(
    "plant, said",
    [
        (lambda p: p.write_text("# made with: x\n{"), "it is not plain YAML"),
        (lambda p: p.write_bytes(b"# made with: x\nseeds: [0]\n\xff\n"), "not plain YAML"),
        (lambda p: p.write_text("# made with: x\n- 0\n"), "holds a list, not a mapping"),
        (lambda p: p.symlink_to("elsewhere.yaml"), "a link on its path"),
    ],
)
def test_a_damaged_effective_configuration_is_refused_at_the_door(tmp_path, plant, said):
    """The report reads the run's record through the intake's door: never skipped or followed."""
    plant(tmp_path / "broken.yaml")
    with pytest.raises(intake.FolderError) as refused:
        reporting.recorded_files({"seeds": [1]}, "main_study", tmp_path)
    (message,) = str(refused.value).splitlines()  # one line
    assert message.startswith(f"{tmp_path / 'broken.yaml'}: ") and said in message


def _verdict_rows() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A preview's claims and comparison (an exact count, a correlation of one seed, a stand-in)
    and the committed run's verdicts."""
    claims = pd.DataFrame(
        {
            "setup": ["miniLM/polarity", "miniLM/snli", "x"],
            "statement": ["silhouette rises", "IsoScore falls, see `results/main/x.csv`", "y"],
            "measured": [0.06, 0.003, None],
            "threshold": ["> 0", "< 0", ""],
            "verdict": ["supported", "not supported", "not run"],
            "paper": ["p", "p", "p"],
            "stand_in": [None, "GloVe 50-d for word2vec", ""],
        }
    )
    comparison = pd.DataFrame(
        {
            "source": ["Table 1", "§3.2", "§3.2"],
            "quantity": ["items", "pearson_r", "pearson_r"],
            "setup": ["miniLM/polarity", "miniLM/polarity", "word2vec/pos"],
            "paper_value": [10662.0, -0.808, -0.947],
            "our_value": [10662.0, -0.80753, 0.9597],
            "tolerance": [
                "exact",
                "protocol differs: updates 12, the paper's 1000: its effect on pearson_r is not "
                "measured (config/protocol_effects.csv)",
                "",
            ],
            "verdict": ["agrees", "1 seed: not judged", "stand-in: not judged"],
        }
    )
    run = "the committed make run (code ed3f5e44d86a; 5 seeds, 1000 updates)"
    rows = [("miniLM/polarity", -0.808, -0.807531), ("miniLM/snli", -0.878, -0.879166)]
    columns = ["setup", "paper_value", "our_value"]
    committed = pd.DataFrame(rows, columns=columns).assign(quantity="pearson_r", verdict="agrees")
    committed["run"] = run
    return claims, comparison, committed


def _page(committed: pd.DataFrame | None = None, above=()) -> str:
    claims, comparison, default = _verdict_rows()
    return overview_html(
        claims,
        comparison,
        studies=["preview"],
        seeds={"preview": [0]},
        stand_ins={},
        configfiles=["logs/effective-config/preview_study.yaml"],
        made_with="config.yaml + tiny.yaml",
        preview="PREVIEW (make preview): seed 0, metrics after every 10th update",
        forest="<h2>FOREST</h2>",
        committed=default if committed is None else committed,
        above=above,
    )


def test_the_page_opens_on_what_replicated_beside_the_committed_run():
    """The first lines say what replicated (the row that did not, named), then the committed
    protocol run's §3.2 verdicts beside this run's, each labelled; the forest after."""
    page = _page()
    summary = page[: page.index("FOREST")]
    assert page.index("Summary (PREVIEW)") < page.index("FOREST") < page.index("<h2>This run")
    assert (
        "3 paper numbers and 3 claims: replicated: 1; exact counts: 1; not replicated: 1; not "
        "judged: 1; stand-in: 1; not run: 1. Not replicated: IsoScore falls, see "
        "results/main/x.csv (miniLM/snli) (on a stand-in)."
    ) in summary
    assert "code ed3f5e44d86a; 5 seeds, 1000 updates" in summary
    assert "replicated: Pearson r on miniLM/polarity, Pearson r on miniLM/snli" in summary
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", summary, re.S)
    cells = [re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S) for row in rows]
    assert cells[0][3:] == ["this run (PREVIEW)", "the committed protocol run"]
    assert cells[2] == ["miniLM/snli", "Pearson r", "-0.878", "not run", "-0.8792: agrees"]
    # Without a committed run: the summary alone.
    assert "overview-committed" not in _page(pd.DataFrame())
    # claims.csv has no stand-in column: a claim on a setup run on a stand-in is marked so
    claims, comparison, _ = _verdict_rows()
    claims = claims.drop(columns="stand_in").assign(setup=["x", "word2vec/pos", "x"])
    assert "(word2vec/pos) (on a stand-in)." in reporting.summary_html(
        claims, comparison, pd.DataFrame()
    )


def test_a_previews_tables_say_so_and_read_by_eye():
    """A preview's page names its target and configuration; no 10662.000 beside 1.066e+04, no
    code marks, no count run into a verdict, no whole rule wrapped to 20 lines a row."""
    claims, _, _ = _verdict_rows()
    assert "`" in claims["statement"].iloc[1]  # planted
    page = _page()
    assert "Claims check (PREVIEW)" in page and "Paper comparison (PREVIEW)" in page
    assert "metrics after every 10th update" in page
    assert "Target: preview_study (make preview)" in page and "Stand-ins: none." in page
    assert "Configuration: logs/effective-config/preview_study.yaml." in page
    assert page.index("Configuration: config.yaml + tiny.yaml.</p>") < page.index("Summary")
    comparison = page[page.index("Paper comparison") :]
    assert comparison.count("<td>10662</td>") == 2 and "1.066e+04" not in page
    assert "10662.0" not in page and "`" not in page and "<code" not in page
    assert '<span class="file">results/preview/claims.csv</span>' in page
    assert "3 numbers: 1 seed: not judged (1), agrees (1), stand-in: not judged (1)." in page
    assert not re.search(r"\d 1 seed", page)
    # Each header one meaning on the page (two read "paper": a paper's name, then its number);
    # each row once (the r beside the committed run, or listed above, not again); each rule a
    # short name linked to its definition, the whole rule on hover.
    assert "<th>paper</th>" not in page and page.count("<th>paper's value</th>") == 2
    assert "<th>stated in</th>" in page and "<td>-0.8075</td>" not in comparison
    assert "<td>-0.947</td>" not in _page(above=[2])[page.index("Paper comparison") :]
    assert '<a href="docs/verdicts.md#the-rules" title="exact">count</a></td>' in comparison
    protocol = _verdict_rows()[1]["tolerance"][1]
    assert rule_link(protocol).endswith(f'title="{html.escape(protocol)}">protocol</a>')


@pytest.mark.slow  # Snakemake's report, then Chromium: about 20 s
def test_the_first_screen_fits_1400_px_beside_the_menu(tmp_path):
    """The committed tiny run's report (tests/golden) ends inside a 1,400-px window beside the
    menu; ISOTROPY_UPDATE_SCREENSHOTS=1 copies its first screen to docs/ (report_pages)."""
    table = pd.read_csv(ROOT / "tests/golden/results/paper_comparison.csv")
    plot_forest(table, tmp_path / "forest.pdf", tmp_path / "forest.png", "")
    above = (marked(undrawn_rows(table)), listed_rows(table))
    png = (tmp_path / "forest.png").read_bytes()
    forest = forest_html(png, "", table, undrawn=above[0], listed=above[1])
    page = overview_html(  # as scripts/report_overview.py calls it
        marked(pd.read_csv(ROOT / "tests/golden/results/claims.csv")),
        marked(as_shown(table)),
        **dict(studies=["main"], seeds={"main": [0, 1]}, stand_ins={}, forest=forest),
        committed=marked(pd.read_csv(ROOT / "docs/data/main_verdicts.csv")),
        above=[*above[0].index, *above[1].index],
    )
    (tmp_path / "page.html").write_text(page)
    (tmp_path / "workflow.rst").write_bytes((ROOT / "report/workflow.rst").read_bytes())
    rule = 'rule overview:\n    output: report("overview.html")\n    shell: "cp page.html {output}"'
    (tmp_path / "Snakefile").write_text(f'report: "workflow.rst"\n{rule}\n')
    css = ["--report-stylesheet", str(ROOT / "report/style.css")]
    for args in (["overview.html"], ["--report", "report.html", *css, "overview.html"]):
        assert snakemake_in(tmp_path, *args).returncode == 0
    probe = (  # after 3 s: the window's width, then where each table and image ends
        "<script>setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<pre id=ends>' + "
        "[innerWidth, ...[...document.querySelectorAll('.isotropy-overview :is(table, img)')].map("
        "e => e.getBoundingClientRect().right)].join(' ') + '</pre>'), 3000)</script></body>"
    )
    text = (tmp_path / "report.html").read_text().rsplit("</body>", 1)
    dom = report_pages.open_in_browser(probe.join(text), tmp_path, "report-first-screen.png")
    width, *ends = map(float, re.findall(r'<pre id="ends">([\d. ]+)<', dom)[0].split())
    assert len(ends) > 3 and max(ends) <= width - 15, ends  # a visible scrollbar: 15 px
    cited = r"<td>Pearson r between.*?</td>(?:\s*<td>.*?</td>){3}\s*<td>(.*?)</td>"
    pearson = re.findall(cited, dom[dom.index('overview-claims"') :], re.S)
    assert len(pearson) == 6 and all("Pearson r" in c and "ρ" not in c for c in pearson)
