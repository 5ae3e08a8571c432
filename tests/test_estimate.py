"""What `make run` / `make preview` say before they start: the effective configuration, laid
over from every file given, and the time left from measured per-update costs."""

from __future__ import annotations

import logging
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import tiny_workflow
import yaml

from isotropy import compute, costs, estimate, paths, resume, studies
from isotropy.configuration import Config
from isotropy.configuration.optimisation import Optimisation
from isotropy.studies import paper_cost
from isotropy.workflow import config as workflow_config
from isotropy.workflow import targets

ROOT = Path(__file__).resolve().parents[1]
SPEED_PROBE = costs.speed_probe  # the real one: the fixture below stands in for it


@pytest.fixture(autouse=True)
def _measured_cpu_speed(monkeypatch):
    """The probe as it ran where the costs were measured (factor 1), so that the figures below
    do not depend on this machine's speed; the tests of the probe itself undo it."""
    monkeypatch.setattr(costs, "speed_probe", lambda: costs.PROBE_CPU_SECONDS)


def _make_dry_run(target: str, *variables: str) -> list[list[str]]:
    """The commands `make <target>` would run, split into words."""
    command = ["make", "-n", "-C", str(ROOT), target, *variables]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return [shlex.split(line) for line in result.stdout.splitlines() if line.strip()]


def test_make_run_lays_config_over_the_defaults_and_the_offline_overlay():
    commands = _make_dry_run("run", "CONFIG=my.yaml", "ISOTROPY_MIRROR=/some/mirror")
    snakemake = [c for c in commands if c[0].endswith("/snakemake")]
    assert len(snakemake) == 1, commands
    words = snakemake[0]
    # One --configfile with all three files, in order: a second --configfile would replace
    # the first.
    assert words.count("--configfile") == 1
    files = ["config.yaml", "config/offline.yaml", "my.yaml"]
    assert words[words.index("--configfile") + 1 :][:3] == files
    estimate_call = next(c for c in commands if "isotropy.estimate" in c)
    assert estimate_call[estimate_call.index("--configfile") + 1 :][:3] == files
    assert commands.index(estimate_call) < commands.index(snakemake[0])  # the estimate first


def _main_jobs(config, study="main", skip=()):
    """(rule, wildcards) of a study's runs, embeddings and lookups, as the dry run names them,
    less the runs in ``skip`` ((dataset, seed): written already)."""
    runs = targets.study_runs(Config.model_validate(config), study)
    jobs = [
        (
            "optimize_embeddings",
            dict(study=study, encoder=r["encoder"], dataset=r["dataset"], seed=str(r["seed"])),
        )
        for r in runs
        if (r["dataset"], r["seed"]) not in skip
    ]
    for encoder, dataset in dict.fromkeys((r["encoder"], r["dataset"]) for r in runs):
        kind = config["encoders"][encoder]["kind"]
        rule = "lookup_word_vectors" if kind == "word-vectors" else "embed_sentences"
        jobs.append((rule, {"encoder": encoder, "dataset": dataset}))
    return jobs


