"""config.yaml's effective configuration, alone and under each overlay (nested keys in order:
Snakemake compares a parameter's repr), and the jobs (rule, output, parameters) of the dry runs
of all, main_study and preview_study stay as the golden's sha256 say: a default moved between
config.yaml and the models changes no run. Dry runs are slow tests; `--write` re-records."""

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest
from tiny_workflow import WRAPPER, require_mirror, snakemake

from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests/golden/effective_config.json"
OVERLAYS = [None, *(p.name for p in sorted((ROOT / "config").glob("*.yaml")))]
OVERLAYS += [f"../tests/config/{p.name}" for p in sorted((ROOT / "tests/config").glob("*.yaml"))]
OVERLAYS.remove("sources.yaml")
TARGETS = ["all", "main_study", "preview_study"]


def digest(value, sort_keys: bool = True) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=sort_keys).encode()).hexdigest()


def config_digest(overlay: str | None) -> str:
    files = [ROOT / "config.yaml", *[ROOT / "config" / o for o in [overlay] if o]]
    config = load_config(files).config
    return digest({key: config[key] for key in sorted(config)}, sort_keys=False)


def jobs_digests(target: str, *planted: str) -> dict[str, str]:
    """Each rule's sha256 of its jobs in a dry run of ``target`` on the mirror, the mirror's
    folder read <mirror>, a copied table's content sha256 (a data edit, no setting) <sha256>."""
    mirror, args = require_mirror(), ("-n", target, "--quiet", "all", *planted)
    run = snakemake(*args, mirror=mirror, wrapper=WRAPPER, cwd=ROOT, check=True)
    out = run.stdout.replace(str(mirror), "<mirror>").split("JOBS=")[-1]
    jobs = [json.loads(re.sub(r"\"'[0-9a-f]{64}'\"", '"<sha256>"', j)) for j in json.loads(out)]
    return {rule: digest([job for job in jobs if job[0] == rule]) for rule, *_ in jobs}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_effective_configuration_is_todays(overlay):
    assert config_digest(overlay) == json.loads(GOLDEN.read_text())["configs"][str(overlay)]


# The planted case: device auto -> cpu changes the two rules that read it, and no other.
PLANTED = ("preview_study", ["--config", "device=cpu"], ["embed_sentences", "optimize_embeddings"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "planted", "changed"), [*((t, [], []) for t in TARGETS), PLANTED]
)
def test_the_dry_run_jobs_are_todays(target, planted, changed):
    old, new = json.loads(GOLDEN.read_text())["jobs"][target], jobs_digests(target, *planted)
    got = sorted(rule for rule in old | new if old.get(rule) != new.get(rule))
    assert got == changed, f"the jobs of {got} changed (if meant, --write re-records them)"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    golden = {"configs": {str(o): config_digest(o) for o in OVERLAYS}}
    golden["jobs"] = {t: jobs_digests(t) for t in TARGETS}
    GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")
