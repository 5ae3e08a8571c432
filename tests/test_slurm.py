"""The workflow on a real SLURM cluster, through `snakemake --profile slurm`, as users type it.

A private single-node cluster (tests/slurm/start_cluster.sh, stopped by stop_cluster.sh) whose
node advertises one GPU (gres without hardware): GPU rules go through SLURM's GPU scheduling
while their code runs on the CPU. Needs root and apt-get (or SLURM installed); skipped
otherwise, except under CI, where a skip is an error. The profile checks need no cluster.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import filelock
import numpy as np
import pandas as pd
import pytest
import tiny_workflow  # tests/tiny_workflow.py (pytest puts tests/ on sys.path)
import yaml
from tiny_workflow import SNAKEMAKE, rule_bodies

ROOT = Path(__file__).resolve().parents[1]
SLURM_SCRIPTS = ROOT / "tests" / "slurm"
PROFILE = ROOT / "profiles" / "slurm"
# What users type from the repository root: Snakemake finds ./slurm, a link to profiles/slurm.
PROFILE_NAME = "slurm"
# What this private cluster needs on top of the profile (see the module docstring).
TEST_CLUSTER_ARGS = (
    "--slurm-status-command squeue --slurm-init-seconds-before-status-checks 2 "
    "--slurm-keep-successful-logs --latency-wait 10"
).split()

# Sentence embeddings of one data set: two CPU rules, then a GPU rule. Every level of the
# job graph costs 35-50 s through SLURM here (two nested Snakemake start-ups per job, and the
# plugin's status-check interval, which grows by 10 s per check), so the chain is kept short.
# optimize_embeddings is named in the GPU-partition override all the same.
TARGET = "resources/embeddings/miniLM/polarity/vectors.npy"
GPU_RULES = {"embed_sentences"}
CPU_RULES = {"download_source", "prepare_dataset"}
GPU_PARTITION_RULES = ("embed_sentences", "optimize_embeddings")


def _why_no_cluster() -> str | None:
    if not sys.platform.startswith("linux"):
        return "a SLURM test cluster needs Linux"
    if os.geteuid() != 0:
        return "starting a SLURM test cluster needs root (apt-get, daemons, /etc/slurm)"
    have_slurm = all(shutil.which(c) for c in ("slurmctld", "slurmd", "sbatch", "munged"))
    if not have_slurm and not shutil.which("apt-get"):
        return "SLURM is not installed and apt-get is not available to install it"
    return None


class Cluster:
    """The running test cluster: its scratch folder and its job records."""

    def __init__(self, scratch: Path):
        self.scratch = scratch

    def finished_jobs(self) -> list[dict[str, str]]:
        """Job completion log records (jobcomp/filetxt): one per finished job."""
        path = self.scratch / "jobcomp.log"
        if not path.exists():
            return []
        return [
            dict(re.findall(r"(\w+)=(\S*)", line))
            for line in path.read_text().splitlines()
            if line.strip()
        ]

    def job_details(self, job_id: str) -> dict[str, str]:
        """`scontrol show job` for one job (finished jobs stay known for MinJobAge=600 s)."""
        out = subprocess.run(
            ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, timeout=30
        )
        assert out.returncode == 0, out.stderr
        return dict(re.findall(r"(\S+?)=(\S*)", out.stdout))

    def jobs_of(self, workdir: Path) -> list[dict[str, str]]:
        """Finished jobs run in ``workdir``, each with its rule (from the job comment the
        executor sets) and its scontrol details, in submission order."""
        jobs = []
        for record in self.finished_jobs():
            if Path(record.get("WorkDir", "")).resolve() != workdir.resolve():
                continue
            details = self.job_details(record["JobId"])
            match = re.match(r"rule_(\w+?)(?:_wildcards_.*)?$", details.get("Comment", ""))
            assert match, f"job {record['JobId']} has no rule comment: {details.get('Comment')!r}"
            jobs.append({**record, **details, "rule": match[1]})
        return sorted(jobs, key=lambda j: int(j["JobId"]))


# The cluster is machine-wide (/etc/slurm/slurm.conf, ports 6817/6818): two test runs on one
# machine (two CI clones at once) take turns, each holding this lock while its cluster is up.
CLUSTER_LOCK = Path("/tmp/isotropy-slurm-test.lock")
CLUSTER_LOCK_WAIT = int(os.environ.get("ISOTROPY_SLURM_LOCK_WAIT", "2400"))  # seconds


@contextlib.contextmanager
def _machine_lock(path: Path, wait: float):
    """Hold an exclusive lock on ``path`` (released when the process dies), waiting at most
    ``wait`` seconds for another holder; fails the test with the holder's note otherwise."""
    note = path.with_name(path.name + ".holder")
    try:
        with filelock.FileLock(path, timeout=wait):
            note.write_text(f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}\n")
            yield
    except filelock.Timeout:
        holder = note.read_text().strip() if note.is_file() else "unknown"
        pytest.fail(f"another test run holds {path} ({holder!r}) beyond {wait:.0f} s")