def test_time_left_counts_only_what_is_not_written(tmp_path, monkeypatch):
    """The estimate is the jobs the dry run plans, each at its measured cost: here all but
    polarity's first run and its embeddings, which are written (Snakemake leaves them out)."""
    measured = {"update_cpu_seconds": 0.5, "evaluation_cpu_seconds": 2.0}
    sets, by_dataset = ("polarity", "snli", "pos", "supersense"), costs.by_dataset
    fixed = {quantity: dict.fromkeys(sets, seconds) for quantity, seconds in measured.items()}
    monkeypatch.setattr(costs, "by_dataset", lambda q: fixed[q] if q in fixed else by_dataset(q))
    for name, value in {
        "EMBED_CPU_SECONDS_PER_TEXT": {
            ("sentence-transformers/all-MiniLM-L6-v2", "polarity"): 0.01
        },
        "EMBED_LOAD_CPU_SECONDS": 4.0,
        "WORD_VECTOR_CPU_SECONDS": 30.0,
        "MIRROR_UNIQUE_TEXTS": {"polarity": 1000, "snli": 2000, "pos": 500, "supersense": 500},
    }.items():
        monkeypatch.setattr(paper_cost, name, value)
    monkeypatch.setattr(costs, "available_cores", lambda: 2)
    config = workflow_config.load_config([str(ROOT / "config.yaml")]).config
    config["main"]["metric_stride"] = 50
    config["device"] = "cpu"
    # 1,000 updates at 0.5 s, metrics at step 0 and every 50th update (21 evaluations) at 2 s.
    per_run = 1000 * 0.5 + 21 * 2.0
    settings = Config.model_validate(config).main
    assert paper_cost.run_seconds("polarity", settings, "cpu") == per_run
    # SNLI (not measured: polarity's cost per text stands in): 2,000 texts at 0.01 CPU-s plus
    # 4 CPU-s to load the model, on 2 threads: 12 s.
    # Word vectors: one 30 s lookup for pos and one for supersense: 60 s.
    assert (
        paper_cost.embedding_seconds(Config.model_validate(config), "miniLM", "snli", tmp_path)
        == 12.0
    )
    polarity = {"encoder": "miniLM", "dataset": "polarity"}
    jobs = [job for job in _main_jobs(config, skip={("polarity", 0)}) if job[1] != polarity]
    # Jobs to start: 19 runs, 3 embeddings or lookups, download and preparation of 4 data
    # sets, table 1, correlations and two figures: 34, at the fixed start-up cost each.
    jobs += [("download_source", {}), ("prepare_dataset", {})] * 4 + [("plot", {})] * 4
    overhead = 34 * costs.JOB_OVERHEAD_SECONDS
    total = 19 * per_run + 12.0 + 60.0 + overhead
    lines, seconds = estimate.describe(Config.model_validate(config), jobs, "cpu", "main_study")
    assert seconds == pytest.approx(total)
    assert lines[0].startswith(
        f"main_study: 34 jobs to run (Snakemake's dry run), device cpu; time left: about "
        f"{estimate.duration(total)} for 2 idle cores"
    )
    start_up = costs.JOB_OVERHEAD_SECONDS
    assert lines[1:5] == [
        f"  optimize_embeddings: 19 jobs, {estimate.duration(19 * (per_run + start_up))}",
        f"  lookup_word_vectors: 2 jobs, {estimate.duration(60 + 2 * start_up)}",
        f"  embed_sentences: 1 jobs, {estimate.duration(12 + start_up)}",
        f"  12 short jobs (downloads, preparation, tables, figures): start-ups only, "
        f"{estimate.duration(12 * start_up)}",
    ]
    assert estimate.duration(total) == "2 h 57 min" and estimate.duration(0) == "0 s"
    assert lines[-1].startswith("a long run: more than 15 min on 2 idle cores (Ctrl-C stops")
    assert estimate.duration(330) == "5.5 min"
    # where the probe takes twice the CPU time, every CPU cost doubles, not the start-ups
    monkeypatch.setattr(costs, "speed_probe", lambda: 2 * costs.PROBE_CPU_SECONDS)
    lines, slower = estimate.describe(Config.model_validate(config), jobs, "cpu", "main_study")
    assert slower - overhead == pytest.approx(2 * (total - overhead))
    assert lines[5].startswith("CPU costs x 2.00: a fixed one-thread workload took 0.180 CPU-s")
    monkeypatch.setattr(costs, "speed_probe", lambda: 100 * costs.PROBE_CPU_SECONDS)
    clamped = estimate.describe(Config.model_validate(config), jobs, "cpu", "x")[0]
    assert clamped[5].startswith("CPU costs x 4.00 (clamped)")


