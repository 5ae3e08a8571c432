"""Where a job computes: its torch device, its libraries' thread counts, and how their idle
threads wait (an idle libgomp thread spins: docs/measurements.md). Plain Python at import.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import sys
from collections.abc import MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# The wait policy measured best of benchmarks/contention.py's candidates ("passive").
CHOSEN_POLICY = {"OMP_WAIT_POLICY": "PASSIVE"}
# The variables a policy may set; a user who sets one keeps their own choice for all of them.
WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def apply_job_environment(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set :data:`CHOSEN_POLICY` in ``environ`` (which jobs inherit) unless the user chose a wait
    policy; returns what was set."""
    if any(name in environ for name in WAIT_VARIABLES):
        return {}
    added = dict(CHOSEN_POLICY)
    environ.update(added)
    return added


def use_threads(threads: int) -> None:
    """Hold torch's and every loaded BLAS/OpenMP pool to ``threads`` (libraries loaded later
    read the counts Snakemake put in the job's environment)."""
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)


def cuda_problem(device: str) -> str | None:
    """Why config ``device: cuda`` cannot be used here (None if it can, or it is auto or cpu);
    imports torch only for CUDA, so a dry run on CPU stays light."""
    if device != "cuda":
        return None
    import torch

    if torch.cuda.is_available():
        return None
    return (
        f"device: 'cuda' asks for a CUDA GPU, but this machine has none visible to torch "
        f"{torch.__version__}; set device: auto (CUDA when present, else the CPU) or cpu"
    )


def resolve_device(name: str = "auto") -> torch.device:
    """The torch device of a config value; ``cuda`` without a GPU is an error, never a fallback."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if (problem := cuda_problem(name)) is not None:
        raise RuntimeError(problem)
    return torch.device(name)


def planned_device(name: str) -> str:
    """The device type config value ``name`` gives the jobs, without importing torch: under
    ``auto``, cuda where nvidia-smi runs and CUDA_VISIBLE_DEVICES hides no GPU."""
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES", "0").strip() in ("", "-1")
    found = "cuda" if shutil.which("nvidia-smi") and not hidden else "cpu"
    return found if name == "auto" else name


def describe_device(device: torch.device) -> str:
    """Human-readable device name for provenance records."""
    if device.type == "cuda":
        import torch

        return f"cuda:{torch.cuda.get_device_name(device)}"
    return f"cpu:{platform.processor() or platform.machine()}"


def mixed_precision_dtype(device: torch.device, enabled: bool) -> torch.dtype | None:
    """The dtype mixed precision computes in: on CUDA bfloat16 where supported, else float16;
    None elsewhere or when off."""
    if device.type != "cuda" or not enabled:
        return None
    import torch

    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def autocast(device: torch.device, enabled: bool):
    """Mixed precision on CUDA in :func:`mixed_precision_dtype`; a no-op elsewhere."""
    dtype = mixed_precision_dtype(device, enabled)
    if dtype is None:
        return contextlib.nullcontext()
    import torch

    return torch.autocast("cuda", dtype=dtype)
