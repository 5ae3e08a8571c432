"""Each job's libraries use the threads Snakemake gives it, and idle threads sleep
(isotropy.compute; the policy's measurements are in docs/measurements.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import tiny_workflow

sys.path.insert(0, str(tiny_workflow.ROOT / "benchmarks"))
import contention

from isotropy import compute


def test_jobs_get_the_chosen_wait_policy_unless_the_user_chose_one():
    assert contention.THREAD_POLICIES["passive"] == (compute.CHOSEN_POLICY, None)  # measured
    for own in ({"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "1000"}):
        assert compute.apply_job_environment(dict(own)) == {}
    environ = {"PATH": "/bin"}
    assert compute.apply_job_environment(environ) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert environ == {"PATH": "/bin", "OMP_WAIT_POLICY": "PASSIVE"}
    assert compute.apply_job_environment(environ) == {}  # a second call changes nothing


def test_use_threads_holds_torch_and_blas_to_the_count():
    """In a fresh process started with more threads than the job has (as a library's default
    would be), use_threads brings torch's pool and every loaded BLAS pool down to it."""
    code = textwrap.dedent(
        """
        import json, numpy, torch
        from threadpoolctl import threadpool_info
        from isotropy.compute import use_threads
        torch.set_num_threads(4)
        use_threads(1)
        print(json.dumps({"torch": torch.get_num_threads(),
                          "pools": [p["num_threads"] for p in threadpool_info()]}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["torch"] == 1
    assert seen["pools"] and set(seen["pools"]) == {1}


def test_use_threads_refuses_no_threads():
    with pytest.raises(ValueError, match="at least 1"):
        compute.use_threads(0)


@pytest.mark.slow
def test_a_script_job_gets_its_rules_threads_and_the_wait_policy(tmp_path):
    """A rule asking for 8 threads on --cores 2 runs with 2 in torch, OpenMP and BLAS, and with
    the wait policy that onstart (as rules/common.smk calls it) put in the environment."""
    tiny_workflow.write_started_snakefile(
        tmp_path,
        """
        rule job:
            output: "seen.json"
            threads: 8
            script: "job.py"
        """,
    )
    (tmp_path / "job.py").write_text(
        textwrap.dedent(
            """
            import json, os
            import torch
            from threadpoolctl import threadpool_info
            from isotropy.logs import configure_from_snakemake

            configure_from_snakemake(snakemake)
            seen = {
                "threads": snakemake.threads,
                "torch": torch.get_num_threads(),
                "omp": os.environ.get("OMP_NUM_THREADS"),
                "policy": os.environ.get("OMP_WAIT_POLICY"),
                "pools": [p["num_threads"] for p in threadpool_info()],
            }
            with open(snakemake.output[0], "w") as handle:
                json.dump(seen, handle)
            """
        )
    )
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    environ.pop("GOMP_SPINCOUNT", None)
    done = tiny_workflow.snakemake_in(tmp_path, "--cores", "2", env=environ, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["threads"] == 2 and seen["torch"] == 2 and seen["omp"] == "2"
    assert seen["policy"] == "PASSIVE"
    assert seen["pools"] and set(seen["pools"]) == {2}
    assert "OMP_WAIT_POLICY=PASSIVE" in done.stderr


def _fake_proc(root, autogroup="1", tasks=()):
    """A /proc with the autogroup switch, this process's group (1) and ``tasks``: (pid, group
    or None for a kernel thread, state)."""
    (root / "sys/kernel").mkdir(parents=True)
    (root / "sys/kernel/sched_autogroup_enabled").write_text(autogroup + "\n")
    (root / "self").mkdir()
    (root / "self/autogroup").write_text("/autogroup-1 nice 0\n")
    for pid, group, state in tasks:
        task = root / str(pid) / "task" / str(pid)
        task.mkdir(parents=True)
        (task / "stat").write_text(f"{pid} (some (odd) name) {state} 1 2 3\n")
        (root / str(pid) / "autogroup").write_text(
            "" if group is None else f"/autogroup-{group} nice 0\n"
        )
    return root


def test_busy_sessions_counts_other_sessions_and_this_sessions_threads(tmp_path):
    proc = _fake_proc(
        tmp_path,
        tasks=[
            (100, 2, "R"),
            (101, 2, "R"),
            (102, 3, "S"),
            (103, 4, "R"),
            (104, 1, "R"),
            (105, None, "R"),
        ],
    )
    seen = compute.busy_sessions(samples=2, interval=0, proc=proc)
    # Groups 2 and 4 have a runnable thread (2's two threads count once: the kernel shares
    # between sessions); 3 sleeps; 104 is this session's; 105 is a kernel thread.
    assert seen == compute.Sessions(others=2.0, own_threads=1.0)
    assert compute.busy_sessions(proc=_fake_proc(tmp_path / "off", autogroup="0")) is None
    assert compute.busy_sessions(proc=tmp_path / "no-proc") is None


def test_a_process_that_exits_mid_scan_is_skipped(tmp_path, monkeypatch):
    """/proc changes while it is read: a process listed, then gone before its tasks are, is
    skipped (Path.glob raised FileNotFoundError there and stopped the estimate)."""
    proc = _fake_proc(tmp_path, tasks=[(100, 2, "R"), (101, 3, "R")])
    scandir = os.scandir

    def vanishing(path="."):
        if os.fspath(path).endswith("101/task"):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", vanishing)
    seen = compute.busy_sessions(samples=1, interval=0, proc=proc)
    assert seen == compute.Sessions(others=1.0, own_threads=0.0)


# A CPU-bound program that forks FORKS times (its children share its session), then says the
# pids of its processes and spins.
SPINNER = """
import os
pids = [os.getpid()]
for _ in range({forks}):
    child = os.fork()
    if child == 0:
        pids = []
        break
    pids.append(child)