TOY_SNAKEFILE = """
rule all:
    input: "table.csv"

rule optimize:
    output: "trace.txt"
    params: updates=config["updates"]
    shell: "echo {params.updates} > {output}"

rule tabulate:
    input: "trace.txt"
    output: "table.csv"
    shell: "cat {input} > {output}"
"""


def test_a_run_is_done_only_with_the_settings_asked_for(tmp_path):
    """What is done is what Snakemake will not run again: a job run with other params, or whose
    output is gone, is in the estimate; one written with the same params is not."""
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text(TOY_SNAKEFILE)
    twelve, six = tmp_path / "twelve.yaml", tmp_path / "six.yaml"
    twelve.write_text("updates: 12\n")
    six.write_text("updates: 6\n")
    tiny_workflow.snakemake(
        "-s", str(snakefile), "-d", str(tmp_path), "--configfile", str(twelve), check=True
    )

    def planned(config):
        return estimate.dry_run_jobs([str(config)], "all", tmp_path, snakefile)

    assert planned(twelve) == []  # written with these settings: nothing left
    assert [rule for rule, _ in planned(six)] == ["optimize", "tabulate", "all"]
    (tmp_path / "table.csv").unlink()
    assert [rule for rule, _ in planned(twelve)] == ["tabulate", "all"]


@pytest.mark.slow
def test_the_run_not_its_dry_run_records_its_effective_configuration(tmp_path):
    """onstart (as rules/common.smk calls it) records the effective configuration of the run's
    target; its dry run writes nothing. While it runs: the steps done, the time left after each."""
    tiny_workflow.write_started_snakefile(
        tmp_path,
        """
        rule all:
            input: "b.txt"

        rule a:
            output: "a.txt"
            shell: "echo a > {output}"

        rule b:
            input: "a.txt"
            output: "b.txt"
            shell: "cat {input} > {output}"
        """,
    )
    command = ["all", "--cores", "1"]
    dry = tiny_workflow.snakemake_in(tmp_path, *command, "-n")
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert not (tmp_path / "logs").exists()  # a dry run: nothing
    result = tiny_workflow.snakemake_in(tmp_path, *command)
    assert result.returncode == 0, result.stderr[-2000:]
    recorded = tmp_path / "logs/effective-config/all.yaml"
    assert yaml.safe_load(recorded.read_text()) == {"device": "cpu"}
    assert "3 of 3 steps (100%) done" in result.stderr, result.stderr
    said = "\njobs: 2/3, 66.7% of the work, elapsed "  # each job its start-up: Snakemake's ids
    assert said in result.stderr and "at the rate so far, jobs weighed by" in result.stderr


def test_the_estimate_gives_the_idle_time_and_the_time_at_the_present_load(monkeypatch):
    """A busy machine: also the idle time x the slowdown of one process alone, up to x that of
    one process per core; a load under 1.25x adds nothing, and neither does a GPU."""
    monkeypatch.setattr(costs, "available_cores", lambda: 2)
    config = workflow_config.load_config([str(ROOT / "config.yaml")]).config
    config["device"] = "cpu"
    jobs = _main_jobs(config, "preview")
    idle = costs.Pace(job_overhead=7.0)
    lines, total = estimate.describe(
        Config.model_validate(config), jobs, "cpu", "preview_study", idle
    )
    assert lines[0].endswith(
        f"about {estimate.duration(total)} for 2 idle cores, start-ups included"
    )
    assert total < 900 and not any("a long run" in line for line in lines)  # over 15 min: above
    loaded = costs.Pace(job_overhead=7.0, contention=3.0, contention_serial=1.5)
    busy, same = estimate.describe(Config.model_validate(config), jobs, "cpu", "x", loaded)
    # a run of one thread at a time (measured: docs/measurements.md), all cores' slowdown the bound
    assert estimate.duration(1.5 * total) != estimate.duration(3 * total)
    assert same == total and busy[0].endswith(
        f"start-ups included; at this machine's present load about {estimate.duration(1.5 * total)}"
        f" (a process alone runs 1.5x slower), up to {estimate.duration(3 * total)} if its jobs "
        "keep all 2 cores busy (3.0x: isotropy.costs.contention_probe)"
    )
    hardly = costs.Pace(job_overhead=7.0, contention=1.2, contention_serial=1.2)
    assert estimate.describe(Config.model_validate(config), jobs, "cpu", "x", hardly)[0][
        0
    ].endswith("included")
    gpu = costs.Pace(job_overhead=7.0, contention=3.0, contention_serial=3.0)
    assert (
        "load" not in estimate.describe(Config.model_validate(config), jobs, "cuda", "x", gpu)[0][0]
    )


