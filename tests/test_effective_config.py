"""config.yaml's effective configuration, alone and under each overlay, and the jobs of dry runs
(all, main_study, preview_study: rule, output, parameters) stay as the golden's sha256 say: a
default moved between config.yaml and the models changes no run. The dry runs take minutes:
`python tests/test_effective_config.py` compares all (--write records them)."""

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
import tiny_workflow

from isotropy.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests/golden/effective_config.json"
OVERLAYS = [None, *(p.name for p in sorted((ROOT / "config").glob("*.yaml")))]
OVERLAYS += [f"../tests/config/{p.name}" for p in sorted((ROOT / "tests/config").glob("*.yaml"))]
OVERLAYS.remove("sources.yaml")


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def config_digest(overlay: str | None) -> str:
    files = [ROOT / "config.yaml", *[ROOT / "config" / o for o in [overlay] if o]]
    return digest(load_config(files))


def jobs_digest(target: str) -> str:
    args = ("-n", target, "--quiet", "all")
    run = tiny_workflow.snakemake(*args, wrapper=tiny_workflow.WRAPPER, cwd=ROOT, check=True)
    out = run.stdout.replace(os.environ.get("ISOTROPY_MIRROR") or str(ROOT), "<mirror>")
    return digest(json.loads(out.split("JOBS=")[-1]))


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_effective_configuration_is_todays(overlay):
    assert config_digest(overlay) == json.loads(GOLDEN.read_text())["configs"][str(overlay)]


if __name__ == "__main__":
    golden = {"configs": {str(o): config_digest(o) for o in OVERLAYS}}
    golden["jobs"] = {t: jobs_digest(t) for t in ("all", "main_study", "preview_study")}
    if sys.argv[1:] == ["--write"]:
        GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")
    old = json.loads(GOLDEN.read_text())
    sys.exit("\n".join(f"{k}: changed" for k in old if old[k] != golden[k]) or None)
