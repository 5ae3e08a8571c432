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


def test_use_threads_holds_torch_and_blas_to_the_count_and_refuses_none():
    """In a fresh process started with more threads than the job has (as a library's default
    would be), use_threads brings torch's pool and every loaded BLAS pool down to it; 0 is
    refused."""
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
