"""The workflow parses with Snakemake and the light configuration code only: no torch.

A dry run, a lint or a report must not need the science stack (nor pay for importing it), so
the Snakefile, the rules and every helper they import at parse time stay torch-free.
"""

import os
import re
import subprocess

import pytest
import tiny_workflow

# Runs Snakemake in this interpreter and prints which heavy modules it loaded, after it exits,
# and every rule parameter Snakemake cannot compare between runs: it records a parameter only
# when it is a plain value (persistence._serialize_param_builtin), and ignores any other
# object, so a change inside it would re-run nothing.
WRAPPER = """
import runpy, sys
from snakemake.persistence import UNREPRESENTABLE, PersistenceBase
from snakemake.rules import Rule
untracked = set()
expand_params = Rule.expand_params
def checked_expand_params(self, *args, **kwargs):
    params, non_derived = expand_params(self, *args, **kwargs)
    for name, value in params.items():
        if any(value is item for item in non_derived):
            if PersistenceBase._serialize_param_builtin(None, value) is UNREPRESENTABLE:
                untracked.add(f"{self.name}.{name}:{type(value).__name__}")
    return params, non_derived
Rule.expand_params = checked_expand_params
sys.argv = ["snakemake", *sys.argv[1:]]
try:
    runpy.run_module("snakemake", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as stop:
    code = stop.code
heavy = ("torch", "transformers", "sentence_transformers")
print("HEAVY_MODULES_LOADED=" + ",".join(sorted(m for m in heavy if m in sys.modules)))
print("UNTRACKED_PARAMS=" + ",".join(sorted(untracked)))
sys.exit(code)
"""


def torch_free_dry_run(tmp_path, target: str) -> str:
    """The output of a dry run of ``target`` on the tiny configuration, which must succeed
    without importing the science stack."""
    mirror = tiny_workflow.require_mirror()
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    result = tiny_workflow.run_snakemake(
        tmp_path / "work", [config], mirror, "--dry-run", target, wrapper=WRAPPER
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    loaded = [line for line in output.splitlines() if line.startswith("HEAVY_MODULES_LOADED=")]
    assert loaded == ["HEAVY_MODULES_LOADED="], (
        f"parsing the workflow imported {loaded}; move that import out of parse time"
    )
    return output


def test_dry_run_of_every_study_does_not_import_torch(tmp_path):
    output = torch_free_dry_run(tmp_path, "all")
    assert "rule finetune" in output and "rule geometry_token_embeddings" in output, output[-3000:]
    loaded = [line for line in output.splitlines() if line.startswith("HEAVY_MODULES_LOADED=")]
    assert loaded == ["HEAVY_MODULES_LOADED="], (
        f"parsing the workflow imported {loaded}; move that import out of parse time"
    )
    # Every parameter of every job is a value Snakemake compares (docs/architecture.md: a
    # changed value re-runs exactly the affected jobs); a ModelSpec object was not.
    untracked = [line for line in output.splitlines() if line.startswith("UNTRACKED_PARAMS=")]
    assert untracked == ["UNTRACKED_PARAMS="], (
        f"{untracked}: Snakemake ignores these parameters; pass plain values (a dict, a list)"
    )


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


def _dry_run(tmp_path, *overlays: dict) -> subprocess.CompletedProcess:
    """A dry run of the tiny configuration with ``overlays`` laid over it as further config
    files."""
    import yaml

    mirror = tiny_workflow.require_mirror()
    files = [tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)]
    for index, overlay in enumerate(overlays):
        files.append(tmp_path / f"overlay{index}.yaml")
        files[-1].write_text(yaml.safe_dump(overlay))
    return tiny_workflow.run_snakemake(tmp_path / "work", files, mirror, "--dry-run", "all")


@pytest.mark.parametrize(
    "overlay, message",
    [
        # issue 26, case 10: passed the dry run and failed in the job, after the downloads.
        (
            {"device": "cuda"},
            "device: 'cuda' asks for a CUDA GPU, but this machine has none visible to torch",
        ),
        # case 7: ignored by the key-by-key merge, 8 runs planned.
        (
            {"main": {"setups": {}}},
            "main.setups: {} in config file ",
        ),
        # issue 25: a misspelt setup ended in MissingInputException in rule tabulate_parameters.
        (
            {"main": {"setups": {"polarty": {"encoder": "miniLM", "bias": False}}}},
            "main.setups: 'polarty' is not a registered data set (registered: ",
        ),
        # issue 25: one `models` registry, named by key from encoders, geometry and I-STAR.
        (
            {"geometry": {"clusters": {"models": ["miniLN"]}}},
            "geometry.clusters.models: 'miniLN' is not defined under 'models' (registered: ",
        ),
    ],
)
def test_dry_run_refuses_what_no_job_could_do(tmp_path, overlay, message):
    import torch

    if overlay.get("device") and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = _dry_run(tmp_path, overlay)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    assert message in output, output[-3000:]


def test_truncated_vectors_are_named_before_any_job_and_no_result_is_lost(tmp_path):
    """Issue 26, case 3: the re-run failed in the job (`mmap length is greater than file size`)
    after Snakemake had removed the valid trace and summary made from the vectors."""
    import numpy as np

    embeddings = tmp_path / "work/resources/embeddings/miniLM/polarity"
    embeddings.mkdir(parents=True)
    vectors = embeddings / "vectors.npy"
    np.save(vectors, np.ones((30, 4), dtype=np.float32))
    size = vectors.stat().st_size
    os.truncate(vectors, size - 64)
    trace = tmp_path / "work/results/main/miniLM/polarity/seed0/trace.parquet"
    trace.parent.mkdir(parents=True)
    trace.write_bytes(b"a valid result")
    result = _dry_run(tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    assert (
        f"resources/embeddings/miniLM/polarity/vectors.npy has {size - 64:,} bytes, but its header "
        f"(shape (30, 4), float32) needs {size:,}: it is truncated or damaged; re-make it: rm -f "
        "resources/embeddings/miniLM/polarity/vectors.npy, then run again (rule embed_sentences"
    ) in output, output[-3000:]
    assert trace.read_bytes() == b"a valid result"


def test_dry_run_of_the_sensitivity_study_lists_its_grid(tmp_path):
    output = torch_free_dry_run(tmp_path, "sensitivity_study")
    # config.yaml's default grid: 26 cells x 5 seeds (22, the two learning-rate cells and the two
    # matched-norm PCA cells of issue 47)
    assert re.search(r"optimize_sensitivity\s+130\b", output), output[-3000:]
    assert re.search(r"sensitivity_cell\s+26\b", output), output[-3000:]
    for rule in ("sensitivity_labels", "sensitivity_vectors", "plot_sensitivity_phases"):
        assert f"rule {rule}" in output, output[-3000:]
