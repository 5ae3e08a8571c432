"""Choose the torch device: CUDA when present, the CPU otherwise."""

from __future__ import annotations

import contextlib

import torch


def resolve_device(name: str = "auto") -> torch.device:
    """Map a config value (``auto``, ``cpu``, ``cuda``) to a torch device.

    ``cuda`` without a GPU is an error rather than a silent fallback: the user asked for it.
    """
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            "device 'cuda' was requested but no CUDA GPU is visible; set device: auto or cpu"
        )
    if name not in {"cpu", "cuda"} and not name.startswith("cuda:"):
        raise ValueError(f"unknown device {name!r}; expected auto, cpu or cuda")
    return torch.device(name)


def describe_device(device: torch.device) -> str:
    """Human-readable device name for provenance records."""
    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    import platform

    return f"cpu:{platform.processor() or platform.machine()}"


def autocast(device: torch.device, enabled: bool):
    """Mixed precision on CUDA (bfloat16 where supported, else float16); a no-op elsewhere."""
    if device.type == "cuda" and enabled:
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast("cuda", dtype=dtype)
    return contextlib.nullcontext()
