"""The effective configuration of config.yaml, of it with each overlay of config/, and the jobs
(rule, output, parameters as Snakemake records them) of a dry run of `all`, `main_study` and
`preview_study` stay as tests/golden/effective_config.json records them (a sha256 of each canonical
dump): moving a default between config.yaml and the models changes nothing a run makes.
The dry runs take minutes on the data mirror: `python tests/test_effective_config.py` compares
all, and with --write records them."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests/golden/effective_config.json"
OVERLAYS = [None, *(p.name for p in sorted((ROOT / "config").glob("*.yaml")))]
OVERLAYS.remove("sources.yaml")
# Records every job's rule, output and parameters (as Snakemake compares them) of a dry run.
WRAPPER = """import runpy, sys, json, atexit
from snakemake.rules import Rule
from snakemake.persistence import PersistenceBase
jobs, expand = set(), Rule.expand_params
def record(self, wildcards, input, output, job, omit_callable=False):
    params, plain = expand(self, wildcards, input, output, job, omit_callable)
    seen = sorted(map(str, (PersistenceBase._serialize_param_builtin(None, p) for p in plain)))
    jobs.add(json.dumps([self.name, sorted(map(str, output)), seen]))
    return params, plain
Rule.expand_params = record
atexit.register(lambda: print("JOBS=" + json.dumps(sorted(jobs))))
sys.argv = ["snakemake", *sys.argv[1:]]
runpy.run_module("snakemake", run_name="__main__", alter_sys=True)
"""


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def effective(overlay: str | None) -> dict:
    files = [ROOT / "config.yaml", *([ROOT / "config" / overlay] if overlay else [])]
    return load_config(files)


def dry_run_jobs(target: str) -> list:
    import subprocess

    command = [sys.executable, "-c", WRAPPER, "-n", "--quiet", "all", "--cores", "1", target]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    out = out.replace(os.environ.get("ISOTROPY_MIRROR") or str(ROOT), "<mirror>")
    return json.loads(out.split("JOBS=")[-1])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_effective_configuration_is_todays(overlay):
    assert digest(effective(overlay)) == json.loads(GOLDEN.read_text())["configs"][str(overlay)]


if __name__ == "__main__":
    golden = {"configs": {str(o): digest(effective(o)) for o in OVERLAYS}, "jobs": {}}
    golden["jobs"] = {t: digest(dry_run_jobs(t)) for t in ("all", "main_study", "preview_study")}
    if sys.argv[1:] == ["--write"]:
        GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")
    old = json.loads(GOLDEN.read_text())
    sys.exit("\n".join(f"{k}: changed" for k in old if old[k] != golden[k]) or None)