def test_the_slowdown_is_all_the_wall_time_over_all_the_cpu_time(monkeypatch):
    """One stalled sample of three holds up the total as it would hold up a run (a median of
    the ratios would read 1x); idle samples read 1, never less; the probe times real work."""
    assert costs.slowdown([(1.0, 1.0), (1.0, 1.0), (10.0, 1.0)]) == 4.0
    assert costs.slowdown([(0.9, 1.0), (1.0, 1.0)]) == 1.0
    assert 1.0 <= costs.contention_probe(2, products=5, repeats=1) < 1000
    # Pace.here reads one process per core for the bound, one alone for the expected time
    monkeypatch.setattr(costs, "available_cores", lambda: 2)
    monkeypatch.setattr(costs, "contention_probe", lambda processes: 4.0 if processes > 1 else 2.0)
    here = costs.Pace.here()
    assert (here.contention, here.contention_serial) == (4.0, 2.0)


def test_a_prepared_table_is_counted_instead_of_the_mirror_count(tmp_path):
    table = tmp_path / "resources/data/snli.parquet"
    table.parent.mkdir(parents=True)
    pd.DataFrame({"text": ["a b", "a b", "c"], "text_pair": ["c", "d", "a b"]}).to_parquet(table)
    assert paper_cost.unique_text_count("snli", tmp_path) == 3  # "a b", "c", "d"
    assert paper_cost.unique_text_count("snli", tmp_path / "fresh") == 12_982


def test_a_bad_config_file_is_one_line_naming_it(tmp_path, capsys):
    """The loader's refusals (tests/test_config.py) reach `make run` as one line."""
    bad = tmp_path / "mine.yaml"
    bad.write_text("- a\n- b\n")
    args = ["--configfile", str(ROOT / "config.yaml"), str(bad), "--target", "preview_study"]
    assert estimate.main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Configuration error: "), err
    assert f"config file {bad} holds a list, not a mapping" in err


