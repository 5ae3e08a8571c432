"""The workflow parses with Snakemake and the light configuration code only: no torch.

A dry run, a lint or a report must not need the science stack (nor pay for importing it), so
the Snakefile, the rules and every helper they import at parse time stay torch-free.
"""

import re
import subprocess
import sys

import pytest
import tiny_workflow

# Runs Snakemake in this interpreter and prints which heavy modules it loaded, after it exits.
WRAPPER = """
import runpy, sys
sys.argv = ["snakemake", *sys.argv[1:]]
try:
    runpy.run_module("snakemake", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as stop:
    code = stop.code
print("HEAVY_MODULES_LOADED=" + ",".join(sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)))
sys.exit(code)
"""


def test_dry_run_of_every_study_does_not_import_torch(tmp_path):
    mirror = tiny_workflow.shared_mirror()
    if mirror is None:
        pytest.skip("offline mirror not found (set ISOTROPY_MIRROR)")
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    command = [
        sys.executable,
        "-c",
        WRAPPER,
        "--snakefile",
        str(tiny_workflow.ROOT / "Snakefile"),
        "--directory",
        str(tmp_path / "work"),
        "--configfile",
        str(config),
        "--cores",
        "1",
        "--dry-run",
        "all",
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=tiny_workflow.snakemake_environment(mirror),
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "rule finetune" in output and "rule geometry_token_embeddings" in output, output[-3000:]
    loaded = [line for line in output.splitlines() if line.startswith("HEAVY_MODULES_LOADED=")]
    assert loaded == ["HEAVY_MODULES_LOADED="], (
        f"parsing the workflow imported {loaded}; move that import out of parse time"
    )


def test_every_istar_and_geometry_job_is_downstream_of_a_download(tmp_path):
    # One way in: the data of every study come from download_source (SICK-R excepted when the
    # mirror lacks it: optional, its job marks it unavailable without an input).
    mirror = tiny_workflow.shared_mirror()
    if mirror is None:
        pytest.skip("offline mirror not found (set ISOTROPY_MIRROR)")
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(tiny_workflow.ROOT / "Snakefile"),
        "--directory",
        str(tmp_path / "work"),
        "--configfile",
        str(config),
        "--cores",
        "1",
        "--dag",
        "dot",
        "--",
        "all",
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=tiny_workflow.snakemake_environment(mirror),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    labels = dict(re.findall(r'^\s*(\d+)\[label = "([^"]*)"', result.stdout, flags=re.M))
    parents: dict[str, set[str]] = {node: set() for node in labels}
    for source, target in re.findall(r"^\s*(\d+) -> (\d+)", result.stdout, flags=re.M):
        parents[target].add(source)

    studied = [
        n
        for n, label in labels.items()
        if label.split("\\n")[0] == "finetune" or label.startswith("geometry_")
    ]
    optional = [
        n
        for n in studied
        if labels[n].startswith("geometry_sentence_embeddings") and "sts: sickr" in labels[n]
    ]
    assert len(studied) > 10 and len(optional) == 1, sorted(labels.values())

    def from_download(node: str, seen: set[str]) -> bool:
        if labels[node].startswith("download_source") or node in optional:
            return True
        seen.add(node)
        return bool(parents[node] - seen) and all(
            from_download(p, seen) for p in parents[node] - seen
        )

    lonely = [labels[n] for n in studied if n not in optional and not from_download(n, set())]
    assert not lonely, f"jobs not downstream of a download: {lonely}"


def test_dry_run_of_the_sensitivity_study_lists_its_grid(tmp_path):
    mirror = tiny_workflow.shared_mirror()
    if mirror is None:
        pytest.skip("offline mirror not found (set ISOTROPY_MIRROR)")
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    command = [
        sys.executable,
        "-c",
        WRAPPER,
        "--snakefile",
        str(tiny_workflow.ROOT / "Snakefile"),
        "--directory",
        str(tmp_path / "work"),
        "--configfile",
        str(config),
        "--cores",
        "1",
        "--dry-run",
        "sensitivity_study",
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=tiny_workflow.snakemake_environment(mirror),
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    # config.yaml's default grid: 2 setups x 3 vector sets x 3 label sets x 1 seed
    assert re.search(r"optimize_sensitivity\s+18\b", output), output[-3000:]
    for rule in ("sensitivity_labels", "sensitivity_orthogonal", "plot_sensitivity"):
        assert f"rule {rule}" in output, output[-3000:]
    loaded = [line for line in output.splitlines() if line.startswith("HEAVY_MODULES_LOADED=")]
    assert loaded == ["HEAVY_MODULES_LOADED="], loaded
