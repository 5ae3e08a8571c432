"""The contention mode of the benchmarks (benchmarks/contention.py): its neighbours start and
stop, its options are checked, and the repeat it reports is the least disturbed one."""

from __future__ import annotations

import contextlib
import os

import psutil
import pytest
from tiny_workflow import load_script

contention = load_script("benchmarks/contention.py")


@pytest.mark.parametrize(
    ("arrangement", "sessions", "fails"),
    [("this-session", 1, True), ("pairs", 2, False), ("own-sessions", 4, True)],
)
def test_busy_processes_run_during_the_block_and_stop_after(arrangement, sessions, fails):
    """However the block ends; in other sessions, as other users' jobs would be (the neighbours of
    benchmarks/estimate_at_load.py: Linux shares the cores between sessions)."""
    with contextlib.suppress(RuntimeError), contention.busy_processes(4, arrangement):
        spinners = [
            p
            for p in psutil.Process().children(recursive=True)
            if p.cmdline()[-2:] == ["-c", "while True: pass"]  # not the shells leading them
        ]
        found = {os.getsid(p.pid) for p in spinners}
        assert len(spinners) == 4 and all(p.is_running() for p in spinners)
        assert len(found) == sessions and (os.getsid(0) in found) == (arrangement == "this-session")
        if fails:
            raise RuntimeError("the worker failed")
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in spinners)
    with pytest.raises(ValueError, match="unknown arrangement"), contention.busy_processes(1, "x"):
        pass


def test_policies_are_checked_and_the_best_repeat_is_reported():
    assert contention.policy_names("passive,default") == ["passive", "default"]
    with pytest.raises(SystemExit, match="unknown thread policies"):
        contention.policy_names("passive,sometimes")
    runs = [
        contention.Measurement("passive", "idle", units=10, wall_s=w, cpu_s=c, load=0.0)
        for w, c in ((5.0, 9.0), (4.0, 8.5), (6.0, 8.0))
    ]
    best = contention.best(runs)
    assert best.wall_per_unit == 0.4 and best.cpu_per_unit == 0.85
