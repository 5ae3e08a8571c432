"""Route a step's logging and uncaught exceptions to its Snakemake log file."""

from __future__ import annotations

import logging
import sys
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_from_snakemake(snakemake: Any) -> None:
    """Log records, warnings and uncaught exceptions of a ``script:`` job to its log file and
    stderr; thread pools held to its ``threads``; its outputs' old records removed."""
    log_file = next(iter(getattr(snakemake, "log", None) or []), None)
    terminal = logging.StreamHandler(sys.stderr)
    handlers: list[logging.Handler] = [terminal]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w"))
        # The traceback in the log only: Snakemake shows a failed job's log too.
        terminal.setFormatter(TracebackInLog(LOG_FORMAT, log_file))
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, handlers=handlers, force=True)
    logging.captureWarnings(True)
    warnings.simplefilter("default")

    def log_uncaught(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        logging.getLogger("isotropy").error(
            "%s: %s", exc_type.__name__, exc, exc_info=(exc_type, exc, tb)
        )

    sys.excepthook = log_uncaught
    if (threads := getattr(snakemake, "threads", None)) is not None:
        from isotropy.compute import use_threads

        use_threads(int(threads))
    from isotropy.provenance import remove_records

    remove_records(getattr(snakemake, "output", []) or [])


class TracebackInLog(logging.Formatter):
    """A record's message without its traceback, pointing at the log file that holds it."""

    def __init__(self, fmt: str, log_file: str | Path) -> None:
        super().__init__(fmt)
        self.log_file = log_file

    def format(self, record: logging.LogRecord) -> str:
        if not (record.exc_info or record.exc_text):
            return super().format(record)
        bare = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None})
        return f"{super().format(bare)} (traceback in {self.log_file})"


class ProgressLog:
    """A long loop's done/total, elapsed and time left in the step's log, at most every
    ``every`` seconds and at the end."""

    def __init__(self, total: int, what: str, *, every: float = 30.0, clock=None) -> None:
        self.total, self.what, self.every = total, what, every
        self.done = 0
        self.share: float | None = None  # share of the work done, when it is not done/total
        self._clock = clock or time.monotonic
        self._start = self._last = self._clock()
        self._log = logging.getLogger("isotropy.progress")

    def update(self, count: int, share: float | None = None) -> None:
        """``count`` more items done; ``share`` overrides done/total when a loop may stop early."""
        self.done += count
        self.share = share
        now = self._clock()
        if now - self._last >= self.every or self.done >= self.total or (share or 0) >= 1:
            self._last = now
            self._log.info("%s", self.line(now - self._start))

    def line(self, elapsed: float) -> str:
        """'what: done/total (p%), elapsed …, about … left' (the rate so far, extrapolated)."""
        counted = f"{self.done:,}/{self.total:,}"
        if self.share is None:
            share = min(self.done / self.total if self.total else 1.0, 1.0)
            done = f"{counted} ({100 * share:.1f}%)"
        else:
            share = min(self.share, 1.0)
            done = f"{counted}, {100 * share:.1f}% of the work"
        left = elapsed * (1 - share) / share if share > 0 else float("nan")
        return f"{self.what}: {done}, elapsed {duration(elapsed)}, about {duration(left)} left"


class TimeLeft(logging.Handler):
    """On Snakemake's logger: after each finished job but the last, the time left at the rate so
    far, the jobs weighed by ``costs`` (job id: estimated seconds) where given."""

    def __init__(self, clock=time.monotonic, costs: Mapping[Any, float] | None = None) -> None:
        super().__init__()
        self.clock, self.start = clock, clock()
        self.costs, self.finished = dict(costs or {}), set[Any]()

    def emit(self, record: logging.LogRecord) -> None:
        done, total = getattr(record, "done", 0), getattr(record, "total", 0)
        event = getattr(getattr(record, "event", None), "name", "")
        if event == "JOB_FINISHED":
            self.finished.add(getattr(record, "job_id", None))
        if event == "PROGRESS" and 0 < done < total:
            jobs = ProgressLog(total, "jobs", clock=self.clock)
            jobs.done = done
            weighed = ""
            if planned := sum(self.costs.values()):
                jobs.share = sum(self.costs.get(job, 0.0) for job in self.finished) / planned
                weighed = ", jobs weighed by their estimated cost"
            line = jobs.line(self.clock() - self.start)
            print(f"{line} at the rate so far{weighed}", file=sys.stderr, flush=True)


def duration(seconds: float) -> str:
    """A time span as every message of the project writes it; ``?`` for NaN (no rate yet)."""
    if seconds != seconds:
        return "?"
    if seconds < 60:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 600:
        return f"{seconds / 60:.1f} min"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"
