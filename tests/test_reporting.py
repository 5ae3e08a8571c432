"""The report's opening page (isotropy.reporting) and the captions' facts (targets.caption_facts)."""

from __future__ import annotations

import pandas as pd

from isotropy.reporting import overview_html
from isotropy.workflow import targets


def test_overview_lists_the_run_then_claims_then_comparison():
    claims = pd.DataFrame(
        [
            {
                "claim": "a",
                "study": "main",
                "setup": "miniLM/polarity",
                "statement": "silhouette <rises>",
                "measured": 0.0634902,
                "threshold": "> 0",
                "verdict": "supported",
                "paper": "Mickus et al. 2024, §3",
            },
            {
                "claim": "b",
                "study": "glue",
                "setup": "",
                "statement": "x",
                "measured": None,
                "threshold": "",
                "verdict": "not run",
                "paper": "p",
            },
        ]
    )
    comparison = pd.DataFrame(
        [
            {
                "source": "Cai et al. 2021, Table 3",
                "quantity": "LID",
                "setup": "GloVe",
                "paper_value": 18.0,
                "our_value": 7.557,
                "tolerance": "±20%",
                "verdict": "differs",
            }
        ]
    )
    page = overview_html(
        claims,
        comparison,
        studies=["main"],
        seeds={"main": [0]},
        stand_ins={"word_vectors": "GloVe 50-d for word2vec"},
    )
    assert page.index("This run") < page.index("Claims check") < page.index("Paper comparison")
    assert "2 checks: 1 supported, 1 not run" in page
    assert "silhouette &lt;rises&gt;" in page  # escaped
    assert "0.06349" in page and "Seeds: main 0." in page and "GloVe 50-d for word2vec" in page
    assert page.count("<tr") == 1 + 1 + 1 + 1  # header + the run claim; header + one number


def test_caption_facts_follow_the_runs_tabulated(tmp_path):
    config = {
        "encoders": {"miniLM": {"kind": "sentence-transformer"}},
        "main": {
            "setups": {"polarity": {"encoder": "miniLM"}, "snli": {"encoder": "miniLM"}},
            "seeds": [0],
            "updates": 10,
            "learning_rate": 0.01,
            "metric_stride": 10,
            "metric_sample_size": None,
        },
        "preview": {"seeds": [0], "metric_stride": 10},
    }
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
    import subprocess

    from tiny_workflow import ROOT

    result = subprocess.run(
        ["make", "-n", "-f", str(ROOT / "Makefile"), "report", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.replace("\\\n", " ").splitlines()  # continuation lines joined
    return [line for line in lines if "snakemake" in line or "echo" in line]


def test_make_report_reports_the_last_run_with_its_effective_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")  # the install step's prerequisite (dry run)
    logs = tmp_path / "logs"
    (logs / "effective-config").mkdir(parents=True)
    (logs / "effective-config/main_study.yaml").write_text("main: {seeds: [0]}\n")
    (logs / "last_run.txt").write_text("TARGET=main_study\nCONFIG_FILES=config.yaml lean.yaml\n")
    lines = _make_report_commands(tmp_path)
    assert "target main_study with logs/effective-config/main_study.yaml" in lines[0]
    made, reported = lines[1], " ".join(lines[2:])
    assert "results/report/overview.html" in made and "--config 'studies=[main]'" in made
    assert "--allowed-rules check_claims compare_with_papers report_overview" in made
    assert "--report report.html" in reported and "main_study" in reported
    assert "--configfile logs/effective-config/main_study.yaml" in reported
    # a preview: its own results only (the claims judge the paper's protocol, not a preview)
    (logs / "last_run.txt").write_text("TARGET=preview_study\nCONFIG_FILES=config.yaml\n")
    lines = _make_report_commands(tmp_path)
    assert "overview.html" not in " ".join(lines) and "preview_study" in lines[-1]
    # another run, chosen by hand
    lines = _make_report_commands(
        tmp_path, "REPORT_TARGET=glue_study", "REPORT_CONFIG_FILES=a.yaml"
    )
    assert "--configfile a.yaml --config 'studies=[glue]'" in lines[1]