@pytest.fixture(scope="module")
def slurm_cluster():
    reason = _why_no_cluster()
    if reason:
        tiny_workflow.skip_or_fail(reason)
    with _machine_lock(CLUSTER_LOCK, CLUSTER_LOCK_WAIT):
        yield from _cluster()


def _cluster():
    # Short path: the munge socket lives inside it (AF_UNIX paths are limited to 108 bytes).
    scratch = Path(tempfile.mkdtemp(prefix="isoslurm-", dir="/tmp"))
    try:
        start = subprocess.run(
            [str(SLURM_SCRIPTS / "start_cluster.sh"), str(scratch)],
            capture_output=True,
            text=True,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        subprocess.run([str(SLURM_SCRIPTS / "stop_cluster.sh"), str(scratch)], timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)
        pytest.fail("start_cluster.sh did not finish within 900 s")
    if start.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        output = f"{start.stdout[-2000:]}\n{start.stderr[-4000:]}"
        message = f"start_cluster.sh exited {start.returncode}:\n{output}"
        if start.returncode in (3, 4):  # packages not installable / a real cluster's config present
            tiny_workflow.skip_or_fail(message)
        pytest.fail(message)
    try:
        yield Cluster(scratch)
    finally:
        subprocess.run([str(SLURM_SCRIPTS / "stop_cluster.sh"), str(scratch)], timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)


def _start(args: list[str], cwd: Path, env: dict, log: Path) -> subprocess.Popen:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        # Own session, so a run that overstays is stopped with everything it started.
        return subprocess.Popen(
            args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _finish(proc: subprocess.Popen, log: Path, timeout: float) -> tuple[int, str]:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        pytest.fail(
            f"{' '.join(map(str, proc.args))} did not finish within {timeout} s:\n"
            f"{log.read_text()[-4000:]}"
        )
    return proc.returncode, log.read_text()


def _resolved_resources(log: str, rule: str) -> dict[str, str]:
    """The threads and resources Snakemake printed for the (single) job of ``rule``."""
    block = re.search(rf"^rule {rule}:\n((?:    .*\n)+)", log, re.MULTILINE)
    assert block, f"no job of rule {rule} in the Snakemake log"
    found = dict(re.findall(r"(\w+)=([^,\s]+)", re.search(r"resources: (.*)", block[1])[1]))
    threads = re.search(r"threads: (\d+)", block[1])
    if threads:
        found["threads"] = threads[1]
    return found


def _minutes_to_slurm(minutes: int) -> str:
    """A time limit as scontrol prints it: [D-]HH:MM:SS."""
    days, rest = divmod(minutes, 24 * 60)
    clock = f"{rest // 60:02d}:{rest % 60:02d}:00"
    return f"{days}-{clock}" if days else clock


FAILING_SNAKEFILE = """
rule all:
    input:
        "out/flaky.txt",
        "out/broken.txt",


rule flaky:
    # Fails unless given at least 800 MB: attempt 1 asks for 400, attempt 2 for 800.
    output:
        "out/flaky.txt",
    resources:
        mem_mb=lambda wc, attempt: 400 * attempt,
        runtime=5,
    shell:
        "echo partial > {output}; "
        "if [ {resources.mem_mb} -lt 800 ]; then echo 'flaky: needs 800 MB, got "
        "{resources.mem_mb}' >&2; exit 1; fi; "
        "echo mem={resources.mem_mb} > {output}"


rule broken:
    # Always fails after writing half an output.
    output:
        "out/broken.txt",
    resources:
        mem_mb=200,
        runtime=5,
    shell:
        "echo partial > {output}; echo 'broken: fails on purpose' >&2; exit 3"
"""


RUN_NAMES = ("local", "slurm", "failing")


def _through_slurm(profile: str, *args: str) -> list[str]:
    return [*SNAKEMAKE, "--profile", profile, *TEST_CLUSTER_ARGS, "--jobs", "2", *args]


class Runs:
    """The three Snakemake runs, started together (the SLURM runs mostly wait on the
    scheduler, so overlapping them saves minutes), with exit codes and output."""

    def __init__(self, base: Path, mirror_root: Path):
        mirror = tiny_workflow.make_tiny_mirror(mirror_root, base / "mirror")
        config = tiny_workflow.write_tiny_config(base / "config.yaml", mirror)
        env = tiny_workflow.snakemake_environment(mirror)
        self.local_dir, self.slurm_dir, self.failing_dir = (base / n for n in RUN_NAMES)
        self.failing_dir.mkdir()
        (self.failing_dir / "Snakefile").write_text(FAILING_SNAKEFILE)
        workflow = [TARGET, "--configfile", str(config)]  # --configfile takes several values: last
        # The profile's GPU-partition override, exercised: GPU rules go to partition gpu.
        gpu = [f"{rule}:slurm_partition=gpu" for rule in GPU_PARTITION_RULES]
        slurm = ["--set-resources", *gpu, "--directory", str(self.slurm_dir), *workflow]
        local = [*SNAKEMAKE, "--cores", "2", "--directory", str(self.local_dir), *workflow]
        commands = {
            "local": (local, ROOT, env),
            "slurm": (_through_slurm(PROFILE_NAME, *slurm), ROOT, env),
            "failing": (_through_slurm(str(PROFILE), "--keep-going"), self.failing_dir, os.environ),
        }
        started = time.monotonic()
        procs = {
            name: _start(args, cwd, e, base / f"{name}.log")
            for name, (args, cwd, e) in commands.items()
        }
        self.results = {
            name: _finish(proc, base / f"{name}.log", timeout=540) for name, proc in procs.items()
        }
        print(
            f"\nlocal, SLURM and failing runs all finished after {time.monotonic() - started:.0f} s"
        )


@pytest.fixture(scope="module")
def runs(slurm_cluster, tmp_path_factory) -> Runs:
    mirror = tiny_workflow.require_mirror()
    return Runs(tmp_path_factory.mktemp("slurm_runs"), mirror)


@pytest.mark.slurm
@pytest.mark.slow
def test_workflow_runs_through_slurm_and_matches_a_local_run(slurm_cluster, runs):
    local_dir, slurm_dir = runs.local_dir, runs.slurm_dir
    local_rc, local_log = runs.results["local"]
    slurm_rc, slurm_log = runs.results["slurm"]
    assert local_rc == 0, local_log[-4000:]
    assert slurm_rc == 0, slurm_log[-6000:]

    # Every job went through SLURM, each exactly once, and completed.
    jobs = slurm_cluster.jobs_of(slurm_dir)
    assert sorted(j["rule"] for j in jobs) == sorted(GPU_RULES | CPU_RULES), jobs
    for job in jobs:
        assert job["JobState"] == "COMPLETED", job
        gpu = job["rule"] in GPU_RULES
        assert ("gpu" in job.get("TresPerJob", "")) == gpu, job
        assert not gpu or job["TresPerJob"] == "gres:gpu:1", job
        assert job["Partition"] == ("gpu" if gpu else "main"), job
        # The rule's own requests reached sbatch: mem_mb as --mem, threads as CPUs, runtime
        # as the time limit (minutes), exactly as Snakemake resolved them for the job.
        requested = _resolved_resources(slurm_log, job["rule"])
        minutes = _minutes_to_slurm(int(requested["runtime"]))
        want = (f"{requested['mem_mb']}M", requested.get("threads", "1"), minutes)
        got = (job["MinMemoryNode"], job["NumCPUs"], job["TimeLimit"])
        assert got == want, (job["rule"], requested)
        assert any((slurm_dir / ".snakemake" / "slurm_logs").rglob(f"{job['JobId']}.log")), job

    # Same results as the local run.
    for name in ("data/polarity.parquet", "embeddings/miniLM/polarity/index.parquet"):
        tables = [pd.read_parquet(d / "resources" / name) for d in (local_dir, slurm_dir)]
        pd.testing.assert_frame_equal(*tables)
    np.testing.assert_allclose(
        np.load(slurm_dir / TARGET), np.load(local_dir / TARGET), rtol=1e-5, atol=1e-6
    )
    manifest = "resources/raw/polarity/manifest.json"
    local, slurm = (json.loads((d / manifest).read_text()) for d in (local_dir, slurm_dir))
    assert {**local, "created": None} == {**slurm, "created": None}


@pytest.mark.slurm
@pytest.mark.slow
def test_failing_job_is_retried_per_profile_and_leaves_no_output(slurm_cluster, runs):
    retries = yaml.safe_load((PROFILE / "config.yaml").read_text())["retries"]
    assert retries >= 1, "the SLURM profile should retry failed jobs"
    workdir = runs.failing_dir
    rc, output = runs.results["failing"]

    assert rc != 0, "a workflow with a job that always fails must exit non-zero"
    assert "Error in rule broken" in output, output[-4000:]
    # The flaky job succeeded on its retry, with the larger memory request.
    assert (workdir / "out/flaky.txt").read_text().strip() == "mem=800", output[-4000:]
    # The broken job left nothing behind, not even its partial output.
    assert not (workdir / "out/broken.txt").exists()

    jobs = slurm_cluster.jobs_of(workdir)
    broken = [j for j in jobs if j["rule"] == "broken"]
    flaky = [j for j in jobs if j["rule"] == "flaky"]
    assert [j["JobState"] for j in broken] == ["FAILED"] * (retries + 1), broken
    states = [(j["JobState"], j["MinMemoryNode"]) for j in flaky]
    assert states == [("FAILED", "400M"), ("COMPLETED", "800M")], flaky
    assert all("gpu" not in j.get("TresPerJob", "") for j in jobs), (
        "CPU rules must not request a GPU"
    )
    # SLURM's log of a failed job is kept and holds the job's own error message.
    folder = workdir / ".snakemake" / "slurm_logs" / "rule_broken"
    logs = [next(folder.rglob(f"{j['JobId']}.log"), None) for j in broken]
    assert all(logs), f"SLURM logs of failed jobs missing: {logs}"
    assert "broken: fails on purpose" in logs[-1].read_text()


# --- the profiles themselves (no cluster needed) -------------------------------------------


def _profile(name: str) -> dict:
    return yaml.safe_load((ROOT / "profiles" / name / "config.yaml").read_text())


def test_profile_name_slurm_resolves_from_the_root_to_the_one_profile(monkeypatch):
    # `snakemake --profile slurm` looks for ./slurm (then ~/.config/snakemake, /etc/xdg/snakemake).
    from snakemake.cli import get_profile_dir

    link = ROOT / PROFILE_NAME
    assert link.is_symlink() and os.readlink(link) == "profiles/slurm", (
        "./slurm must be a relative link to profiles/slurm"
    )
    monkeypatch.chdir(ROOT)
    found = get_profile_dir(PROFILE_NAME)
    assert found is not None, "snakemake --profile slurm finds no profile from the repository root"
    assert found[1].resolve() == (PROFILE / "config.yaml").resolve()


def test_workflow_profile_does_not_shadow_the_slurm_profile():
    # Snakemake loads profiles/default on every run and lets it win key by key: a key in both
    # would silently drop the cluster's value (e.g. its default-resources with the partition).
    shared = set(_profile("default")) & set(_profile("slurm"))
    assert not shared, f"keys set in both profiles/default and profiles/slurm: {sorted(shared)}"


def test_slurm_profile_requests_gpus_only_through_gpu_rules():
    slurm = _profile("slurm")
    assert slurm["executor"] == "slurm"
    assert slurm["retries"] >= 1 and slurm["jobs"] >= 1 and slurm["latency-wait"] >= 5
    defaults = set(slurm["default-resources"])
    forbidden = set("gpu gpus gpu_model gres cpus_per_task cpus_per_gpu tasks_per_gpu".split())
    assert not defaults & forbidden, (
        f"default-resources would apply to every rule: {sorted(defaults & forbidden)}"
    )
    for key in ("mem_mb", "runtime"):  # a retry asks for more
        assert "attempt" in str(slurm["default-resources"][key]), key
    # A production cluster has accounting: sacct by default; the test overrides it to squeue.
    assert slurm["slurm-status-command"] == "sacct"


def test_slurm_profile_settings_exist_in_the_installed_plugin():
    from dataclasses import fields

    from snakemake_executor_plugin_slurm import ExecutorSettings

    known = {f.name for f in fields(ExecutorSettings)}
    text = (PROFILE / "config.yaml").read_text()
    # Commented-out settings too: uncommenting one must work.
    names = set(re.findall(r"^#?\s*slurm-([a-z0-9-]+):", text, re.MULTILINE))
    assert names, "no slurm-* settings found in the profile"
    unknown = {n for n in names if n.replace("-", "_") not in known}
    assert not unknown, f"not settings of snakemake-executor-plugin-slurm: {sorted(unknown)}"


@pytest.mark.slow
def test_slurm_profile_dry_run_requests_a_gpu_for_gpu_rules_only(tmp_path):
    """`snakemake --profile slurm -n` from the repository root on the tiny configuration: the
    profile is found, parses, the job graph builds, and exactly the rules that declare a gpu
    resource ask for one."""
    mirror = tiny_workflow.require_mirror()
    config = tiny_workflow.write_tiny_config(tmp_path / "config.yaml", mirror)
    workdir, profile = tmp_path / "work", ("--profile", PROFILE_NAME)
    result = tiny_workflow.run_snakemake(workdir, [config], mirror, *profile, "-n", cwd=ROOT)
    assert result.returncode == 0, result.stderr[-4000:]
    output = result.stdout + result.stderr
    jobs = re.findall(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", output, re.MULTILINE)
    assert jobs, output[-2000:]
    asking = {rule for rule, block in jobs if re.search(r"resources: .*\bgpu=", block)}
    declaring = rules_declaring_gpu()
    planned = {rule for rule, _ in jobs}
    assert asking == declaring & planned, (
        f"GPU requests {sorted(asking)}; rules declaring gpu {sorted(declaring & planned)}"
    )
    assert asking, "the tiny configuration should include at least one GPU rule"


def rules_declaring_gpu() -> set[str]:
    gpu = re.compile(r"^\s+gpu\s*=", re.M)
    return {rule for rule, (_, body) in rule_bodies().items() if gpu.search(body)}


def test_commented_gpu_overrides_parse_and_name_every_gpu_rule():
    """The profile's commented `set-resources` block, once uncommented, is valid and covers
    exactly the rules that request a GPU (so it stays in step with rules/*.smk)."""
    lines = (PROFILE / "config.yaml").read_text().splitlines()
    start = lines.index("# set-resources:")
    block = []
    for line in lines[start:]:
        if not line.startswith("#"):
            break
        block.append(line[2:] if line.startswith("# ") else line[1:])
    overrides = yaml.safe_load("\n".join(block))["set-resources"]
    assert set(overrides) == rules_declaring_gpu()
    for rule, resources in overrides.items():
        assert resources.get("slurm_partition"), rule
        assert set(resources) <= {"slurm_partition", "gpu_model", "constraint"}, rule


def test_two_runs_on_one_machine_take_turns_for_the_cluster(tmp_path):
    """The cluster lock: a second holder waits, and gives up with the first holder named."""
    lock = tmp_path / "cluster.lock"
    with _machine_lock(lock, 5):
        with pytest.raises(pytest.fail.Exception, match=r"holds .*cluster.lock \('pid \d+ since"):
            with _machine_lock(lock, 1):
                pass
    with _machine_lock(lock, 1):  # released: the next run takes it at once
        assert (tmp_path / "cluster.lock.holder").read_text().startswith(f"pid {os.getpid()}")
