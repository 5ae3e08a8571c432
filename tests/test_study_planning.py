"""What the workflow plans from the configuration and the files present: study tables that
accumulate run by run, and data sets the mirror lacks planned out at parse time."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest
import tiny_workflow
from tiny_workflow import offline_config

from isotropy import standins
from isotropy.summaries import parameter_table
from isotropy.workflow import config as workflow_config
from isotropy.workflow import inputs as workflow_inputs
from isotropy.workflow import targets

GLUE_MIRROR_TASKS = ("cola", "mrpc", "rte", "sst2", "wnli")


def _config(**sections):
    return workflow_config.check_loaded_config(
        workflow_config.deep_merge(offline_config(), sections)
    )


def _write_run(root, study, encoder, dataset, seed, items):
    """A synthetic run record: summary.json and trace.parquet, as rule optimize_embeddings
    writes."""
    folder = root / "results" / study / encoder / dataset / f"seed{seed}"
    folder.mkdir(parents=True)
    summary = {
        "items": items,
        "rows": items,
        "dim": 384,
        "labels": 2,
        "params": items * 384 + 770,
        "classifier_params": 770,
        "dropped_items": 0,
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    pd.DataFrame(
        {"step": [0, 1], "isoscore": [0.5, 0.4], "silhouette": [0.1, 0.2], "seed": seed}
    ).to_parquet(folder / "trace.parquet")


def test_glue_table_keeps_the_earlier_runs_the_configuration_still_names(tmp_path):
    """One encoder added for one task: the five-task miniLM run stays in the tables; a run of an
    encoder no longer defined, of no GLUE task or unfinished is left out."""
    for i, task in enumerate(GLUE_MIRROR_TASKS):
        _write_run(tmp_path, "glue", "miniLM", task, 0, 100 + i)
    _write_run(tmp_path, "glue", "gone", "wnli", 0, 10)
    _write_run(tmp_path, "glue", "miniLM", "notatask", 0, 10)
    (tmp_path / "results/glue/mpnet/rte/seed0").mkdir(parents=True)  # no files
    config = _config(glue={"encoders": ["mpnet"], "tasks": ["wnli"], "seeds": [0]})
    # before the mpnet run exists: it is planned first, the miniLM runs follow
    runs = targets.table_runs(config, "glue", root=str(tmp_path))
    assert runs[0] == {"encoder": "mpnet", "dataset": "wnli", "seed": 0}
    assert len(runs) == 6
    _write_run(tmp_path, "glue", "mpnet", "wnli", 0, 200)
    assert targets.table_runs(config, "glue", root=str(tmp_path)) == runs


def test_table1_names_the_vectors_each_setup_read(tmp_path, monkeypatch):
    """table1.csv names the offline GloVe 50-d vectors as the stand-in they are."""
    mirror = tiny_workflow.require_mirror()
    monkeypatch.setenv("ISOTROPY_MIRROR", str(mirror))
    config = _config()
    labels = standins.encoder_labels(config, standins.workflow_stand_ins(config))
    _write_run(tmp_path, "main", "miniLM", "polarity", 0, 30)
    _write_run(tmp_path, "main", "word2vec", "pos", 0, 20)
    _write_run(tmp_path, "main", "word2vec", "pos", 1, 20)
    files = sorted(tmp_path.glob("results/main/*/*/seed*/summary.json"))
    keys = [{"encoder": f.parts[-4], "dataset": f.parts[-3]} for f in files]
    table = parameter_table(files, keys, labels)
    assert list(table.columns[:3]) == ["encoder", "vectors", "dataset"]
    assert dict(zip(table["encoder"], table["vectors"])) == {
        "miniLM": "miniLM",
        "word2vec": "GloVe 50-d (stand-in for word2vec 300-d)",
    }
    assert len(table) == 2  # one row per setup, whatever its seeds


def test_main_table_keeps_other_seeds_of_configured_setups_only(tmp_path):
    config = _config(main={"seeds": [0]})
    setups = config.main.setups
    dataset, setup = next(iter(setups.items()))
    _write_run(tmp_path, "main", setup.encoder, dataset, 3, 10)  # another seed: kept
    _write_run(tmp_path, "main", "someother", dataset, 0, 10)  # not its configured encoder
    runs = targets.table_runs(config, "main", root=str(tmp_path))
    assert runs[: len(setups)] == targets.study_runs(config, "main")
    assert runs[len(setups) :] == [{"encoder": setup.encoder, "dataset": dataset, "seed": 3}]


def test_sickr_is_planned_once_the_mirror_holds_it(tmp_path, monkeypatch):
    """The mirror lacking every optional STS set: tests/test_sts_sources.py."""
    monkeypatch.delenv("ISOTROPY_MIRROR", raising=False)  # the config's mirror, not CI's
    mirror = tmp_path / "mirror"
    (mirror / "sick").mkdir(parents=True)
    (mirror / "sick/SICK.txt").write_text("pair_ID\n")
    config = _config(mirror=str(mirror))
    semeval = ["sts12", "sts13", "sts14", "sts15", "sts16"]  # optional too, absent here
    assert workflow_inputs.unavailable_sts_datasets(config) == semeval
    files = workflow_inputs.collected_sts_files(config)(None)
    assert list(dict.fromkeys(path.split("/")[3] for path in files)) == ["stsb", "sickr"]


@pytest.mark.parametrize(
    ("targets", "planned", "notes"),
    [
        (["geometry_study"], "rule geometry_sentence_embeddings", 1),
        # only a run that plans the geometry study's STS table names SICK-R
        pytest.param(
            ["main_study", "preview_study"], "rule optimize_embeddings", 0, marks=pytest.mark.slow
        ),
    ],
)
def test_a_dry_run_plans_no_job_the_mirror_cannot_feed(tmp_path, targets, planned, notes):
    mirror = tiny_workflow.require_mirror()
    if (mirror / "sick/SICK.txt").is_file():
        pytest.skip("needs the offline mirror without SICK-R")
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    result = tiny_workflow.run_snakemake(tmp_path / "work", [config], mirror, "--dry-run", *targets)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert planned in output
    # the one note (where the run plans STS sets), and no job nor file of SICK-R
    assert output.count("STS data set 'sickr' is not in the data mirror") == notes
    assert output.lower().count("sickr") == notes


def test_section2_metrics_parameter_only_when_a_study_records_them():
    assert targets.section2_params(_config()) == {}
    params = targets.section2_params(_config(main={"section2_metrics": True}))
    wildcards = SimpleNamespace(study="main")
    assert params["section2_metrics"](wildcards) is True
    wildcards.study = "glue"
    assert params["section2_metrics"](wildcards) is False
