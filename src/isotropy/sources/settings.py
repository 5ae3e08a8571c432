"""The names and defaults every part of the data path shares: environment switches, limits, errors."""

from __future__ import annotations

MIRROR_ENV = "ISOTROPY_MIRROR"
ALLOW_UNVERIFIED_ENV = "ISOTROPY_ALLOW_UNVERIFIED_MIRROR"
# Defaults of config `downloads`: far above the largest real archive (NLPL 222.zip unpacks to a few GB).
DOWNLOAD_DEFAULTS = {
    "allow_unverified_mirror": False,
    "max_extracted_bytes": 32 * 1024**3,
    "max_archive_members": 100_000,
    "max_download_seconds": 6 * 3600,  # one file, all attempts: a trickling server is abandoned
}
HUB_FILE = "data.parquet"  # a hub data set's split, as downloaded


class DownloadError(RuntimeError):
    """A download failed for good (client error, or retries exhausted)."""


class ChecksumError(ValueError):
    """A file's sha256 differs from the pinned value."""


class UnverifiedFileError(ChecksumError):
    """A mirror file that no sha256 (MANIFEST.tsv or config pin) can check."""


class ArchiveError(ValueError):
    """An archive that is unsafe to unpack: a member escaping its folder, a link, or a bomb."""
