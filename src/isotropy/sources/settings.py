"""The names and defaults every part of the data path shares: environment switches, limits, errors."""

from __future__ import annotations

from isotropy.defaults import schema_default

MIRROR_ENV = "ISOTROPY_MIRROR"
ALLOW_UNVERIFIED_ENV = "ISOTROPY_ALLOW_UNVERIFIED_MIRROR"
# Defaults of config `downloads`, from the schema: far above the largest real archive (NLPL
# 222.zip unpacks to a few GB); a trickling server is abandoned after 6 hours for one file.
DOWNLOAD_DEFAULTS = {
    key: schema_default("downloads", key)
    for key in (
        "allow_unverified_mirror",
        "max_extracted_bytes",
        "max_archive_members",
        "max_download_seconds",
    )
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
