"""Route a step's logging and uncaught exceptions to its Snakemake log file."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(log_file: str | Path | None = None, level: int = logging.INFO) -> None:
    """Send log records (and warnings) to ``log_file`` and stderr.

    Uncaught exceptions are logged with their traceback before the process exits, so the
    rule's log explains every failure.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w"))
    logging.basicConfig(level=level, format=LOG_FORMAT, handlers=handlers, force=True)
    logging.captureWarnings(True)
    warnings.simplefilter("default")

    def log_uncaught(exc_type, exc, tb):  # noqa: ANN001 - sys.excepthook signature
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        logging.getLogger("isotropy").error("%s: %s", exc_type.__name__, exc, exc_info=(exc_type, exc, tb))

    sys.excepthook = log_uncaught


def configure_from_snakemake(snakemake: Any) -> None:
    """Configure logging from a Snakemake ``script:`` object (first log file, if any)."""
    log_files = list(getattr(snakemake, "log", []) or [])
    configure_logging(log_files[0] if log_files else None)
