"""A workflow step runs outside Snakemake (python -m isotropy.debug), with what Snakemake would
give it."""

import os
import subprocess
import sys

import pandas as pd
from processes import run_ok

from isotropy.debug import ROOT


def test_a_step_runs_outside_snakemake(tmp_path):
    raw = tmp_path / "resources/raw/polarity"
    raw.mkdir(parents=True)
    (raw / "rt-polarity.pos").write_text("a fine film\nsharp and funny\n")
    (raw / "rt-polarity.neg").write_text("a dull plot\n")
    (raw / "manifest.json").write_text("{}")
    env = {
        k: v for k, v in os.environ.items() if k != "ISOTROPY_MIRROR"
    }  # the originals: no mirror check
    run_ok(
        [
            sys.executable,
            "-m",
            "isotropy.debug",
            "prepare_dataset",
            "dataset=polarity",
            "-d",
            str(tmp_path),
            "--configfile",
            str(ROOT / "config" / "offline.yaml"),
        ],
        env=env,
        timeout=300,
    )
    table = pd.read_parquet(tmp_path / "resources/data/polarity.parquet")
    assert table.to_dict("list") == {
        "text": ["a fine film", "sharp and funny", "a dull plot"],
        "label": ["positive", "positive", "negative"],
    }
    assert (tmp_path / "resources/data/polarity.parquet.provenance.json").is_file()
    assert (tmp_path / "logs/resources/data/polarity.log").is_file()


def test_missing_wildcards_are_named(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "isotropy.debug", "prepare_dataset", "-d", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0 and "needs the wildcards ['dataset']" in result.stderr, (
        result.stderr[-2000:]
    )
