"""Raw sources: fetched into ``resources/raw/<source>/`` from their original URLs or a mirror.

Modules, in the order one download passes through them:

- :mod:`~isotropy.sources.plan`: what the workflow asks at parse time (the download rule's
  outputs and params, and whether every needed source is in the mirror);
- :mod:`~isotropy.sources.fetch`: :func:`fetch_source`, one source from a mirror, the hub or its
  URLs, laid out and swapped into its folder with a manifest; and reading a fetched source's
  files (its manifest, a word2vec file);
- :mod:`~isotropy.sources.mirror`: the mirror folder, its MANIFEST.tsv, and the availability check
  that parse time and run time share;
- :mod:`~isotropy.sources.transfer`: one file over HTTP(S) (streaming, retries that resume
  with Range, Retry-After, one deadline, TLS that must close cleanly, a Content-Encoding undone
  as a stream within a limit) or copied; the sha256 / git-blob / size pins; the environment
  switches, defaults and errors the whole data path shares;
- :mod:`~isotropy.sources.layouts`: per-kind raw layouts (``files`` copies a data set's files as
  they are, so a plain new source needs no layout code), archive members read within extraction
  limits and checked against their pins;
- :mod:`~isotropy.sources.lock`: the sources lock, where a download that no published pin checks
  is recorded on first use and compared ever after (``make relock SOURCE=<name>`` accepts a change);
- :mod:`~isotropy.sources.crosscopy`: a fetched file compared with a second public copy, recorded.
"""

from isotropy.sources.crosscopy import compare_copy, hub_file_sha256
from isotropy.sources.fetch import (
    fetch_source,
    is_word2vec_binary,
    load_word_vectors,
    read_source_manifest,
    source_files,
    source_trust,
    word_vectors_file,
)
from isotropy.sources.layouts import (
    LAYOUTS,
    POLARITY_FILES,
    ExtractionLimits,
    Fetched,
    MemberPins,
    build_mrpc_train,
    decode_text,
    source_kind,
)
from isotropy.sources.lock import (
    LOCK_ENV,
    RELOCK_ENV,
    TRUST_LOCK,
    TRUST_PUBLISHED,
    LockMismatchError,
    lock_path,
    locked_entry,
    read_lock,
    record_downloads,
    relocked_after,
)
from isotropy.sources.mirror import (
    MirrorPin,
    mirror_path_problem,
    read_mirror_manifest,
    resolve_mirror,
)
from isotropy.sources.plan import (
    available_glue_tasks,
    check_sources_available,
    missing_mirror_files,
    source_dir,
    source_outputs,
    source_params,
    url_pins,
)
from isotropy.sources.transfer import (
    ALLOW_UNVERIFIED_ENV,
    DOWNLOAD_DEFAULTS,
    HUB_FILE,
    MIRROR_ENV,
    ArchiveError,
    ChecksumError,
    DownloadError,
    UnverifiedFileError,
    download_file,
    git_blob_id,
    md5_file,
    url_file_name,
    url_problem,
)

__all__ = [
    "ALLOW_UNVERIFIED_ENV",
    "DOWNLOAD_DEFAULTS",
    "HUB_FILE",
    "LAYOUTS",
    "POLARITY_FILES",
    "LOCK_ENV",
    "MIRROR_ENV",
    "RELOCK_ENV",
    "TRUST_LOCK",
    "TRUST_PUBLISHED",
    "ArchiveError",
    "ChecksumError",
    "DownloadError",
    "ExtractionLimits",
    "Fetched",
    "LockMismatchError",
    "MemberPins",
    "MirrorPin",
    "UnverifiedFileError",
    "available_glue_tasks",
    "build_mrpc_train",
    "check_sources_available",
    "compare_copy",
    "decode_text",
    "download_file",
    "fetch_source",
    "git_blob_id",
    "hub_file_sha256",
    "is_word2vec_binary",
    "load_word_vectors",
    "lock_path",
    "locked_entry",
    "md5_file",
    "mirror_path_problem",
    "missing_mirror_files",
    "read_lock",
    "read_mirror_manifest",
    "read_source_manifest",
    "record_downloads",
    "relocked_after",
    "resolve_mirror",
    "source_dir",
    "source_files",
    "source_kind",
    "source_outputs",
    "source_params",
    "source_trust",
    "url_file_name",
    "url_pins",
    "url_problem",
    "word_vectors_file",
]