if pids:
    print(*pids, flush=True)
while True:
    pass
"""

SLEEPER = "import os, time; print(os.getpid(), flush=True); time.sleep(600)"


def _start(code: str, own_session: bool) -> tuple[subprocess.Popen, list[int]]:
    """A program in a session of its own (as from another terminal) or in this one; its pids once
    it runs."""
    program = subprocess.Popen(
        [sys.executable, "-c", code],
        start_new_session=own_session,
        stdout=subprocess.PIPE,
        text=True,
    )
    return program, [int(pid) for pid in program.stdout.readline().split()]


def _proc_view(root, pids):
    """A /proc holding only ``pids`` (links to their real entries), this process as ``self`` and
    the real autogroup switch: busy_sessions reads the kernel's own files for these programs and
    sees nothing else that runs on the machine."""
    (root / "sys/kernel").mkdir(parents=True)
    (root / "sys/kernel/sched_autogroup_enabled").symlink_to(
        "/proc/sys/kernel/sched_autogroup_enabled"
    )
    (root / "self").symlink_to(f"/proc/{os.getpid()}")
    for pid in pids:
        (root / str(pid)).symlink_to(f"/proc/{pid}")
    return root


@pytest.mark.skipif(
    compute.busy_sessions(samples=1, interval=0) is None, reason="autogroup is off here"
)
def test_busy_sessions_sees_programs_started_in_their_own_sessions(tmp_path):
    """Programs the test starts, read from the kernel's own /proc entries and nothing else (other
    programs on the machine come and go; issue 48): two busy sessions, one of them two busy
    processes (a session counts once), a sleeping session (not counted) and a busy program of
    this session (counted as its thread)."""
    programs = [
        _start(SPINNER.format(forks=0), own_session=True),
        _start(SPINNER.format(forks=1), own_session=True),
        _start(SLEEPER, own_session=True),
        _start(SPINNER.format(forks=0), own_session=False),
    ]
    try:
        pids = [pid for _, started in programs for pid in started]
        assert len(pids) == 5, programs
        seen = compute.busy_sessions(samples=10, interval=0.02, proc=_proc_view(tmp_path, pids))
        # The whole machine: the two busy sessions are there, whatever else runs beside them.
        machine = compute.busy_sessions(samples=10, interval=0.02)
    finally:
        for program, started in programs:
            for pid in started[1:]:  # the forked children
                os.kill(pid, 9)
            program.kill()
            program.wait()
    # A spinning process is always runnable ("R", running or waiting for a core), however busy
    # the machine: every sample sees it.
    assert 1.8 <= seen.others <= 2.0 and 0.8 <= seen.own_threads <= 1.0, seen
    assert machine.others >= 1.8, machine
