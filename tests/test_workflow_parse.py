"""The workflow parses with Snakemake and the light configuration code only: no torch.

A dry run, a lint or a report must not need the science stack (nor pay for importing it), so
the Snakefile, the rules and every helper they import at parse time stay torch-free.
"""

import os
import re

import pytest
import tiny_workflow

TINY_EXTENSIONS = tiny_workflow.ROOT / "config" / "extensions_tiny.yaml"


def test_dry_run_of_every_study_does_not_import_torch(tmp_path):
    output = tiny_workflow.dry_run(tmp_path, "all", torch_free=True).stdout
    assert "rule finetune" in output and "rule geometry_token_embeddings" in output, output[-3000:]


def test_every_istar_and_geometry_job_is_downstream_of_a_download(tmp_path):
    # One way in: the data of every study come from download_source (SICK-R excepted when the
    # mirror lacks it: optional, its job marks it unavailable without an input).
    mirror = tiny_workflow.require_mirror()
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    result = tiny_workflow.run_snakemake(
        tmp_path / "work", [config], mirror, "--dag", "dot", "--", "all"
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
    # SICK-R, absent from the mirror, is planned out at parse time: no job at all
    assert len(studied) > 10 and not optional, sorted(labels.values())

    def from_download(node: str, seen: set[str]) -> bool:
        if labels[node].startswith("download_source") or node in optional:
            return True
        seen.add(node)
        return bool(parents[node] - seen) and all(
            from_download(p, seen) for p in parents[node] - seen
        )

    lonely = [labels[n] for n in studied if n not in optional and not from_download(n, set())]
    assert not lonely, f"jobs not downstream of a download: {lonely}"


def planned_downloads(tmp_path, configfiles: list[str], mirror) -> set[str]:
    """The sources a dry run of main_study would download, with these config files."""
    configs = [tiny_workflow.ROOT / name for name in configfiles]
    result = tiny_workflow.run_snakemake(tmp_path, configs, mirror, "--dry-run", "main_study")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    return set(re.findall(r"wildcards: source=(\S+)", output))


def test_default_config_downloads_the_papers_supersense_data_and_offline_keeps_the_standin(
    tmp_path,
):
    online = planned_downloads(tmp_path / "online", ["config.yaml"], None)
    assert "supersense_features" in online and "supersense_words" not in online
    mirror = tiny_workflow.require_mirror()
    offline = planned_downloads(
        tmp_path / "offline", ["config.yaml", "config/offline.yaml"], mirror
    )
    assert {"supersense_words", "wordnet"} <= offline and "supersense_features" not in offline


@pytest.mark.parametrize(
    "overlay, message",
    [
        # else it would fail in the job, after the downloads
        (
            {"device": "cuda"},
            "device: 'cuda' asks for a CUDA GPU, but this machine has none visible to torch",
        ),
        # the Snakefile runs every cross-check (tests/test_config.py)
        (
            {"main": {"setups": {"polarty": {"encoder": "miniLM", "bias": False}}}},
            "main.setups: 'polarty' is not a registered data set (registered: ",
        ),
    ],
)
def test_dry_run_refuses_what_no_job_could_do(tmp_path, overlay, message):
    import torch

    if overlay.get("device") and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = tiny_workflow.dry_run(tmp_path, "all", overlay)
    assert result.returncode != 0 and message in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize(
    "target, overlays, trace",
    [
        ("all", [], "results/main/miniLM/polarity/seed0/trace.parquet"),
        (
            "extensions_study",
            [TINY_EXTENSIONS],
            "results/extensions/runs/polarity/linear/seed0/trace.parquet",
        ),
    ],
)
def test_truncated_vectors_are_named_before_any_job_and_no_result_is_lost(
    tmp_path, target, overlays, trace
):
    """Damaged vectors are refused while the DAG is built, before Snakemake removes the results
    made from them (the main and the extension study's runs)."""
    import numpy as np

    embeddings = tmp_path / "work/resources/embeddings/miniLM/polarity"
    embeddings.mkdir(parents=True)
    vectors = embeddings / "vectors.npy"
    np.save(vectors, np.ones((30, 4), dtype=np.float32))
    size = vectors.stat().st_size
    os.truncate(vectors, size - 64)
    trace = tmp_path / "work" / trace
    trace.parent.mkdir(parents=True)
    trace.write_bytes(b"a valid result")
    result = tiny_workflow.dry_run(tmp_path, target, *overlays)
    assert result.returncode != 0, result.stdout[-3000:]
    assert (
        f"resources/embeddings/miniLM/polarity/vectors.npy has {size - 64:,} bytes, but its header "
        f"(shape (30, 4), float32) needs {size:,}: it is truncated or damaged; re-make it: rm -f "
        "resources/embeddings/miniLM/polarity/vectors.npy, then run again; nothing was run"
    ) in result.stdout, result.stdout[-3000:]
    assert trace.read_bytes() == b"a valid result"


def test_dry_run_of_the_sensitivity_study_lists_its_grid(tmp_path):
    output = tiny_workflow.dry_run(tmp_path, "sensitivity_study", torch_free=True).stdout
    # config.yaml's default grid: 26 cells x 5 seeds
    assert re.search(r"optimize_sensitivity\s+130\b", output), output[-3000:]
    assert re.search(r"sensitivity_cell\s+26\b", output), output[-3000:]
    for rule in ("sensitivity_labels", "sensitivity_vectors", "plot_sensitivity_phases"):
        assert f"rule {rule}" in output, output[-3000:]
