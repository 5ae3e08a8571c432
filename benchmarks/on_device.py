"""What the runners on a lent device share (istar_on_device.py, rajaee_cls_on_device.py,
main_on_device.py): the pack that travels there (float16 weights, data files, a plan with
checksums, pydantic for the device's Python), its check and unpacking on the device, the
device's name and versions in the record, the pacing by a deadline, and the command line's
``pack`` and ``run``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

from isotropy.io import sha256_file, write_json

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = "model.safetensors"

# The device's Python has torch and transformers but not pydantic, which the configuration models
# need: the versions installed here, as wheels for its Python, unpacked into the pack's pylib/
# (on the device: PYTHONPATH=src:PACK/pylib).
DEVICE_PYTHON = "3.12"
DEVICE_PACKAGES = (
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_inspection",
    "typing_extensions",
)


def bundle_packages(dest: Path, python: str = DEVICE_PYTHON) -> list[str]:
    """Download :data:`DEVICE_PACKAGES` at the versions installed here, as wheels for ``python``
    on x86-64 Linux, and unpack them into ``dest / "pylib"``; the pins it bundled."""
    import importlib.metadata
    import tempfile
    import zipfile

    pins = [f"{name}=={importlib.metadata.version(name)}" for name in DEVICE_PACKAGES]
    with tempfile.TemporaryDirectory() as wheels:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--only-binary=:all:", "--python-version", python, "--dest", wheels]
        command += ["--platform", "manylinux_2_17_x86_64", *pins]
        subprocess.run(command, check=True)
        for wheel in sorted(Path(wheels).glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(dest / "pylib")
    return pins


def convert_weights(source: Path, dest: Path, dtype: torch.dtype) -> None:
    """Copy a model folder's top-level files to ``dest`` with every floating tensor of its
    ``model.safetensors`` cast to ``dtype`` (float16 to travel: half the bytes; float32 back)."""
    from safetensors.torch import load_file, save_file

    dest.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.is_file() and path.name != WEIGHTS and path.suffix in (".json", ".txt"):
            shutil.copyfile(path, dest / path.name)
    tensors = load_file(source / WEIGHTS)
    cast = {k: v.to(dtype) if v.is_floating_point() else v for k, v in tensors.items()}
    overflow = [k for k, v in cast.items() if v.is_floating_point() and not v.isfinite().all()]
    if overflow:
        raise ValueError(f"{overflow[:3]} overflow in {dtype}: these weights cannot travel so")
    save_file(cast, dest / WEIGHTS, metadata={"format": "pt"})


def pack_model(dest: Path, model: Path, data_files: list[Path]) -> None:
    """A fresh ``dest``: the ``model`` folder as float16 weights in ``model/``, the data files
    in ``data/``."""
    shutil.rmtree(dest, ignore_errors=True)
    convert_weights(model, dest / "model", torch.float16)
    (dest / "data").mkdir(parents=True)
    for file in data_files:
        shutil.copyfile(file, dest / "data" / file.name)


def write_plan(dest: Path, plan: dict, what: str) -> dict:
    """``plan`` with the code's commit and the checksum of every file packed in ``dest``, written
    to ``dest/plan.json`` (:func:`load_plan` checks them); prints the pack's size."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    files = [p for p in sorted(dest.rglob("*")) if p.is_file()]
    plan = {
        **plan,
        "code_commit": commit,
        "files_sha256": {str(p.relative_to(dest)): sha256_file(p) for p in files},
    }
    write_json(dest / "plan.json", plan)
    size = sum(p.stat().st_size for p in files)
    print(f"packed {what} into {dest}: {size / 2**20:.1f} MiB")
    return plan


def load_plan(folder: Path, name: str = "plan.json") -> dict:
    """The plan ``name`` (plan.json), every packed file checked against its checksum."""
    plan = json.loads((folder / name).read_text())
    for name, digest in plan["files_sha256"].items():
        if sha256_file(folder / name) != digest:
            raise ValueError(f"{folder / name} is not the file packed (checksum differs)")
    return plan


def unpack_model(pack: Path, work: Path) -> Path:
    """The packed model as float32 weights in ``work/model-float32``, its folder."""
    folder = work / "model-float32"
    convert_weights(pack / "model", folder, torch.float32)
    return folder


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def versions(device: torch.device) -> dict:
    import transformers

    found = {"torch": torch.__version__, "transformers": transformers.__version__}
    if device.type == "cuda":
        found["cuda"] = str(torch.version.cuda)
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        try:
            found["driver"] = subprocess.run(query, capture_output=True, text=True).stdout.strip()
        except OSError:
            pass
    return found


def record_header(plan: dict, device: torch.device, command: str) -> dict:
    """What every record says of its call: the code's commit, the device and its versions, the
    date and the command."""
    return {
        "code_commit": plan["code_commit"],
        "device": device_name(device),
        "versions": versions(device),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": command,
    }


def starts_in_time(name: str, seconds: float, deadline_at: float) -> bool:
    """Whether a run expected to take ``seconds`` ends before ``deadline_at`` (epoch seconds);
    when not, says that ``name`` is not started."""
    if time.time() + seconds <= deadline_at:
        return True
    print(f"{name}: not started (the deadline would pass)", flush=True)
    return False


def command_line(description: str, pack: Path, what: str):
    """(parser, its subcommands, ``pack``, ``run``): ``pack --to --mirror`` packs ``what`` here,
    ``run`` (:func:`run_options`) runs on the device."""
    parser = argparse.ArgumentParser(description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help=f"here: pack {what}")
    packing.add_argument("--to", type=Path, default=pack)
    mirror = Path(os.environ.get("ISOTROPY_MIRROR", "."))
    packing.add_argument("--mirror", type=Path, default=mirror)
    running = commands.add_parser("run", help="on the device: the estimate, then the runs")
    run_options(running, pack)
    return parser, commands, packing, running


def run_options(command: argparse.ArgumentParser, pack: Path) -> None:
    """``--pack``, ``--work``, ``--out`` and ``--device``: a command that runs on the device."""
    command.add_argument("--pack", type=Path, default=pack)
    command.add_argument("--work", type=Path, default=None, help="runs' folders (PACK/work)")
    command.add_argument("--out", type=Path, required=True)
    command.add_argument("--device", default="auto")


def dispatch(parser: argparse.ArgumentParser, actions: dict) -> None:
    """Parse the command line and run its command's action; ``pack`` then bundles the device's
    packages into the pack (:func:`bundle_packages`)."""
    args = parser.parse_args()
    actions[args.command](args)
    if args.command == "pack":
        bundle_packages(args.to)