def test_make_resume_refuses_while_snakemake_runs_in_the_folder(tmp_path, monkeypatch):
    """`make resume` checks for a live run, then unlocks, then runs."""
    commands = _make_dry_run("resume")
    snakemake = [c for c in commands if c[0].endswith("/snakemake")]
    assert [("--unlock" in c) for c in snakemake] == [True, False], commands
    assert all("main_study" in c for c in snakemake)
    guard = next(i for i, c in enumerate(commands) if "isotropy.resume" in c)
    assert guard < commands.index(snakemake[0])
    monkeypatch.chdir(tmp_path)  # make runs it in the folder
    assert resume.main([]) == 0
    fake = tmp_path / "snakemake"  # a process whose command line is a Snakemake's
    fake.write_text("import time\ntime.sleep(60)\n")
    process = subprocess.Popen([sys.executable, str(fake), "--cores", "2"], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 10
        while not resume.running_snakemake(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert resume.running_snakemake(tmp_path) == [
            (process.pid, f"{sys.executable} {fake} --cores 2")
        ]
        (elsewhere := tmp_path / "elsewhere").mkdir()
        assert resume.running_snakemake(elsewhere) == []  # another folder's run is not this one's
        assert resume.main([]) == 1
    finally:
        process.kill()
        process.wait()
    assert resume.main([]) == 0


def test_the_probe_measures_work_not_time_passing():
    """Process-CPU time of the fixed workload: four times the products take several times
    longer (a probe that timed nothing, or the clock, would not)."""
    short, long = SPEED_PROBE(products=50), SPEED_PROBE(products=200)
    assert 0 < short and 2.5 * short < long < 8 * short


def test_a_target_snakemake_cannot_make_says_so(capsys):
    """A target the dry run refuses (here a made-up one) gets no time, only the dry run's
    reason, rather than a time the estimate does not know; and the run would stop there too."""
    assert estimate.main(["--configfile", str(ROOT / "config.yaml"), "--target", "x_study"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("x_study: no time estimate: Snakemake's dry run failed: "), err
    assert "x_study" in err.split("failed: ")[1]


def test_a_report_of_missing_results_says_so_in_one_line_and_names_the_whole_target(
    tmp_path, monkeypatch, capsys
):
    """After a preview, the main study has no results: one line, naming the preview."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "config.yaml", "config.yaml")
    settings = workflow_config.load_config(["config.yaml"]).settings
    assert estimate.report_ready("main_study", ["config.yaml"]) == 1
    assert capsys.readouterr().err == (
        "make report: main_study has no results yet (results/main/table1.csv and 5 more "
        "missing); make it first (make run)\n"
    )
    for path in studies.target_rules(settings)["preview_study"]:
        Path(path).parent.mkdir(parents=True, exist_ok=True), Path(path).touch()
    assert estimate.report_ready("preview_study", ["config.yaml"]) == 0
    assert estimate.report_ready("main_study", ["config.yaml"]) == 1
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.endswith(
        "preview_study's results are whole: make report REPORT_TARGET=preview_study\n"
    )
    assert estimate.report_ready("main_study", ["no-such.yaml"]) == 1
    assert "configuration error" in capsys.readouterr().err
    (record := Path(paths.EFFECTIVE_CONFIG) / "preview_study.yaml").parent.mkdir(parents=True)
    for planted in ("main: [", None):  # broken, then linked to a whole run's: neither is read
        record.unlink(missing_ok=True)
        record.write_text(planted) if planted else record.symlink_to(ROOT / "config.yaml")
        assert estimate.report_ready("main_study", ["config.yaml"]) == 1
        assert "make it first (make run)" in capsys.readouterr().err


def test_runs_are_costed_only_where_measured():
    """GLUE's jobs compute their metrics on a sample (appendix A, 10,000 items): the measured
    cost per update of the model on the data set holds there, and nowhere else."""
    model, cost = "sentence-transformers/all-MiniLM-L6-v2", paper_cost.SAMPLED_UPDATE_CPU_SECONDS
    per_update = cost[(model, "rte")]
    sampled = Optimisation(updates=250, metric_stride=1, metric_sample_size=paper_cost.SAMPLED_AT)
    assert paper_cost.run_seconds("rte", sampled, "cpu", model) == 250 * per_update / 2
    coarser = sampled.model_copy(update={"metric_stride": 2})
    assert paper_cost.run_seconds("rte", coarser, "cpu", model) is None
    other = sampled.model_copy(update={"metric_sample_size": 5000})
    assert paper_cost.run_seconds("rte", other, "cpu", model) is None
    assert paper_cost.run_seconds("rte", sampled, "cpu", "another/model") is None
    unsampled = sampled.model_copy(update={"metric_sample_size": None})
    assert paper_cost.run_seconds("no-such-set", unsampled, "cpu") is None
    # on a GPU every run costs the measured H100 time per update, whatever the data set or sample
    short, long = (
        paper_cost.run_seconds("x", other.model_copy(update={"updates": n}), "cuda")
        for n in (250, 1000)
    )
    assert short > 0 and long == pytest.approx(4 * short)


def test_a_run_over_a_finished_run_with_other_settings_stops_first(tmp_path, monkeypatch, capsys):
    """A run records its configuration. A preview, then the tiny overlay (or all, over main_study):
    refused before it starts, naming the finished run; REPLACE=1 runs, its report files removed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(estimate, "dry_run_jobs", lambda *_: [])  # no Snakemake: the plan is empty
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # a user's own: started() adds nothing
    files = [str(ROOT / "config.yaml"), str(ROOT / "tests/config/tiny.yaml")]
    targets = {"preview_study", "main_study", "x/y"}  # a file target: not recorded
    run = SimpleNamespace(dag_settings=SimpleNamespace(targets=targets))
    config, settings = workflow_config.load_config(files[:1])
    run.overwrite_configfiles, run.config = files[:1], config
    job = SimpleNamespace(rule=SimpleNamespace(name="copy_published_values"), wildcards_dict={})
    run.dag = SimpleNamespace(needrun_jobs=lambda: [job], jobid=lambda job: 7)  # its plan
    (gpu := tmp_path / "bin").mkdir(), (gpu / "nvidia-smi").touch(0o755)  # a GPU machine:
    monkeypatch.setenv("PATH", str(gpu)), monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setattr(costs, "available_cores", lambda: 8)
    estimate.started(run, settings)  # auto costed as cuda, one job at a time: not 4 as on 8 cores
    time_left = logging.getLogger("snakemake.logging").handlers.pop()  # its jobs' estimates
    assert time_left.costs == {7: pytest.approx(costs.JOB_OVERHEAD_SECONDS)}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # every GPU hidden: the CPU
    assert compute.planned_device("auto") == "cpu" and config["device"] == "auto"
    recorded = Path("logs/effective-config/preview_study.yaml")
    assert capsys.readouterr().err == "" and len(list(recorded.parent.iterdir())) == 2
    assert yaml.safe_load(recorded.read_text()) == config
    args = ["--configfile", *files, "--target", "preview_study"]
    assert estimate.main(args) == 0  # none of its results there: nothing overwritten
    made, claims = Path(paths.PREVIEW_CLAIMS).with_name("table1.csv"), Path(paths.PREVIEW_CLAIMS)
    claims.parent.mkdir(parents=True), Path("results/main").mkdir()
    made.touch(), claims.touch(), Path("results/main/table1.csv").touch()
    assert estimate.main(["--configfile", files[0], "--target", "preview_study"]) == 0  # the same
    assert capsys.readouterr() and estimate.main(args) == 1
    said = capsys.readouterr().err
    assert said.startswith("preview_study: refused before it starts: results/preview/ holds ")
    assert f"made with {files[0]} (logs/effective-config/preview_study.yaml)" in said
    assert "these settings differ (" in said and said.endswith("with REPLACE=1\n")
    assert estimate.main([*args[:4], "all"]) == 1 and "main_study run" in capsys.readouterr().err
    assert estimate.main(["--finished", "replace", *args]) == 0 and made.exists()
    assert not claims.exists()


def test_a_finished_run_s_record_is_read_through_the_intake_s_door(tmp_path, monkeypatch):
    """A recorded configuration that is a link is not followed: its settings cannot be read."""
    monkeypatch.chdir(tmp_path)
    config, settings = loaded = workflow_config.load_config([ROOT / "config.yaml"])
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**config, "device": "cpu"}))
    (record := Path(paths.EFFECTIVE_CONFIG) / "preview_study.yaml").parent.mkdir(parents=True)
    record.symlink_to(other)
    for path in estimate.results_of("preview_study", settings):
        Path(path).parent.mkdir(parents=True, exist_ok=True), Path(path).touch()
    name, said = estimate.finished_run("preview_study", loaded)
    assert name == "preview_study" and "its settings cannot be read (" in said, said
